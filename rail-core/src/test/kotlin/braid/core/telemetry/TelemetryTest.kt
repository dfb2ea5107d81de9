package braid.core.telemetry

import braid.core.CoreParams
import braid.core.Rail
import braid.core.TestFabric
import braid.core.buf
import braid.testsupport.Deadline
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.longs.shouldBeGreaterThanOrEqual
import io.kotest.matchers.nulls.shouldBeNull
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import java.lang.management.ManagementFactory
import java.nio.file.Files
import java.time.Duration
import javax.management.ObjectName
import jdk.jfr.Recording
import jdk.jfr.consumer.RecordingFile
import org.agrona.concurrent.UnsafeBuffer

/**
 * Endpoints and their rails appear as MBeans under io.braid on the platform server, their values move as messages flow,
 * and they go when the endpoint closes; the JFR events are recorded and read back from a recording file.
 */
class TelemetryTest :
    FunSpec({
        val server = ManagementFactory.getPlatformMBeanServer()

        test("an enabled endpoint and its rail are MBeans whose counters move with the traffic, gone after close") {
            TestFabric(2).use { f ->
                val (a, b) = f.nodes
                fun published(n: TestFabric.Node): ObjectName {
                    Deadline.await("the endpoint's MBean", Duration.ofSeconds(30)) {
                        Telemetry.objectName(n.ep) != null
                    }
                    return Telemetry.objectName(n.ep)!!
                }
                val name = published(a)
                name.domain shouldBe "io.braid"
                server.isRegistered(name) shouldBe true
                server.getAttribute(name, "Provider") shouldBe "shm"
                val rails =
                    server.queryNames(ObjectName("io.braid:type=Rail,endpoint=${name.getKeyProperty("id")},*"), null)
                rails.size shouldBe 1
                val rail = rails.single()
                val sentBefore = server.getAttribute(name, "MessagesSent") as Long
                repeat(3) { i ->
                    b.ep.tryTrecv(UnsafeBuffer(ByteArray(16)), 0, 16, f.addrs[1][0], 7, 0, "r$i") shouldBe 0
                    a.ep.tryTsend(buf("hello"), 0, 5, f.addrs[0][1], 7, "s$i") shouldBe 0
                }
                a.await(3, others = listOf(b))
                b.await(3, others = listOf(a))
                server.getAttribute(name, "MessagesSent") shouldBe sentBefore + 3
                (server.getAttribute(name, "BytesSent") as Long) shouldBeGreaterThanOrEqual 15L
                server.getAttribute(rail, "MessagesSent") shouldBe sentBefore + 3
                val bName = published(b)
                server.getAttribute(bName, "MessagesReceived") shouldBe 3L
                // An unexpected message is held until a receive takes it.
                a.ep.tryTsend(buf("early"), 0, 5, f.addrs[0][1], 9, "early") shouldBe 0
                a.await(1, others = listOf(b))
                repeat(100) { b.domain.progress() }
                server.getAttribute(bName, "UnexpectedHeld") shouldBe 1
                server.getAttribute(bName, "DeferredWorkQueued") shouldBe 0

                a.ep.close()
                Deadline.await("the closed endpoint's MBean to go", Duration.ofSeconds(30)) {
                    !server.isRegistered(name)
                }
                server.isRegistered(rail) shouldBe false
                Telemetry.objectName(a.ep).shouldBeNull()
            }
        }

        test("with telemetry off in the settings, no MBean is registered") {
            // Names, not a count: an earlier test's endpoints leave asynchronously too, and may go meanwhile.
            val before = server.queryNames(ObjectName("io.braid:type=Endpoint,*"), null).toSet()
            TestFabric(2, settings = TestFabric.SETTINGS.with(CoreParams.TELEMETRY, false)).use { f ->
                // Publishing is asynchronous: an endpoint with telemetry on, opened after these, marks when it is done.
                TestFabric(1).use { marker ->
                    Deadline.await("a marker endpoint's MBean", Duration.ofSeconds(30)) {
                        Telemetry.objectName(marker.nodes[0].ep) != null
                    }
                    Telemetry.objectName(f.nodes[0].ep).shouldBeNull()
                    Telemetry.objectName(f.nodes[1].ep).shouldBeNull()
                    server.queryNames(ObjectName("io.braid:type=Endpoint,*"), null) - before shouldBe
                        setOf(Telemetry.objectName(marker.nodes[0].ep))
                }
            }
        }

        fun published(n: TestFabric.Node): ObjectName {
            Deadline.await("the endpoint's MBean", Duration.ofSeconds(30)) { Telemetry.objectName(n.ep) != null }
            return Telemetry.objectName(n.ep)!!
        }

        test("split copies over shm move the SplitCopies and chunk counters, as the channels count them") {
            TestFabric(2).use { f ->
                val (a, b) = f.nodes
                val name = published(b)
                val sender = published(a)
                server.getAttribute(name, "SplitCopies") shouldBe 0L
                val size = 4 shl 20
                val rx = UnsafeBuffer(java.nio.ByteBuffer.allocateDirect(size))
                val tx = UnsafeBuffer(java.nio.ByteBuffer.allocateDirect(size))
                repeat(2) { i ->
                    b.ep.tryTrecv(rx, 0, size, f.addrs[1][0], 3, 0, "r$i") shouldBe 0
                    a.ep.tryTsend(tx, 0, size, f.addrs[0][1], 3, "s$i") shouldBe 0
                    b.await(1, millis = 60_000, others = listOf(a))
                    a.await(1, millis = 60_000, others = listOf(b))
                }
                val described = b.ep.describe()
                val splits = Regex("split copies (\\d+)").findAll(described).sumOf { it.groupValues[1].toLong() }
                (splits > 0L) shouldBe true
                server.getAttribute(name, "SplitCopies") shouldBe splits
                val pulled = server.getAttribute(name, "SplitChunksPulled") as Long
                val pushed = server.getAttribute(sender, "SplitChunksPushed") as Long
                (pulled + pushed >= splits * 2) shouldBe true // every split is at least two chunks
            }
        }

        test("tcp's committed credit, a counter attached by another layer, and the link counters read through JMX") {
            TestFabric(2, Rail.TCP).use { f ->
                val (a, b) = f.nodes
                val name = published(b)
                b.ep.tryTrecv(UnsafeBuffer(ByteArray(16)), 0, 16, f.addrs[1][0], 7, 0, "r") shouldBe 0
                a.ep.tryTsend(buf("hello"), 0, 5, f.addrs[0][1], 7, "s") shouldBe 0
                b.await(1, others = listOf(a))
                a.await(1, others = listOf(b))
                (server.getAttribute(name, "CreditCommitted") as Long) shouldBeGreaterThanOrEqual 1L
                // The collectives' offload pairing attaches its call count this way.
                val calls = java.util.concurrent.atomic.AtomicLong()
                val owner = Any()
                Telemetry.addCounter(b.ep, Telemetry.OFFLOAD_CALLS, owner) { calls.get() }
                server.getAttribute(name, "OffloadCalls") shouldBe 0L
                calls.addAndGet(5)
                server.getAttribute(name, "OffloadCalls") shouldBe 5L
                Telemetry.removeCounters(b.ep, owner)
                server.getAttribute(name, "OffloadCalls") shouldBe 0L
                // No rail failed over or re-sent anything here.
                server.getAttribute(name, "Failovers") shouldBe 0L
                server.getAttribute(name, "Retransmissions") shouldBe 0L
            }
        }

        test("a wait that idles past the threshold and a dead peer are recorded as JFR events") {
            val file = Files.createTempFile("braid-telemetry", ".jfr")
            try {
                Recording().use { recording ->
                    recording.enable("io.braid.SlowWait").withThreshold(Duration.ZERO)
                    recording.enable("io.braid.PeerDown")
                    recording.start()
                    TestFabric(2).use { f ->
                        val (me, peer) = f.nodes
                        // A wait that finds nothing to do idles until its deadline.
                        me.domain.driveUntil(System.nanoTime() + 20_000_000L) { false }
                        me.ep.tryTrecv(UnsafeBuffer(ByteArray(8)), 0, 8, f.addrs[0][1], 5, 0, "directed") shouldBe 0
                        repeat(100) { me.domain.progress() }
                        peer.ep.close()
                        me.await(1, millis = 10_000)
                    }
                    recording.stop()
                    recording.dump(file)
                }
                val events = RecordingFile.readAllEvents(file)
                val names = events.map { it.eventType.name }
                names shouldContain "io.braid.SlowWait"
                names shouldContain "io.braid.PeerDown"
                events.first { it.eventType.name == "io.braid.PeerDown" }.getString("reason").shouldNotBeNull()
            } finally {
                Files.deleteIfExists(file)
            }
        }
    })
