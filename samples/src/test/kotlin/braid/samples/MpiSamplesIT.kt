package braid.samples

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.io.File

/**
 * The Java samples written against package `mpi` (Open MPI's Java API over Braid) each run under `braid run -n 4` and
 * print what they computed.
 */
class MpiSamplesIT :
    FunSpec({
        val java = File(System.getProperty("java.home"), "bin/java").path
        val classpath = System.getProperty("java.class.path")

        fun sample(name: String, vararg expected: String) =
            test("the $name sample runs under braid run -n 4") {
                val r = braid("run", "-n", "4", java, "-Xmx192m", "-cp", classpath, "braid.samples.mpi.$name")
                withClue(r.out + r.err) {
                    r.status shouldBe 0
                    for (e in expected) r.out shouldContain e
                }
            }

        sample("Hello", "Hello from rank 0 of 4", "Hello from rank 3 of 4")
        sample("Ring", "ring of 4: the token came back as 6")
        sample("Pi", "pi is about 3.14159265")
        sample("Halo", "halo exchange on a 2x2 periodic grid: every halo cell is right")
        sample("StructExchange", "gathered 8 of 8 particles intact")
    })
