package braid.collectives

import braid.core.Errno
import braid.core.FabricException
import braid.core.TestDevice
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

/**
 * Collectives on device memory (a [TestDevice] no rail can address): the inputs are copied to the host, the host
 * algorithm runs, and the results are copied back, every byte through the copy overrides; a failed copy throws with its
 * errno.
 */
class HmemAllreduceTest :
    FunSpec({
        test("an allreduce of device memory on 3 in-process ranks reduces every element, through the overrides") {
            val device = TestDevice(1 shl 20, "collectives-device")
            collectiveFabric(3).use { f ->
                val groups = f.join()
                val copies = f.nodes.map { n -> device.copies().also { it.setOn(n.domain) shouldBe listOf(0, 0) } }
                val count = 5003 // rendezvous-sized between ranks
                val bytes = count * 8
                val sends = f.nodes.map { device.alloc(bytes) }
                val recvs = f.nodes.map { device.alloc(bytes) }
                for ((r, a) in sends.withIndex()) for (i in 0 until count) device.putLong(a + i * 8L, (r + 1L) * i)
                val sendMrs =
                    f.nodes.mapIndexed { r, n -> n.domain.registerMemory(device.iface, 0, sends[r], bytes, 0) }
                val recvMrs =
                    f.nodes.mapIndexed { r, n -> n.domain.registerMemory(device.iface, 0, recvs[r], bytes, 0) }
                onEveryRank(groups, seconds = 60) { g ->
                    g.allreduce(sendMrs[g.rank], 0, recvMrs[g.rank], 0, count, Datatype.INT64, ReduceOp.SUM)
                }
                for (r in 0 until 3) {
                    for (i in 0 until count) device.getLong(recvs[r] + i * 8L) shouldBe 6L * i
                    copies[r].fromBytes.get() shouldBe bytes.toLong()
                    copies[r].toBytes.get() shouldBe bytes.toLong()
                }
                // A failing copy throws with its errno, before anything is sent.
                copies[0].failNext.set(Errno.ENODEV)
                shouldThrow<FabricException> {
                        groups[0].allreduce(sendMrs[0], 0, recvMrs[0], 0, count, Datatype.INT64, ReduceOp.SUM)
                    }
                    .code shouldBe Errno.ENODEV
            }
        }

        test("broadcast, reduce and allgather of device memory on 3 ranks move every byte through the overrides") {
            val device = TestDevice(1 shl 20, "collectives-device-2")
            collectiveFabric(3).use { f ->
                val groups = f.join()
                val copies = f.nodes.map { n -> device.copies().also { it.setOn(n.domain) shouldBe listOf(0, 0) } }
                val count = 3001
                val bytes = count * 8
                val a = f.nodes.map { device.alloc(bytes) }
                val b = f.nodes.map { device.alloc(bytes * 3) }
                val mrA = f.nodes.mapIndexed { r, n -> n.domain.registerMemory(device.iface, 0, a[r], bytes, 0) }
                val mrB = f.nodes.mapIndexed { r, n -> n.domain.registerMemory(device.iface, 0, b[r], bytes * 3, 0) }
                fun fill() {
                    for ((r, at) in a.withIndex()) for (i in 0 until count) device.putLong(at + i * 8L, (r + 1L) * i)
                    copies.forEach { it.reset() }
                }
                // broadcast from rank 1: its region is read, the others' written
                fill()
                onEveryRank(groups, seconds = 60) { g -> g.broadcast(mrA[g.rank], 0, count, Datatype.INT64, 1) }
                for (r in 0 until 3) {
                    for (i in 0 until count) device.getLong(a[r] + i * 8L) shouldBe 2L * i
                    copies[r].fromBytes.get() shouldBe if (r == 1) bytes.toLong() else 0L
                    copies[r].toBytes.get() shouldBe if (r == 1) 0L else bytes.toLong()
                }
                // reduce to rank 2
                fill()
                onEveryRank(groups, seconds = 60) { g ->
                    g.reduce(mrA[g.rank], 0, mrB[g.rank], 0, count, Datatype.INT64, ReduceOp.SUM, 2)
                }
                for (i in 0 until count) device.getLong(b[2] + i * 8L) shouldBe 6L * i
                for (r in 0 until 3) {
                    copies[r].fromBytes.get() shouldBe bytes.toLong()
                    copies[r].toBytes.get() shouldBe if (r == 2) bytes.toLong() else 0L
                }
                // allgather
                fill()
                onEveryRank(groups, seconds = 60) { g ->
                    g.allgather(mrA[g.rank], 0, mrB[g.rank], 0, count, Datatype.INT64)
                }
                for (r in 0 until 3) {
                    for (k in 0 until 3) {
                        for (i in 0 until count) device.getLong(b[r] + (k * count + i) * 8L) shouldBe (k + 1L) * i
                    }
                    copies[r].fromBytes.get() shouldBe bytes.toLong()
                    copies[r].toBytes.get() shouldBe 3L * bytes
                }
            }
        }

        test(
            "gather, scatter, alltoall, scans and reduce-scatter of device memory run nonblocking, every byte through the overrides"
        ) {
            val device = TestDevice(4 shl 20, "collectives-device-3")
            collectiveFabric(3).use { f ->
                val groups = f.join()
                val copies = f.nodes.map { n -> device.copies().also { it.setOn(n.domain) shouldBe listOf(0, 0) } }
                val count = 2001
                val bytes = count * 8
                val a = f.nodes.map { device.alloc(bytes * 3) }
                val b = f.nodes.map { device.alloc(bytes * 3) }
                val mrA = f.nodes.mapIndexed { r, n -> n.domain.registerMemory(device.iface, 0, a[r], bytes * 3, 0) }
                val mrB = f.nodes.mapIndexed { r, n -> n.domain.registerMemory(device.iface, 0, b[r], bytes * 3, 0) }
                // Block k, element i of rank r's input: (r + 1) * (k * count + i).
                fun fill() {
                    for (r in 0 until 3) {
                        for (j in 0 until 3 * count) device.putLong(a[r] + j * 8L, (r + 1L) * j)
                        for (j in 0 until 3 * count) device.putLong(b[r] + j * 8L, -1L)
                    }
                    copies.forEach { it.reset() }
                }
                fun long(r: Int, at: Long) = device.getLong(b[r] + at * 8)
                // Every way of waiting on the started request: test, waitFor, await, future.
                fun wait(g: CollectiveGroup, req: CollectiveRequest) {
                    when (g.rank) {
                        0 -> while (!req.test()) Thread.onSpinWait()
                        1 -> kotlinx.coroutines.runBlocking { req.await() }
                        else -> req.toFuture().get(60, java.util.concurrent.TimeUnit.SECONDS)
                    }
                }
                fun counts() = copies.map { it.fromBytes.get() } to copies.map { it.toBytes.get() }
                val n = bytes.toLong()

                fill() // gather to rank 1
                onEveryRank(groups, 60) { g ->
                    wait(g, g.startGather(mrA[g.rank], 0, mrB[g.rank], 0, count, Datatype.INT64, 1))
                }
                for (k in 0 until 3) for (i in 0 until count) long(1, k * count + i.toLong()) shouldBe (k + 1L) * i
                long(0, 0) shouldBe -1L
                counts() shouldBe (listOf(n, n, n) to listOf(0L, 3 * n, 0L))

                fill() // scatter from rank 2
                onEveryRank(groups, 60) { g ->
                    wait(g, g.startScatter(mrA[g.rank], 0, mrB[g.rank], 0, count, Datatype.INT64, 2))
                }
                for (r in 0 until 3) for (i in 0 until count) long(r, i.toLong()) shouldBe 3L * (r * count + i)
                counts() shouldBe (listOf(0L, 0L, 3 * n) to listOf(n, n, n))

                fill() // alltoall: block j of rank r goes to rank j's block r
                onEveryRank(groups, 60) { g ->
                    wait(g, g.startAlltoall(mrA[g.rank], 0, mrB[g.rank], 0, count, Datatype.INT64))
                }
                for (r in 0 until 3) for (k in 0 until 3) for (i in 0 until count) long(
                    r,
                    k * count + i.toLong(),
                ) shouldBe (k + 1L) * (r * count + i)
                counts() shouldBe (List(3) { 3 * n } to List(3) { 3 * n })

                fill() // scan, exscan
                onEveryRank(groups, 60) { g ->
                    wait(g, g.startScan(mrA[g.rank], 0, mrB[g.rank], 0, count, Datatype.INT64, ReduceOp.SUM))
                }
                for (r in 0 until 3) for (i in 0 until count) long(r, i.toLong()) shouldBe (r + 1L) * (r + 2) / 2 * i
                fill() // the same scan with a user reduction
                val userSum =
                    object : UserReduction {
                        override fun isCommutative(): Boolean = false // an order-keeping algorithm

                        override fun reduce(
                            input: org.agrona.DirectBuffer,
                            inputOffset: Int,
                            inout: org.agrona.MutableDirectBuffer,
                            inoutOffset: Int,
                            count: Int,
                            datatype: Datatype,
                        ) {
                            for (i in 0 until count) {
                                val at = inoutOffset + i * 8
                                inout.putLong(at, inout.getLong(at) + input.getLong(inputOffset + i * 8))
                            }
                        }
                    }
                onEveryRank(groups, 60) { g ->
                    wait(g, g.startScan(mrA[g.rank], 0, mrB[g.rank], 0, count, Datatype.INT64, userSum))
                }
                for (r in 0 until 3) for (i in 0 until count) long(r, i.toLong()) shouldBe (r + 1L) * (r + 2) / 2 * i
                fill()
                onEveryRank(groups, 60) { g ->
                    wait(g, g.startExscan(mrA[g.rank], 0, mrB[g.rank], 0, count, Datatype.INT64, ReduceOp.SUM))
                }
                long(0, 5) shouldBe -1L // rank 0's result is left untouched: nothing copied there
                for (r in 1 until 3) for (i in 0 until count) long(r, i.toLong()) shouldBe r * (r + 1L) / 2 * i
                counts() shouldBe (listOf(n, n, n) to listOf(0L, n, n))

                fill() // reduce-scatter: block r of the sum to rank r
                onEveryRank(groups, 60) { g ->
                    wait(
                        g,
                        g.startReduceScatterBlock(mrA[g.rank], 0, mrB[g.rank], 0, count, Datatype.INT64, ReduceOp.SUM),
                    )
                }
                for (r in 0 until 3) for (i in 0 until count) long(r, i.toLong()) shouldBe 6L * (r * count + i)
                counts() shouldBe (List(3) { 3 * n } to List(3) { n })

                // The v forms: the gaps between displacements keep their bytes (the receive span is read first).
                val counts = intArrayOf(100, 200, 300)
                val displs = intArrayOf(0, 150, 400)
                val span = 700L * 8
                fill() // allgatherv, rank 1 in place: its block already sits at displs[1] of its receive region
                for (i in 0 until 200) device.putLong(b[1] + (150 + i) * 8L, 2L * i)
                onEveryRank(groups, 60) { g ->
                    val send = mrA[g.rank].takeIf { g.rank != 1 }
                    wait(g, g.startAllgatherv(send, 0, mrB[g.rank], 0, counts, displs, Datatype.INT64))
                }
                for (r in 0 until 3) {
                    for (k in 0 until 3) for (i in 0 until counts[k]) long(r, displs[k] + i.toLong()) shouldBe
                        (k + 1L) * i
                    for (gap in listOf(100L, 149L, 350L, 399L)) long(r, gap) shouldBe -1L
                }
                counts() shouldBe (listOf(800L + span, span, 2400L + span) to List(3) { span })
                fill() // gatherv to rank 0
                onEveryRank(groups, 60) { g ->
                    val c = counts[g.rank]
                    val (rc, rd) = if (g.rank == 0) counts to displs else null to null
                    wait(
                        g,
                        g.startGatherv(
                            mrA[g.rank],
                            0,
                            c,
                            mrB[g.rank].takeIf { g.rank == 0 },
                            0,
                            rc,
                            rd,
                            Datatype.INT64,
                            0,
                        ),
                    )
                }
                for (k in 0 until 3) for (i in 0 until counts[k]) long(0, displs[k] + i.toLong()) shouldBe (k + 1L) * i
                long(0, 120) shouldBe -1L
                long(1, 0) shouldBe -1L
                fill() // scatterv from rank 1
                onEveryRank(groups, 60) { g ->
                    val (sc, sd) = if (g.rank == 1) counts to displs else null to null
                    wait(g, g.startScatterv(mrA[g.rank], 0, sc, sd, mrB[g.rank], 0, counts[g.rank], Datatype.INT64, 1))
                }
                for (r in 0 until 3) for (i in 0 until counts[r]) long(r, i.toLong()) shouldBe 2L * (displs[r] + i)
                fill() // alltoallv: 50 elements to each rank, received 60 apart (10-element gaps)
                val fifty = intArrayOf(50, 50, 50)
                onEveryRank(groups, 60) { g ->
                    val req =
                        g.startAlltoallv(
                            mrA[g.rank],
                            0,
                            fifty,
                            intArrayOf(0, 50, 100),
                            mrB[g.rank],
                            0,
                            fifty,
                            intArrayOf(0, 60, 120),
                            Datatype.INT64,
                        )
                    wait(g, req)
                }
                for (r in 0 until 3) {
                    for (k in 0 until 3) for (i in 0 until 50) long(r, 60L * k + i) shouldBe (k + 1L) * (r * 50 + i)
                    long(r, 55) shouldBe -1L
                    long(r, 115) shouldBe -1L
                }

                // Several in flight on one group at once, each with its own host buffer.
                fill()
                onEveryRank(groups, 60) { g ->
                    val first = g.startAllreduce(mrA[g.rank], 0, mrB[g.rank], 0, count, Datatype.INT64, ReduceOp.SUM)
                    val second =
                        g.startAllreduce(mrA[g.rank], n, mrB[g.rank], 2 * n, count, Datatype.INT64, ReduceOp.MAX)
                    wait(g, second)
                    wait(g, first)
                }
                for (r in 0 until 3) for (i in 0 until count) {
                    long(r, i.toLong()) shouldBe 6L * i
                    long(r, 2L * count + i) shouldBe 3L * (count + i)
                }

                // A failing copy of the result fails the request with its errno; the group goes on.
                fill()
                copies[2].failTo.set(Errno.EIO)
                val outcomes =
                    onEveryRank(groups, 60) { g ->
                        val req = g.startScan(mrA[g.rank], 0, mrB[g.rank], 0, count, Datatype.INT64, ReduceOp.SUM)
                        runCatching { req.waitFor(-1) }.exceptionOrNull()
                    }
                outcomes[0] shouldBe null
                outcomes[1] shouldBe null
                (outcomes[2] as FabricException).code shouldBe Errno.EIO
                // A call refused after its input was staged gives its host buffer back and starts nothing.
                shouldThrow<FabricException> { groups[0].startScatter(mrA[0], 0, mrB[0], 0, count, Datatype.INT64, 7) }
                onEveryRank(groups, 60) { g -> g.allgather(mrA[g.rank], 0, mrB[g.rank], 0, count, Datatype.INT64) }
                for (i in 0 until count) long(2, count + i.toLong()) shouldBe 2L * i
            }
        }
    })
