package braid.collectives.offload

import braid.collectives.CollectiveOffload
import braid.collectives.CollectiveOp
import braid.collectives.Collectives
import braid.collectives.Datatype
import braid.collectives.JoinOptions
import braid.collectives.Matrix
import braid.collectives.ReduceOp
import braid.collectives.Reference
import braid.collectives.collectiveFabric
import braid.collectives.join
import braid.collectives.onEveryRank
import braid.collectives.set
import braid.core.Errno
import braid.core.FabricException
import braid.core.shm.JobKeyProof
import braid.core.shm.ProcessIdentity
import braid.testsupport.SteadyAllocation
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.nulls.shouldBeNull
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.file.Files

/**
 * The offload provider in one JVM: several shm endpoints (one domain each, one thread per rank), all on this host, so
 * every group is a one-host group sharing one real segment file.
 */
class OffloadTest :
    FunSpec({
        // Every size through the segment (by default only calls up to maxBytes go there); large messages go through in
        // many pieces.
        val small = ShmOffload.DEFAULT.withSlotBytes(1024).withMaxBytes(Int.MAX_VALUE)

        test("queryCollective answers like fi_query_collective: 0 for what it carries, -ENOSYS for the rest") {
            val o = ShmOffload.DEFAULT
            o.queryCollective(CollectiveOp.BARRIER, null, null) shouldBe 0
            o.queryCollective(CollectiveOp.ALLREDUCE, Datatype.DOUBLE, ReduceOp.SUM) shouldBe 0
            o.queryCollective(CollectiveOp.REDUCE, Datatype.UINT8, ReduceOp.BXOR) shouldBe 0
            o.queryCollective(CollectiveOp.BROADCAST, Datatype.DOUBLE_INT, null) shouldBe 0
            o.queryCollective(CollectiveOp.ALLREDUCE, Datatype.DOUBLE_INT, ReduceOp.MINLOC) shouldBe -Errno.ENOSYS
            o.queryCollective(CollectiveOp.ALLREDUCE, Datatype.DOUBLE, ReduceOp.BAND) shouldBe -Errno.ENOSYS
            o.queryCollective(CollectiveOp.SCAN, Datatype.INT32, ReduceOp.SUM) shouldBe -Errno.ENOSYS
            o.queryCollective(CollectiveOp.ALLTOALL, Datatype.INT32, null) shouldBe -Errno.ENOSYS
            o.withOperations(setOf(CollectiveOp.BARRIER))
                .queryCollective(CollectiveOp.ALLREDUCE, Datatype.INT32, ReduceOp.SUM) shouldBe -Errno.ENOSYS
            shouldThrow<FabricException> { o.withOperations(setOf(CollectiveOp.SCAN)) }.code shouldBe Errno.ENOSYS
        }

        for (p in listOf(2, 3, 5)) {
            test(
                "every operation on $p in-process ranks with the offload paired matches the sequential reference, and the offload carried its calls"
            ) {
                collectiveFabric(p).use { f ->
                    val groups = f.join(JoinOptions.DEFAULT.withOffload(small))
                    groups.forEach { it.offload.shouldNotBeNull().isHierarchical shouldBe false }
                    onEveryRank(groups) { Matrix(it, quick = true).runAll() + Matrix(it).allreduceCases() }
                    for (g in groups) {
                        val o = g.offload!!
                        o.offloadCalls shouldBeGreaterThan 0
                        o.segmentPhases shouldBe o.offloadCalls
                        o.segmentBytes shouldBeGreaterThan
                            40_000 // the 5003-element allreduces went through the 1 KiB slots
                        o.mainCalls shouldBeGreaterThan 0 // scan, gather, alltoall, MINLOC… went to the main provider
                        o.failure.shouldBeNull()
                    }
                }
            }
        }

        test(
            "a one-host group's pairing answers queryCollective for the group: every implemented call, user reductions up to a slot, nothing else"
        ) {
            collectiveFabric(2).use { f ->
                val o = f.join(JoinOptions.DEFAULT.withOffload(small)).first().offload.shouldNotBeNull()
                o.queryCollective(CollectiveOp.REDUCE, Datatype.INT64, ReduceOp.SUM) shouldBe 0
                o.queryCollective(CollectiveOp.ALLGATHER, Datatype.INT16, null) shouldBe 0
                o.queryCollective(CollectiveOp.REDUCE, Datatype.INT64, Reference.MatMul, 4) shouldBe
                    0 // one phase reduces in rank order
                o.queryCollective(CollectiveOp.REDUCE, Datatype.INT64, Reference.MatMul, 1024) shouldBe
                    -Errno.ENOSYS // 8 KiB: longer than a 1 KiB slot
                o.queryCollective(CollectiveOp.ALLREDUCE, Datatype.INT_INT, ReduceOp.MAXLOC) shouldBe -Errno.ENOSYS
                o.queryCollective(CollectiveOp.GATHER, Datatype.INT32, null) shouldBe -Errno.ENOSYS
                o.isHierarchical shouldBe false
                o.hostCount shouldBe 1
            }
        }

        test(
            "a two-rank one-host group sends calls up to maxBytes through the segment and larger ones through the main provider, with the right results"
        ) {
            ShmOffload.DEFAULT.maxBytes shouldBe 65536 // see its KDoc; this test moves the line to 4 KiB
            collectiveFabric(2).use { f ->
                val groups = f.join(JoinOptions.DEFAULT.withOffload(ShmOffload.DEFAULT.withMaxBytes(4096)))
                onEveryRank(groups) { g ->
                    for (count in
                        intArrayOf(1, 512, 513, 20_000)) { // 8 B, 4 KiB (segment); 4 KiB + 8, 160 KB (main provider)
                        val send =
                            Reference.buffer(count * 8).apply {
                                for (i in 0 until count) putLong(i * 8, (g.rank + 1L) * i)
                            }
                        val recv = Reference.buffer(count * 8)
                        g.startAllreduce(send, 0, recv, 0, count, Datatype.INT64, ReduceOp.SUM).waitFor(20_000)
                        for (i in 0 until count) check(recv.getLong(i * 8) == 3L * i) {
                            "allreduce × $count element $i is ${recv.getLong(i * 8)}"
                        }
                        val b =
                            Reference.buffer(count * 8).apply {
                                if (g.rank == 1) for (i in 0 until count) putLong(i * 8, i + 5L)
                            }
                        g.startBroadcast(b, 0, count, Datatype.INT64, 1).waitFor(20_000)
                        for (i in 0 until count) check(b.getLong(i * 8) == i + 5L) {
                            "broadcast × $count element $i is ${b.getLong(i * 8)}"
                        }
                    }
                    g.startBarrier().waitFor(20_000)
                }
                for (g in groups) {
                    val o = g.offload!!
                    o.offloadCalls shouldBe 5 // 2 allreduces, 2 broadcasts and the barrier
                    o.mainCalls shouldBe 4
                    o.segmentBytes shouldBe
                        (8L + 4096) +
                            (if (g.rank == 1) 8L + 4096 else 0L) // only the root of a broadcast writes its vector
                }
            }
        }

        test(
            "blocking calls are carried on the caller's thread (inlineCalls), mixed on one group with started calls still in flight, in any order across ranks"
        ) {
            collectiveFabric(3).use { f ->
                val groups = f.join(JoinOptions.DEFAULT.withOffload(small))
                val blocking =
                    onEveryRank(groups) { g ->
                        var blockingCalls = 0L
                        val bcast = Reference.buffer(5003 * 8)
                        for (k in 0 until 300) {
                            // 8 B (half a slot) or 5003 elements (40 KB: many pieces through the 1 KiB slots).
                            val count = if (k % 10 == 9) 5003 else 1
                            val send =
                                Reference.buffer(count * 8).apply {
                                    for (i in 0 until count) putLong(i * 8, (g.rank + 1L) * (i + k))
                                }
                            val recv = Reference.buffer(count * 8)
                            val root = k % 3
                            if (g.rank == root) for (i in 0 until count) bcast.putLong(i * 8, k * 7L + i)
                            // Each rank picks its own form per call: blocking, started and waited, or started and left
                            // in flight across the next (blocking) call.
                            when ((k + g.rank) % 3) {
                                0 -> {
                                    g.allreduce(send, 0, recv, 0, count, Datatype.INT64, ReduceOp.SUM)
                                    g.broadcast(bcast, 0, count, Datatype.INT64, root)
                                    blockingCalls += 2
                                }
                                1 -> {
                                    g.startAllreduce(send, 0, recv, 0, count, Datatype.INT64, ReduceOp.SUM)
                                        .waitFor(20_000)
                                    g.startBroadcast(bcast, 0, count, Datatype.INT64, root).waitFor(20_000)
                                }
                                else -> {
                                    val first = g.startAllreduce(send, 0, recv, 0, count, Datatype.INT64, ReduceOp.SUM)
                                    g.broadcast(
                                        bcast,
                                        0,
                                        count,
                                        Datatype.INT64,
                                        root,
                                    ) // carries the allreduce's phase first: the segment keeps call order
                                    blockingCalls++
                                    first.waitFor(20_000)
                                }
                            }
                            for (i in 0 until count) {
                                check(recv.getLong(i * 8) == 6L * (i + k)) {
                                    "rank ${g.rank} call $k: allreduce element $i is ${recv.getLong(i * 8)}"
                                }
                                check(bcast.getLong(i * 8) == k * 7L + i) {
                                    "rank ${g.rank} call $k: broadcast element $i is ${bcast.getLong(i * 8)}"
                                }
                            }
                            val red = Reference.buffer(8)
                            g.reduce(
                                send,
                                0,
                                if (g.rank == root) red else null,
                                0,
                                1,
                                Datatype.INT64,
                                ReduceOp.MAX,
                                root,
                            )
                            blockingCalls++
                            if (g.rank == root)
                                check(red.getLong(0) == 3L * k) {
                                    "rank ${g.rank} call $k: reduce gave ${red.getLong(0)}"
                                }
                        }
                        g.barrier()
                        blockingCalls + 1
                    }
                for (g in groups) {
                    val o = g.offload!!
                    o.failure.shouldBeNull()
                    o.inlineCalls shouldBe blocking[g.rank] // every blocking call, and no started one, went inline
                    o.offloadCalls shouldBe 300L * 3 + 1
                    o.segmentPhases shouldBe o.offloadCalls
                    o.mainCalls shouldBe 0
                }
            }
        }

        test(
            "blocking calls carried on the caller's thread allocate nothing per call once warm (each rank's own thread counted)"
        ) {
            collectiveFabric(2).use { f ->
                val groups = f.join(JoinOptions.DEFAULT.withOffload(ShmOffload.DEFAULT))
                val n = 5_000
                val least =
                    onEveryRank(groups) { g ->
                        val send = Reference.buffer(64).apply { putLong(0, g.rank + 1L) }
                        val recv = Reference.buffer(64)
                        fun rounds(count: Int) =
                            repeat(count) {
                                g.allreduce(send, 0, recv, 0, 8, Datatype.INT64, ReduceOp.SUM)
                                g.broadcast(recv, 0, 1, Datatype.INT64, 1)
                                g.reduce(send, 0, recv, 0, 1, Datatype.INT64, ReduceOp.SUM, 0)
                                g.barrier()
                            }
                        rounds(2_000)
                        // Every rank runs the same windows (the calls must match); the least window judges, as
                        // SteadyAllocation.least does.
                        val windows = LongArray(3) { SteadyAllocation.of { rounds(n) } }
                        check(recv.getLong(0) == 3L) {
                            "rank ${g.rank}: the last allreduce, broadcast and reduce left ${recv.getLong(0)}"
                        }
                        windows.min()
                    }
                for (g in groups) g.offload!!.inlineCalls shouldBe 4L * (2_000 + 3 * n)
                least.forEachIndexed { rank, bytes ->
                    withClue("rank $rank allocated $bytes bytes over $n rounds of 4 blocking calls") {
                        (bytes / (4L * n)) shouldBe 0L
                    }
                }
            }
        }

        test(
            "a group made with groupOf pairs with the offload as a join's does, from the options or the domain's pairing, and its blocking calls go inline"
        ) {
            collectiveFabric(2).use { f ->
                // From the options.
                val byOptions =
                    f.nodes.map { Collectives.groupOf(it.ep, it.set, 4001, JoinOptions.DEFAULT.withOffload(small)) }
                // From the domain's pairing, as a layer that never sees JoinOptions (an MPI layer) gets it.
                for (n in f.nodes) CollectiveOffload.pairWith(n.ep.domain, small)
                val byDomain =
                    try {
                        f.nodes.map { Collectives.groupOf(it.ep, it.set, 4002) }
                    } finally {
                        for (n in f.nodes) CollectiveOffload.pairWith(n.ep.domain, null)
                    }
                for (groups in listOf(byOptions, byDomain)) {
                    groups.forEach { it.offload.shouldNotBeNull() }
                    onEveryRank(groups) { g ->
                        val send = Reference.buffer(8).apply { putLong(0, g.rank + 1L) }
                        val recv = Reference.buffer(8)
                        g.allreduce(send, 0, recv, 0, 1, Datatype.INT64, ReduceOp.SUM)
                        check(recv.getLong(0) == 3L) { "rank ${g.rank}: allreduce gave ${recv.getLong(0)}" }
                        g.barrier()
                    }
                    for (g in groups) {
                        g.offload!!.inlineCalls shouldBe 2
                        g.offload!!.mainCalls shouldBe 0
                    }
                    groups.forEach { it.close() }
                }
            }
        }

        test("a group with one member is too small for the offload and is left to the main provider") {
            collectiveFabric(2).use { f ->
                val g = f.join(JoinOptions.DEFAULT.withOffload(ShmOffload.DEFAULT), members = listOf(1)).single()
                g.offload.shouldBeNull()
                val send = Reference.buffer(8).apply { putLong(0, 41) }
                val recv = Reference.buffer(8)
                g.startAllreduce(send, 0, recv, 0, 1, Datatype.INT64, ReduceOp.SUM).waitFor(10_000)
                recv.getLong(0) shouldBe 41
                f.join(JoinOptions.DEFAULT.withOffload(ShmOffload.DEFAULT.withMinMembers(3))).forEach {
                    it.offload.shouldBeNull()
                }
            }
        }

        test(
            "an operation or datatype the offload does not take falls back to the main provider with the right result"
        ) {
            collectiveFabric(3).use { f ->
                val groups =
                    f.join(
                        JoinOptions.DEFAULT.withOffload(
                            ShmOffload.DEFAULT.withOperations(setOf(CollectiveOp.BARRIER, CollectiveOp.ALLREDUCE))
                        )
                    )
                onEveryRank(groups) { g ->
                    val send =
                        Reference.buffer(12).apply {
                            putDouble(0, 10.0 - g.rank)
                            putInt(8, g.rank)
                        }
                    val recv = Reference.buffer(12)
                    g.startAllreduce(send, 0, recv, 0, 1, Datatype.DOUBLE_INT, ReduceOp.MINLOC)
                        .waitFor(10_000) // MINLOC: not offloaded
                    check(recv.getDouble(0) == 8.0 && recv.getInt(8) == 2) {
                        "MINLOC gave ${recv.getDouble(0)} at ${recv.getInt(8)}"
                    }
                    val b = Reference.buffer(8).apply { if (g.rank == 0) putLong(0, 77) }
                    g.startBroadcast(b, 0, 1, Datatype.INT64, 0)
                        .waitFor(10_000) // broadcast: not in this offload's operations
                    check(b.getLong(0) == 77L)
                    g.startBarrier().waitFor(10_000)
                }
                for (g in groups) {
                    g.offload!!.mainCalls shouldBe 2
                    g.offload!!.offloadCalls shouldBe 1
                }
            }
        }

        test("ranks calling different collectives on one host fail with EINVAL naming the rank, not hang") {
            collectiveFabric(2).use { f ->
                val groups = f.join(JoinOptions.DEFAULT.withOffload(ShmOffload.DEFAULT.withMaxBytes(Int.MAX_VALUE)))
                val errors =
                    onEveryRank(groups) { g ->
                        val n = if (g.rank == 0) 4 else 8
                        val send = Reference.buffer(64)
                        val recv = Reference.buffer(64)
                        runCatching {
                                g.startAllreduce(send, 0, recv, 0, n, Datatype.INT64, ReduceOp.SUM).waitFor(20_000)
                            }
                            .exceptionOrNull()
                    }
                for (e in errors) {
                    val fe = (e as? FabricException).shouldNotBeNull()
                    fe.code shouldBe Errno.EINVAL
                    fe.message!! shouldContain "allreduce of"
                }
            }
        }

        test(
            "an shm address names the process that owns its endpoint, so the offload can probe it before it attaches"
        ) {
            collectiveFabric(2).use { f ->
                for (n in f.nodes) braid.provider.HostIds.processOf(n.ep.address) shouldBe ProcessIdentity.SELF
                braid.provider.HostIds.processOf(ByteArray(3)).shouldBeNull()
            }
        }

        test(
            "a local rank that died before it mapped the segment fails the others' phase with ECONNRESET naming it, not at the attach time-out"
        ) {
            val dir = Files.createTempDirectory("offload-unattached")
            try {
                // The process rank `dead` names is gone (this pid with another start time); the attach time-out is
                // ten minutes, so only the probe of that process ends the wait within the deadline.
                val self = ProcessIdentity.SELF
                val gone = ProcessIdentity(self.pid, self.startMillis - 1)
                for ((me, dead) in listOf(0 to 1, 1 to 0)) {
                    val owners =
                        arrayOfNulls<ProcessIdentity>(2).also {
                            it[me] = self
                            it[dead] = gone
                        }
                    val engine =
                        OffloadEngine(
                            2,
                            me,
                            intArrayOf(4, 7),
                            dir.resolve("braid-coll-unattached-$me.seg"),
                            42L,
                            JobKeyProof("key"),
                            4096,
                            600_000_000_000L,
                            5_000_000L,
                            owners,
                        )
                    engine.use {
                        val empty = org.agrona.concurrent.UnsafeBuffer(ByteArray(0))
                        val phase =
                            OffloadPhase(it, OffloadPhase.Kind.BARRIER, 0, 1, 0, null, empty, 0, empty, "barrier")
                        it.starting(arrayOf(phase), true)
                        val deadline = braid.testsupport.Deadline.of("the barrier with a dead unattached rank to fail")
                        var rc = it.step(phase)
                        while (rc == -Errno.EAGAIN) {
                            deadline.check()
                            Thread.sleep(1)
                            rc = it.step(phase)
                        }
                        withClue("local rank $me, waiting for dead local rank $dead: ${it.failure}") {
                            rc shouldBe -Errno.ECONNRESET
                            it.failure!! shouldContain "local rank $dead (group rank ${intArrayOf(4, 7)[dead]}"
                            it.failure!! shouldContain "died before it mapped"
                        }
                    }
                }
            } finally {
                dir.toFile().deleteRecursively()
            }
        }

        test(
            "a segment created under one job key is refused (EACCES) by a rank holding another, and accepted under the same key"
        ) {
            val dir = Files.createTempDirectory("offload-key")
            try {
                val path = dir.resolve("braid-coll-test.seg")
                val seg =
                    OffloadSegment.create(
                        path,
                        2,
                        4096,
                        42L,
                        JobKeyProof("key-a"),
                        ProcessIdentity(ProcessHandle.current().pid(), 1L),
                    )
                shouldThrow<FabricException> { OffloadSegment.tryAttach(path, 2, 4096, 42L, JobKeyProof("key-b")) }
                    .code shouldBe Errno.EACCES
                shouldThrow<FabricException> { OffloadSegment.tryAttach(path, 3, 4096, 42L, JobKeyProof("key-a")) }
                    .message!! shouldContain "settings differ"
                OffloadSegment.tryAttach(path, 2, 4096, 42L, JobKeyProof("key-a")).shouldNotBeNull().close()
                seg.close()
                OffloadSegment.tryAttach(path, 2, 4096, 42L, JobKeyProof("key-a"))
                    .shouldBeNull() // closed: the name is gone
            } finally {
                dir.toFile().deleteRecursively()
            }
        }
    })
