package braid.samples

import braid.testsupport.ChildProcess
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldMatch
import java.io.File
import java.net.InetAddress
import java.net.ServerSocket
import java.nio.file.Files
import java.time.Duration

/**
 * Real interop: `braid pingpong -p ofi:PROV` against Debian's own `fi_pingpong -p PROV -e rdm` (libfabric-bin), each as
 * client and as server, with data checks, over native tcp (rxm) and shm. Braid's side names its native domain in the
 * provider (`ofi:tcp:lo`); fi_pingpong gets `FI_TCP_IFACE=lo` in its own environment. Variables of the caller's
 * environment that steer either side (`FI_*`, `BRAID_*`) are left out of both.
 */
class OfiPingpongIT :
    FunSpec({
        val fiPingpong =
            listOf("/usr/bin/fi_pingpong", "/usr/local/bin/fi_pingpong").firstOrNull { File(it).canExecute() }
                ?: error("fi_pingpong is not installed; install libfabric-bin (.ci/run does)")

        fun steering(name: String) = name.startsWith("FI_") || name.startsWith("BRAID_")

        fun start(command: ChildProcess.Builder, dir: File, name: String, env: Map<String, String>): ChildProcess =
            command
                .name(name)
                .withoutEnv(::steering)
                .env(env)
                .output(File(dir, "$name.out"))
                .errorOutput(File(dir, "$name.err"))
                .start()

        /**
         * Waits until [server] listens on [port] (a LISTEN row in `/proc/net/tcp`): fi_pingpong's client connects once
         * and gives up when refused, so it may start only then.
         */
        fun awaitListening(server: ChildProcess, port: Int) {
            val hex = ":%04X".format(port)
            val deadline =
                braid.testsupport.Deadline.of("${server.name()} listening on port $port", Duration.ofSeconds(60))
            while (true) {
                val listening =
                    listOf("/proc/net/tcp", "/proc/net/tcp6").any { f ->
                        File(f)
                            .takeIf { it.exists() }
                            ?.readLines()
                            ?.drop(1)
                            ?.any { line ->
                                val cols = line.trim().split(Regex("\\s+"))
                                cols[1].endsWith(hex) && cols[3] == "0A"
                            } == true
                    }
                if (listening) return
                if (!server.isAlive)
                    error("${server.name()} exited before listening:\n${server.output()}\n${server.errorOutput()}")
                deadline.check()
                Thread.sleep(20)
            }
        }

        val row =
            Regex(
                """64      100     =100     12k     [ \d]{4}\d\.\d\ds[ \d]{6}\d\.\d\d[ \d]{7}\d\.\d\d[ \d]{7}\d\.\d\d"""
            )

        for ((native, braidName) in listOf("tcp" to "ofi:tcp:lo", "shm" to "ofi:shm")) {
            for (braidIsServer in listOf(false, true)) {
                val role = if (braidIsServer) "server" else "client"
                test("braid pingpong -p $braidName as $role against fi_pingpong -p $native -e rdm, data checked") {
                    val dir = Files.createTempDirectory("braid-ofi-pingpong").toFile()
                    val port = ServerSocket(0, 1, InetAddress.getLoopbackAddress()).use { it.localPort }
                    val common = listOf("-e", "rdm", "-I", "100", "-S", "64", "-c")
                    val braidArgs = listOf("pingpong", "-p", braidName) + common
                    val fiArgs = listOf(fiPingpong, "-p", native) + common
                    val fiEnv = mapOf("FI_TCP_IFACE" to "lo")
                    val server =
                        if (braidIsServer)
                            start(
                                ChildProcess.jvm(BraidCommand::class.java.name, braidArgs + listOf("-B", "$port")),
                                dir,
                                "braid-server",
                                emptyMap(),
                            )
                        else start(ChildProcess.command(fiArgs + listOf("-B", "$port")), dir, "fi-server", fiEnv)
                    var client: ChildProcess? = null
                    try {
                        if (braidIsServer) awaitListening(server, port)
                        client =
                            if (braidIsServer)
                                start(
                                    ChildProcess.command(fiArgs + listOf("-P", "$port", "127.0.0.1")),
                                    dir,
                                    "fi-client",
                                    fiEnv,
                                )
                            else
                                start(
                                    ChildProcess.jvm(
                                        BraidCommand::class.java.name,
                                        braidArgs + listOf("-P", "$port", "127.0.0.1"),
                                    ),
                                    dir,
                                    "braid-client",
                                    emptyMap(),
                                )
                        val clientStatus = client.awaitExit(Duration.ofSeconds(120))
                        val serverStatus = server.awaitExit(Duration.ofSeconds(60))
                        withClue(
                            "client:\n${client.output()}\n${client.errorOutput()}\nserver:\n${server.output()}\n${server.errorOutput()}"
                        ) {
                            clientStatus shouldBe 0
                            serverStatus shouldBe 0
                            for (side in listOf(client, server)) {
                                val lines = side.output().lines().filter { it.isNotBlank() && !it.startsWith("#") }
                                lines shouldHaveSize 2
                                lines[0] shouldBe PerfFormat.HEADER
                                lines[1] shouldMatch row
                            }
                        }
                    } finally {
                        client?.close()
                        server.close()
                    }
                }
            }
        }
    })
