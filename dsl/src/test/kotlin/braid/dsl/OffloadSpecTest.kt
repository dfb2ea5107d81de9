package braid.dsl

import braid.collectives.CollectiveGroup
import braid.collectives.CollectiveOp
import braid.collectives.Collectives
import braid.collectives.Datatype
import braid.collectives.ReduceOp
import braid.collectives.offload.ShmOffload
import braid.dsl.TopologyFiles.Format
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.nulls.shouldBeNull
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.ByteBuffer
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import org.agrona.concurrent.UnsafeBuffer

/**
 * The `offload {}` pairing: the DSL block, the same in JSON and HOCON files, its rules, and what opening a paired link
 * does.
 */
class OffloadSpecTest :
    FunSpec({
        fun spec(block: TopologyScope.() -> Unit) = topology {
            environment = emptyMap()
            block()
        }

        val paired = spec {
            link("shm+tcp:lo")
            offload {
                link = "shm+tcp:lo"
                operations("allreduce", "barrier")
                slotBytes = 64 * 1024
            }
        }

        test("the offload block pairs a provider with a link by name, and JSON and HOCON files say the same") {
            paired.offloads shouldBe
                listOf(OffloadSpec("shm+tcp:lo", "shm", listOf("allreduce", "barrier"), 65536, 2, true))
            paired.offloadFor("shm+tcp:lo").shouldNotBeNull().toOffload().operations shouldBe
                setOf(CollectiveOp.ALLREDUCE, CollectiveOp.BARRIER)
            for (format in Format.entries) TopologyFiles.parse(TopologyFiles.encode(paired, format), format) shouldBe
                paired
            TopologyFiles.parse(
                """
                |links = ["shm+tcp:lo"]
                |offloads = [ { link = "shm+tcp:lo", operations = [allreduce, barrier], slotBytes = "64 KiB" } ]
                """
                    .trimMargin(),
                Format.HOCON,
            ) shouldBe paired
            TopologyFiles.parse(
                """{"links": ["shm+tcp:lo"], "offloads": [{"link": "shm+tcp:lo", "operations": ["allreduce", "barrier"], "slotBytes": "64k"}]}""",
                Format.JSON,
            ) shouldBe paired
            spec {
                    link("tcp:lo")
                    offload {}
                }
                .offloads
                .single()
                .link shouldBe "tcp:lo" // the only link
            paired.offloadFor("shm+tcp:lo")!!.describe() shouldContain
                "paired with link 'shm+tcp:lo': allreduce, barrier, slot 64 KiB"
        }

        test("a pairing naming no such link, an operation it does not implement or a bad slot is refused at its path") {
            val problems =
                shouldThrow<SpecException> {
                        spec {
                            link("shm+tcp:lo")
                            offload {
                                link = "nope"
                                operations("allreduce", "scan")
                                slotBytes = 8
                                minMembers = 1
                            }
                        }
                    }
                    .problems
                    .associateBy { it.path }
            problems.keys shouldBe
                setOf(
                    "offloads[0].link",
                    "offloads[0].operations[1]",
                    "offloads[0].slotBytes",
                    "offloads[0].minMembers",
                )
            problems.getValue("offloads[0].link").message shouldContain "link 'nope', which the topology does not have"
            problems.getValue("offloads[0].operations[1]").hint shouldContain
                "barrier, broadcast, reduce, allreduce, allgather"
            shouldThrow<SpecException> {
                    spec {
                        links("shm+tcp:lo|tcp:lo")
                        offload {}
                    }
                }
                .problems
                .single()
                .message shouldContain "names no link"
            val file =
                shouldThrow<ConfigFileException> {
                    TopologyFiles.parse(
                        "links = [\"shm+tcp:lo\"]\noffloads = [\n  { link = \"shm+tcp:lo\", operations = [gather] }\n]\n",
                        Format.HOCON,
                        "t.conf",
                    )
                }
            file.message!! shouldContain "t.conf"
            file.message!! shouldContain
                "offloads[0].operations[0]: offload operation 'gather' is not one it implements"
        }

        test(
            "groups joined on a link opened from a spec with an offload pairing use it; an unpaired link's groups do not"
        ) {
            val a = Topology.open(paired)
            val b = Topology.open(paired)
            try {
                val groups = joinBoth(a, b)
                for (g in groups) (g.offload.shouldNotBeNull().provider as ShmOffload).slotBytes shouldBe 65536
                val sums =
                    onBoth(groups) { g ->
                        val send = UnsafeBuffer(ByteBuffer.allocateDirect(8)).apply { putLong(0, g.rank + 10L) }
                        val recv = UnsafeBuffer(ByteBuffer.allocateDirect(8))
                        g.startAllreduce(send, 0, recv, 0, 1, Datatype.INT64, ReduceOp.SUM).waitFor(20_000)
                        g.startBarrier().waitFor(20_000)
                        recv.getLong(0)
                    }
                sums shouldBe listOf(21L, 21L)
                for (g in groups) g.offload!!.offloadCalls shouldBe 2
            } finally {
                a.close()
                b.close()
            }
            val c = Topology.open(spec { link("shm+tcp:lo") })
            val d = Topology.open(spec { link("shm+tcp:lo") })
            try {
                joinBoth(c, d).forEach { it.offload.shouldBeNull() }
            } finally {
                c.close()
                d.close()
            }
        }
    }) {
    private companion object {
        fun <T> onBoth(groups: List<CollectiveGroup>, body: (CollectiveGroup) -> T): List<T> {
            val pool = Executors.newFixedThreadPool(groups.size)
            try {
                return groups.map { g -> pool.submit<T> { body(g) } }.map { it.get(60, TimeUnit.SECONDS) }
            } finally {
                pool.shutdownNow()
                check(pool.awaitTermination(10, TimeUnit.SECONDS)) { "rank threads still running" }
            }
        }

        /** Both links' endpoints join the group of both, each on its own thread (a join drives progress itself). */
        fun joinBoth(a: OpenLink, b: OpenLink): List<CollectiveGroup> {
            val links = listOf(a, b)
            val sets = links.map { l -> l.av.avSet(*links.map { l.av.insert(it.address) }.toLongArray()) }
            val pool = Executors.newFixedThreadPool(2)
            try {
                return listOf(0, 1)
                    .map { i -> pool.submit<CollectiveGroup> { Collectives.join(links[i].endpoint, sets[i], 30_000) } }
                    .map { it.get(60, TimeUnit.SECONDS) }
            } finally {
                pool.shutdownNow()
            }
        }
    }
}
