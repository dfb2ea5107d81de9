package braid.provider.shm

import braid.core.Completion
import braid.core.CompletionError
import braid.core.Errno
import braid.core.FiAddr
import braid.core.Rail
import braid.core.TestFabric
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import org.agrona.concurrent.UnsafeBuffer

/**
 * The job key is checked by a same-host sender before it writes anything: a sender holding another key never gets an
 * `ok` for a message the receiver then refuses (it used to: the eager sends it wrote before the receiver looked at its
 * proof completed and were dropped). The multi-process form, with the receiver's refusal reported on its event queue,
 * is `JobKeyIT`.
 */
class ShmJobKeyTest :
    FunSpec({
        for (rail in listOf(Rail.SHM, Rail.LINK)) {
            test(
                "$rail: every one of 10 sends from a same-host peer with another job key ends in EACCES, and nothing is delivered"
            ) {
                for (keys in listOf(listOf("alpha", "beta"), listOf("", "beta"))) {
                    TestFabric(rail = rail, keys = keys, eagerSize = 256).use { f ->
                        val (a, b) = f.nodes
                        val dest = f.addrs[0][1]
                        repeat(10) {
                            b.ep.tryTrecv(
                                UnsafeBuffer(ByteArray(8192)),
                                0,
                                8192,
                                FiAddr.UNSPEC,
                                0,
                                -1L,
                                "rx-$it",
                            ) shouldBe 0
                        }
                        var refusedAtOnce = 0
                        var posted = 0
                        for (i in 0 until 10) {
                            // Eager (16 B) and rendezvous (5000 B, over the eager size) sends alike.
                            val len = if (i % 3 == 2) 5000 else 16
                            var rc = a.ep.tryTsend(UnsafeBuffer(ByteArray(len)), 0, len, dest, 1, "send-$i")
                            while (rc == -Errno.EAGAIN) {
                                a.domain.progress()
                                b.domain.progress()
                                rc = a.ep.tryTsend(UnsafeBuffer(ByteArray(len)), 0, len, dest, 1, "send-$i")
                            }
                            when (rc) {
                                -Errno.EACCES -> refusedAtOnce++
                                0 -> posted++
                                else -> error("send $i returned ${Errno.name(-rc)}, expected 0 or EACCES")
                            }
                        }
                        val completions = if (posted == 0) emptyList() else a.await(posted, others = listOf(b))
                        withClue("keys $keys: $refusedAtOnce sends refused at once, completions $completions") {
                            completions.forEach { it.shouldBeInstanceOf<CompletionError>().err shouldBe Errno.EACCES }
                            refusedAtOnce + completions.size shouldBe 10
                        }
                        repeat(200) {
                            a.domain.progress()
                            b.domain.progress()
                        }
                        b.cq.read(Completion()) shouldBe -Errno.EAGAIN
                        b.ep.srx.postedCount shouldBe 10
                        b.ep.srx.unexpectedCount shouldBe 0
                    }
                }
            }
        }
    })
