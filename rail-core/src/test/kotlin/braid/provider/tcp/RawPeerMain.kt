package braid.provider.tcp

import braid.it.Rendezvous
import braid.it.childMain
import braid.testsupport.Deadline
import java.nio.file.Paths
import java.time.Duration

/**
 * A [RawTcpPeer] in a process of its own, so it can sit on another host ([braid.it.NetnsHosts]), listening on the
 * interface `BRAID_TCP_IFACE` names. Usage: `RawPeerMain MODE DIR NAME TARGET`: connects to TARGET and completes the
 * handshake, sends one valid EAGER message ([VALID_TAG], "valid"), publishes its address as NAME (only now, so TARGET
 * never opens a connection of its own to it), sends heartbeats until the mark [GO] appears in DIR, then misbehaves by
 * MODE:
 * - `garbage`: 64 bytes that are no frame; prints OK once TARGET closed the connection.
 * - `truncated`: the header and 10 payload bytes of a 1000-byte EAGER frame ([CUT_TAG]), then closes its side; prints
 *   OK. Exits 0 on success, 1 with a message otherwise.
 */
internal object RawPeerMain {
    /** Tags no [braid.it.Traffic] stream uses. */
    const val VALID_TAG = (99L shl 32) or 5
    const val CUT_TAG = (99L shl 32) or 6
    const val GO = "go"

    @JvmStatic
    fun main(args: Array<String>): Unit = childMain {
        val (mode, dirName, name, target) = args
        val dir = Paths.get(dirName)
        RawTcpPeer(System.getenv("BRAID_JOB_KEY") ?: "", TcpProvider.interfaces().first().bind.address).use { raw ->
            val welcome = raw.connect(Rendezvous.lookup(dir, target))
            check(welcome == TcpFrameDescriptor.WELCOME) { "handshake answered with frame type $welcome, not WELCOME" }
            raw.send(raw.eager(VALID_TAG, "valid".toByteArray()))
            Rendezvous.publish(dir, name, raw.address)
            val deadline = Deadline.of("the '$GO' mark in $dir", Duration.ofSeconds(120))
            var beat = 0L
            while (!Rendezvous.marked(dir, GO)) {
                deadline.check()
                if (System.nanoTime() - beat > 500_000_000L) { // a live peer, however long TARGET takes
                    raw.send(raw.frame(TcpFrameDescriptor.HEARTBEAT, 0))
                    beat = System.nanoTime()
                }
                Thread.sleep(2)
            }
            when (mode) {
                "garbage" -> {
                    raw.send(ByteArray(64) { 0x42 })
                    check(raw.closedByPeer()) { "the connection stayed open after garbage" }
                }
                "truncated" -> {
                    raw.send(
                        raw.eager(CUT_TAG, ByteArray(1000) { it.toByte() })
                            .copyOf(TcpFrameDescriptor.HEADER_LENGTH + 10)
                    )
                    raw.shutdown()
                }
                else -> error("unknown mode $mode")
            }
        }
        println("OK $mode")
    }
}
