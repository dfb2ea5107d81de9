package braid.it

import braid.testsupport.ChildProcess
import io.kotest.core.spec.style.FunSpec
import java.nio.file.Files
import java.nio.file.Path
import java.time.Duration

/** Separate JVM processes over real tcp sockets on 127.0.0.1. */
class TcpMultiProcessIT :
    FunSpec({
        val main = PeerMain::class.java.name

        fun tempDir(): Path = Files.createTempDirectory("braid-tcp-it")

        fun children(dir: Path, vararg specs: List<String>): List<ChildProcess> =
            specs.mapIndexed { i, args ->
                ChildProcess.jvm(main, listOf("tcp") + args).output(dir.resolve("child$i.log")).start()
            }

        test(
            "two processes exchange 20,000 tagged messages of 0 B..64 KiB and some of 1..4 MiB over tcp, each once, intact, in order"
        ) {
            val dir = tempDir()
            val kids =
                children(
                    dir,
                    listOf("recv", "$dir", "rx", "20000", "tx0"),
                    listOf("send", "$dir", "tx0", "rx", "0", "20000"),
                )
            try {
                ChildProcess.awaitAllOk(kids, Duration.ofSeconds(300))
            } finally {
                kids.forEach { it.close() }
            }
        }

        test(
            "two sender processes race for one any-source receiver over tcp: every message matched once, in order per sender"
        ) {
            val dir = tempDir()
            val kids =
                children(
                    dir,
                    listOf("recv", "$dir", "rx", "6000", "tx0", "tx1"),
                    listOf("send", "$dir", "tx0", "rx", "0", "6000"),
                    listOf("send", "$dir", "tx1", "rx", "1", "6000"),
                )
            try {
                ChildProcess.awaitAllOk(kids, Duration.ofSeconds(300))
            } finally {
                kids.forEach { it.close() }
            }
        }

        tcpPeerLossCases(::LocalHosts, listOf(Silence.SIGSTOP))
    })
