package braid.collectives

import braid.collectives.offload.ShmOffload
import braid.core.Errno
import braid.core.FabricException
import braid.testsupport.Deadline
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.file.Files
import java.nio.file.Paths
import java.time.Duration

/**
 * [CollectiveGroup.close]: refused with EBUSY while a collective is in flight (libfabric's rule), then frees the
 * schedules and unmaps the offload segment, and refuses later collectives. In-process shm endpoints, one thread per
 * rank where ranks must run together.
 */
class GroupCloseTest :
    FunSpec({
        /**
         * How many mappings of offload segments this process holds (the segment files are unlinked once every rank
         * mapped them).
         */
        fun segmentMappings(): Int =
            Files.readAllLines(Paths.get("/proc/self/maps")).count { it.contains("braid-coll-") }

        test(
            "close with a collective in flight is refused with EBUSY naming it and changes nothing; once it ends the group closes and refuses later collectives"
        ) {
            collectiveFabric(2).use { f ->
                val groups = f.join()
                val send = Reference.buffer(8).apply { putLong(0, 5) }
                val recv0 = Reference.buffer(8)
                val recv1 = Reference.buffer(8)
                val first =
                    groups[0].startAllreduce(
                        send,
                        0,
                        recv0,
                        0,
                        1,
                        Datatype.INT64,
                        ReduceOp.SUM,
                    ) // rank 1 has not started: in flight
                groups[0].tryClose() shouldBe -Errno.EBUSY
                val busy = shouldThrow<FabricException> { groups[0].close() }
                busy.code shouldBe Errno.EBUSY
                busy.message!! shouldContain "allreduce"
                groups[0].isClosed shouldBe false
                val second = groups[1].startAllreduce(send, 0, recv1, 0, 1, Datatype.INT64, ReduceOp.SUM)
                val deadline = Deadline.of("both allreduces to end after the refused close", Duration.ofSeconds(30))
                while (!(first.test() and second.test())) deadline.check { "$first, $second" }
                recv0.getLong(0) shouldBe 10
                recv1.getLong(0) shouldBe 10
                for (g in groups) {
                    g.close()
                    g.isClosed shouldBe true
                    g.tryClose() shouldBe 0 // closing again is a no-op
                    val e = shouldThrow<FabricException> { g.startBarrier() }
                    e.code shouldBe Errno.EOPBADSTATE
                    e.message!! shouldContain "closed"
                    shouldThrow<FabricException> {
                            g.startAllreduce(send, 0, recv0, 0, 1, Datatype.INT64, ReduceOp.SUM)
                        }
                        .code shouldBe Errno.EOPBADSTATE
                }
                first.isDone shouldBe true // a request that ended before the close stays readable
                first.errorCode shouldBe 0
            }
        }

        test("a cancelled collective lets the group close: cancel, wait for the cancellation, then close") {
            collectiveFabric(2).use { f ->
                val g = f.join()[0]
                val buf = Reference.buffer(64)
                val req = g.startBroadcast(buf, 0, 8, Datatype.INT64, 1) // rank 1 never sends
                g.tryClose() shouldBe -Errno.EBUSY
                req.cancel() shouldBe true
                shouldThrow<FabricException> { req.waitFor(10_000) }.code shouldBe Errno.ECANCELED
                val deadline = Deadline.of("the cancelled broadcast's receive to be taken back", Duration.ofSeconds(10))
                while (g.tryClose() != 0) {
                    f.nodes[0].domain.progress()
                    deadline.check { "$req" }
                }
                g.isClosed shouldBe true
            }
        }

        test("closing every member's group unmaps its offload segment, and a group joined afterwards maps a new one") {
            collectiveFabric(3).use { f ->
                val before = segmentMappings()
                val groups = f.join(JoinOptions.DEFAULT.withOffload(ShmOffload.DEFAULT.withSlotBytes(4096)))
                onEveryRank(groups) { g ->
                    val b = Reference.buffer(8 * 1000).apply { if (g.rank == 0) putLong(8 * 999, 42) }
                    g.startBroadcast(b, 0, 1000, Datatype.INT64, 0).waitFor(30_000)
                    check(b.getLong(8 * 999) == 42L)
                }
                groups.forEach { it.offload.shouldNotBeNull().segmentPhases shouldBe 1 }
                segmentMappings() shouldBeGreaterThan before
                groups.forEach { it.close() }
                segmentMappings() shouldBe before
                groups.forEach { it.offload!!.failure shouldBe null }

                val again = f.join(JoinOptions.DEFAULT.withOffload(ShmOffload.DEFAULT))
                onEveryRank(again) { g -> g.startBarrier().waitFor(30_000) }
                segmentMappings() shouldBeGreaterThan before
                again.forEach { it.close() }
                segmentMappings() shouldBe before
            }
        }
    })
