package braid.samples

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.net.InetAddress
import java.net.ServerSocket
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit

/**
 * `braid pingpong`'s output says above fi_pingpong's table which rail carried the traffic; the table itself stays
 * fi_pingpong's, character for character (PerfFormatTest).
 */
class PingpongHeaderTest :
    FunSpec({
        test("server and client in one JVM over shm: each prints '# rail: shm (shm)' above the table's header") {
            val port = ServerSocket(0, 1, InetAddress.getLoopbackAddress()).use { it.localPort }
            val common = arrayOf("pingpong", "-p", "shm", "-I", "50", "-S", "64")
            val server = CompletableFuture.supplyAsync { braid(*common, "-B", "$port", "--accept-timeout", "60") }
            val client = braid(*common, "-P", "$port", "127.0.0.1")
            val s = server.get(120, TimeUnit.SECONDS)
            for (r in listOf(client, s)) {
                withClue("status ${r.status}\nout:\n${r.out}\nerr:\n${r.err}") {
                    r.status shouldBe 0
                    val lines = r.out.lines().filter { it.isNotBlank() }
                    lines[0] shouldBe "# rail: shm (shm)"
                    lines[1] shouldBe PerfFormat.HEADER
                }
            }
        }
    })
