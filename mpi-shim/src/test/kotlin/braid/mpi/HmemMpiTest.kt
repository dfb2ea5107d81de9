package braid.mpi

import braid.bench.SegmentDevice
import braid.core.Errno
import braid.core.MemoryRegion
import braid.core.MrAccess
import braid.mpi.javaapi.JavaRegionCaller
import braid.mpi.testing.runRanks
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.util.concurrent.ConcurrentHashMap

/**
 * braid.mpi's calls on device memory ([CommRegions]): ranks (one shm endpoint each) whose buffers live in a
 * [SegmentDevice], memory no rail can address, reached only through the copy functions each rank sets with [Mpi.setOp].
 * The counts of those functions prove that every byte into and out of device memory went through them (a direct copy
 * would have crashed or been missed), and the device's memory shows that the data arrived.
 */
class HmemMpiTest :
    FunSpec({
        /** [n] ints at [at] of [dev], read outside any rail. */
        fun read(dev: SegmentDevice, at: Long, n: Int): IntArray {
            val b = ByteBuffer.wrap(dev.get(at, n * 4)).order(ByteOrder.nativeOrder())
            return IntArray(n) { b.getInt(it * 4) }
        }

        fun put(dev: SegmentDevice, at: Long, values: IntArray) {
            val b = ByteBuffer.allocate(values.size * 4).order(ByteOrder.nativeOrder())
            values.forEachIndexed { i, v -> b.putInt(i * 4, v) }
            dev.put(at, b.array())
        }

        /**
         * Per rank: its copy functions and [slots] device buffers of [bytes] each, allocated before the ranks start.
         */
        class Rank(dev: SegmentDevice, slots: Int, val bytes: Int) {
            val copies = dev.copies()
            val at = LongArray(slots) { dev.alloc(bytes) }

            fun region(mpi: Mpi, i: Int): MemoryRegion =
                mpi.registerMemory(dev.iface, 0, at[i], bytes, MrAccess.SEND or MrAccess.RECV)

            private val dev = dev
        }

        fun setUp(mpi: Mpi, r: Rank) {
            mpi.setOp(braid.core.HmemOp.COPY_TO_HMEM_IOV, r.copies.toHmem) shouldBe 0
            mpi.setOp(braid.core.HmemOp.COPY_FROM_HMEM_IOV, r.copies.fromHmem) shouldBe 0
        }

        test("send and receive between device buffers: eager, chunked, synchronous, strided; a failed copy errs") {
            val big = 3 * (1 shl 20) / 4 + 1000 // ints: over the 1 MiB chunk, so the send streams chunk by chunk
            val dev = SegmentDevice(40 shl 20, "mpi-p2p-device")
            val ranks = List(2) { Rank(dev, 2, big * 4) }
            put(dev, ranks[0].at[0], IntArray(big) { it * 7 })
            runRanks(2) { mpi ->
                val w = mpi.world
                val me = ranks[w.rank]
                setUp(mpi, me)
                val a = me.region(mpi, 0)
                val b = me.region(mpi, 1)
                val c = me.copies
                if (w.rank == 0) {
                    w.send(a, 0, 64, Datatype.INT, 1, 1) // eager
                    w.send(a, 0, big, Datatype.INT, 1, 2) // chunked rendezvous
                    w.ssend(a, 400, 10, Datatype.INT, 1, 3) // from byte 400
                    c.fromBytes.get() shouldBe (64 + big + 10) * 4L
                    c.toBytes.get() shouldBe 0
                    // A strided type from device memory: its span is copied out through the override, packed host-side.
                    c.reset()
                    w.send(a, 0, 1, Datatype.vector(4, 1, 3, Datatype.INT).commit(), 1, 4)
                    c.fromBytes.get() shouldBe (3 * 3 + 1) * 4L
                    // A copy that fails: the send completes in error with its errno; the stream behind it is intact.
                    c.failNext.set(Errno.ENODEV)
                    val e = shouldThrow<MPIException> { w.isend(a, 0, 8, Datatype.INT, 1, 5).waitFor() }
                    e.errorClass shouldBe ErrorClass.ERR_OTHER
                    w.send(a, 0, 8, Datatype.INT, 1, 5)
                } else {
                    val s1 = w.recv(b, 0, 64, Datatype.INT, 0, 1)
                    s1.getCount(Datatype.INT) shouldBe 64
                    read(dev, me.at[1], 64).toList() shouldBe List(64) { it * 7 }
                    val r2 = w.irecv(b, 0, big, Datatype.INT, Mpi.ANY_SOURCE, 2)
                    r2.waitFor().getCount(Datatype.INT) shouldBe big
                    read(dev, me.at[1], big).toList() shouldBe List(big) { it * 7 }
                    w.recv(b, 4000, 10, Datatype.INT, 0, 3)
                    read(dev, me.at[1] + 4000, 10).toList() shouldBe List(10) { (100 + it) * 7 }
                    c.toBytes.get() shouldBe (64 + big + 10) * 4L
                    c.fromBytes.get() shouldBe 0
                    val host = ByteBuffer.allocateDirect(16).order(ByteOrder.nativeOrder())
                    w.recv(host, 4, Datatype.INT, 0, 4)
                    List(4) { host.getInt(it * 4) } shouldBe listOf(0, 21, 42, 63)
                    // Into a strided type in device memory: unpacked over the span, the gaps kept.
                    c.reset()
                    w.recv(b, 0, 1, Datatype.vector(8, 1, 2, Datatype.INT).commit(), 0, 5)
                    val got = read(dev, me.at[1], 16)
                    List(8) { got[2 * it] } shouldBe List(8) { it * 7 }
                    List(8) { got[2 * it + 1] } shouldBe List(8) { (2 * it + 1) * 7 }
                    c.toBytes.get() shouldBe 15 * 4L
                }
                // Ranges outside the region, contiguous or strided, are refused at the call, naming the region.
                val end = big * 4L - 8
                shouldThrow<MPIException> { w.isend(a, end, 4, Datatype.INT, 1 - w.rank, 0) }.errorClass shouldBe
                    ErrorClass.ERR_BUFFER
                val strided = Datatype.vector(8, 1, 2, Datatype.INT).commit()
                shouldThrow<MPIException> { w.irecv(b, end, 1, strided, 1 - w.rank, 0) }.errorClass shouldBe
                    ErrorClass.ERR_BUFFER
                // Matching order: a device receive posted before a host one with the same tag takes the first message.
                // And a persistent pair between device buffers, started twice.
                if (w.rank == 0) {
                    for (v in 41..44) {
                        val one = ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(0, v)
                        w.send(one, 1, Datatype.INT, 1, if (v < 43) 9 else 11)
                    }
                    val p = w.sendInit(a, 0, 4, Datatype.INT, 1, 10)
                    for (round in 0 until 2) {
                        put(dev, me.at[0], IntArray(4) { round * 10 + it })
                        p.start()
                        p.waitFor()
                    }
                    p.free()
                } else {
                    val first = w.irecv(b, 0, 1, Datatype.INT, 0, 9)
                    val host = ByteBuffer.allocate(4).order(ByteOrder.nativeOrder())
                    val second = w.irecv(host, 1, Datatype.INT, 0, 9)
                    first.waitFor()
                    second.waitFor()
                    read(dev, me.at[1], 1)[0] shouldBe 41
                    host.getInt(0) shouldBe 42
                    // And the other way round: the host receive, called first, takes the first message.
                    val third = w.irecv(host, 1, Datatype.INT, 0, 11)
                    val fourth = w.irecv(b, 0, 1, Datatype.INT, 0, 11)
                    fourth.waitFor()
                    third.waitFor()
                    host.getInt(0) shouldBe 43
                    read(dev, me.at[1], 1)[0] shouldBe 44
                    val p = w.recvInit(b, 0, 4, Datatype.INT, 0, 10)
                    for (round in 0 until 2) {
                        p.start()
                        p.waitFor()
                        read(dev, me.at[1], 4).toList() shouldBe List(4) { round * 10 + it }
                    }
                    p.free()
                }
                a.close()
                b.close()
            }
        }

        test("allreduce, bcast, allgather and alltoall on device buffers go through each rank's overrides") {
            val n = 1000
            val size = 3
            val dev = SegmentDevice(8 shl 20, "mpi-coll-device")
            val ranks = List(size) { Rank(dev, 2, n * size * 4) }
            for (r in 0 until size) put(dev, ranks[r].at[0], IntArray(n * size) { r * 100_000 + it })
            runRanks(size) { mpi ->
                val w = mpi.world
                val me = ranks[w.rank]
                setUp(mpi, me)
                val src = me.region(mpi, 0)
                val dst = me.region(mpi, 1)
                val c = me.copies
                val bytes = n * 4L

                w.allreduce(src, 0, dst, 0, n, Datatype.INT, Op.SUM)
                read(dev, me.at[1], n).toList() shouldBe List(n) { 300_000 + 3 * it }
                c.fromBytes.get() shouldBe bytes
                c.toBytes.get() shouldBe bytes

                c.reset()
                w.iallreduce(null, 0, dst, 0, n, Datatype.INT, Op.MAX).waitFor() // in place
                read(dev, me.at[1], n).toList() shouldBe List(n) { 300_000 + 3 * it }

                c.reset()
                w.bcast(if (w.rank == 1) src else dst, 0, n, Datatype.INT, 1)
                read(dev, me.at[if (w.rank == 1) 0 else 1], n).toList() shouldBe List(n) { 100_000 + it }
                (c.fromBytes.get() to c.toBytes.get()) shouldBe (if (w.rank == 1) bytes to 0L else 0L to bytes)

                c.reset()
                w.allgather(src, 0, n, Datatype.INT, dst, 0, n, Datatype.INT)
                read(dev, me.at[1], n * size).toList() shouldBe List(n * size) { (it / n) * 100_000 + it % n }
                (c.fromBytes.get() to c.toBytes.get()) shouldBe (bytes to bytes * size)

                c.reset()
                w.ialltoall(src, 0, n, Datatype.INT, dst, 0, n, Datatype.INT).waitFor()
                // Block j of rank r's result is block r of rank j's input.
                read(dev, me.at[1], n * size).toList() shouldBe
                    List(n * size) { (it / n) * 100_000 + w.rank * n + it % n }
                (c.fromBytes.get() to c.toBytes.get()) shouldBe (bytes * size to bytes * size)

                // A strided type is refused with the way out; an intercommunicator's would be too.
                shouldThrow<MPIException> {
                        w.allreduce(src, 0, dst, 0, 1, Datatype.vector(2, 1, 2, Datatype.INT).commit(), Op.SUM)
                    }
                    .errorClass shouldBe ErrorClass.ERR_TYPE
                src.close()
                dst.close()
            }
        }

        test("reduce, scan, exscan, reduce_scatter_block, gather, scatter and the v forms on device buffers") {
            val n = 6
            val size = 3
            val dev = SegmentDevice(1 shl 20, "mpi-coll2-device")
            val ranks = List(size) { Rank(dev, 2, n * size * 4) }
            for (r in 0 until size) put(dev, ranks[r].at[0], IntArray(n * size) { r * 100_000 + it })
            val counts = intArrayOf(1, 2, 3)
            val displs = intArrayOf(0, 1, 3)
            runRanks(size) { mpi ->
                val w = mpi.world
                val r = w.rank
                val me = ranks[r]
                setUp(mpi, me)
                val src = me.region(mpi, 0)
                val dst = me.region(mpi, 1)
                val out = me.at[1]

                w.reduce(src, 0, dst.takeIf { r == 2 }, 0, n, Datatype.INT, Op.SUM, 2)
                if (r == 2) read(dev, out, n).toList() shouldBe List(n) { 300_000 + 3 * it }
                w.scan(src, 0, dst, 0, n, Datatype.INT, Op.SUM)
                read(dev, out, n).toList() shouldBe List(n) { 100_000 * r * (r + 1) / 2 + (r + 1) * it }
                w.exscan(src, 0, dst, 0, n, Datatype.INT, Op.SUM)
                if (r > 0) read(dev, out, n).toList() shouldBe List(n) { 100_000 * (r - 1) * r / 2 + r * it }
                w.reduceScatterBlock(src, 0, dst, 0, 2, Datatype.INT, Op.SUM)
                read(dev, out, 2).toList() shouldBe List(2) { 300_000 + 3 * (r * 2 + it) }

                w.allgatherv(src, 0, counts[r], Datatype.INT, dst, 0, counts, displs, Datatype.INT)
                read(dev, out, 6).toList() shouldBe listOf(0, 100_000, 100_001, 200_000, 200_001, 200_002)
                w.gather(src, 0, 2, Datatype.INT, dst.takeIf { r == 0 }, 0, 2, Datatype.INT, 0)
                if (r == 0) read(dev, out, 6).toList() shouldBe listOf(0, 1, 100_000, 100_001, 200_000, 200_001)
                w.gatherv(src, 0, counts[r], Datatype.INT, dst, 0, counts, displs, Datatype.INT, 1)
                if (r == 1) read(dev, out, 6).toList() shouldBe listOf(0, 100_000, 100_001, 200_000, 200_001, 200_002)
                w.scatter(src, 0, 2, Datatype.INT, dst, 0, 2, Datatype.INT, 0)
                read(dev, out, 2).toList() shouldBe listOf(2 * r, 2 * r + 1)
                w.scatterv(src, 0, counts, displs, Datatype.INT, dst, 0, counts[r], Datatype.INT, 2)
                read(dev, out, counts[r]).toList() shouldBe List(counts[r]) { 200_000 + displs[r] + it }
                val sendCounts = IntArray(size) { it + 1 }
                val recvCounts = IntArray(size) { r + 1 }
                w.alltoallv(
                    src,
                    0,
                    sendCounts,
                    displs,
                    Datatype.INT,
                    dst,
                    0,
                    recvCounts,
                    IntArray(size) { it * (r + 1) },
                    Datatype.INT,
                )
                read(dev, out, size * (r + 1)).toList() shouldBe
                    List(size * (r + 1)) { (it / (r + 1)) * 100_000 + displs[r] + it % (r + 1) }
                (me.copies.fromBytes.get() > 0 && me.copies.toBytes.get() > 0) shouldBe true
                src.close()
                dst.close()
            }
        }

        test("rsend, bsend (and their persistent forms), sendrecv, sendrecv_replace and mrecv on device buffers") {
            val dev = SegmentDevice(1 shl 20, "mpi-modes-device")
            val ranks = List(2) { Rank(dev, 2, 4096) }
            for (r in 0..1) put(dev, ranks[r].at[0], IntArray(1024) { r * 10_000 + it })
            runRanks(2) { mpi ->
                val w = mpi.world
                val r = w.rank
                val other = 1 - r
                val me = ranks[r]
                setUp(mpi, me)
                val a = me.region(mpi, 0)
                val b = me.region(mpi, 1)
                val c = me.copies
                val strided = Datatype.vector(4, 1, 2, Datatype.INT).commit() // 4 ints spanning 7
                if (r == 0) {
                    w.rsend(a, 0, 16, Datatype.INT, 1, 1)
                    w.irsend(a, 64, 16, Datatype.INT, 1, 2).waitFor()
                    // Without an attached buffer a buffered send is refused, naming the fix; with one it goes.
                    shouldThrow<MPIException> { w.bsend(a, 0, 8, Datatype.INT, 1, 3) }.errorClass shouldBe
                        ErrorClass.ERR_BUFFER
                    mpi.bufferAttach(ByteBuffer.allocateDirect(4096))
                    w.bsend(a, 0, 8, Datatype.INT, 1, 3)
                    w.ibsend(a, 0, 1, strided, 1, 4).waitFor() // packed from device memory into the buffer
                    // A copy that fails: the call raises with the copy's class, and its range of the buffer is free
                    // again.
                    c.failNext.set(Errno.ENODEV)
                    shouldThrow<MPIException> { w.bsend(a, 0, 8, Datatype.INT, 1, 99) }.errorClass shouldBe
                        ErrorClass.ERR_OTHER
                    val pb = w.bsendInit(a, 0, 4, Datatype.INT, 1, 5)
                    val pr = w.rsendInit(a, 16, 4, Datatype.INT, 1, 6)
                    for (round in 0 until 2) {
                        pb.start()
                        pb.waitFor()
                        pr.start()
                        pr.waitFor()
                    }
                    pb.free()
                    pr.free()
                    mpi.bufferDetach()
                    c.fromBytes.get() shouldBe (16 + 16 + 8 + 7 + 2 * (4 + 4)) * 4L
                    c.toBytes.get() shouldBe 0
                } else {
                    w.recv(b, 0, 16, Datatype.INT, 0, 1)
                    read(dev, me.at[1], 16).toList() shouldBe List(16) { it }
                    w.recv(b, 0, 16, Datatype.INT, 0, 2)
                    read(dev, me.at[1], 16).toList() shouldBe List(16) { 16 + it }
                    w.recv(b, 0, 8, Datatype.INT, 0, 3)
                    read(dev, me.at[1], 8).toList() shouldBe List(8) { it }
                    w.recv(b, 0, 4, Datatype.INT, 0, 4)
                    read(dev, me.at[1], 4).toList() shouldBe listOf(0, 2, 4, 6)
                    for (round in 0 until 2) {
                        w.recv(b, 0, 4, Datatype.INT, 0, 5)
                        read(dev, me.at[1], 4).toList() shouldBe List(4) { it }
                        w.recv(b, 0, 4, Datatype.INT, 0, 6)
                        read(dev, me.at[1], 4).toList() shouldBe List(4) { 4 + it }
                    }
                    c.toBytes.get() shouldBe (16 + 16 + 8 + 4 + 2 * (4 + 4)) * 4L
                    c.fromBytes.get() shouldBe 0
                }
                w.barrier()
                c.reset()

                // sendrecv between device buffers, both ways at once; then sendrecv_replace in place.
                val st = w.sendRecv(a, 0, 8, Datatype.INT, other, 7, b, 40, 8, Datatype.INT, other, 7)
                st.source shouldBe other
                st.getCount(Datatype.INT) shouldBe 8
                read(dev, me.at[1] + 40, 8).toList() shouldBe List(8) { other * 10_000 + it }
                (c.fromBytes.get() to c.toBytes.get()) shouldBe (32L to 32L)
                c.reset()
                w.sendRecvReplace(b, 40, 8, Datatype.INT, other, 8, other, 8)
                read(dev, me.at[1] + 40, 8).toList() shouldBe List(8) { r * 10_000 + it }
                (c.fromBytes.get() to c.toBytes.get()) shouldBe (32L to 32L)

                // Matched probe: the claimed message goes into device memory, contiguous and strided.
                c.reset()
                if (r == 0) {
                    val host = ByteBuffer.allocateDirect(40).order(ByteOrder.nativeOrder())
                    for (i in 0 until 10) host.putInt(i * 4, 500 + i)
                    w.send(host, 10, Datatype.INT, 1, 9)
                    w.send(host, 4, Datatype.INT, 1, 10)
                } else {
                    val m = w.mprobe(0, 9)
                    m.status.getCount(Datatype.INT) shouldBe 10
                    // Outside the region: refused at the call, the message still reserved for a correct receive.
                    shouldThrow<MPIException> { m.mrecv(b, 4090, 10, Datatype.INT) }.errorClass shouldBe
                        ErrorClass.ERR_BUFFER
                    m.mrecv(b, 0, 10, Datatype.INT).getCount(Datatype.INT) shouldBe 10
                    read(dev, me.at[1], 10).toList() shouldBe List(10) { 500 + it }
                    shouldThrow<MPIException> { m.mrecv(b, 0, 10, Datatype.INT) }.errorClass shouldBe
                        ErrorClass.ERR_REQUEST
                    c.toBytes.get() shouldBe 40L
                    put(dev, me.at[1], IntArray(7) { -1 })
                    var m2: Message? = null
                    mpi.lookUntil {
                        m2 = w.improbe(0, 10)
                        m2 != null
                    }
                    m2!!.imrecv(b, 0, 1, strided).waitFor()
                    read(dev, me.at[1], 7).toList() shouldBe listOf(500, -1, 501, -1, 502, -1, 503)
                }
                a.close()
                b.close()
            }
        }

        test("reduce_scatter with unequal counts, alltoallw and the neighbor collectives on device buffers") {
            val size = 3
            val dev = SegmentDevice(1 shl 20, "mpi-exchange-device")
            val ranks = List(size) { Rank(dev, 2, 4096) }
            for (r in 0 until size) put(dev, ranks[r].at[0], IntArray(1024) { r * 100_000 + it })
            val counts = intArrayOf(1, 2, 3)
            runRanks(size) { mpi ->
                val w = mpi.world
                val r = w.rank
                val me = ranks[r]
                setUp(mpi, me)
                val src = me.region(mpi, 0)
                val dst = me.region(mpi, 1)
                val out = me.at[1]
                val c = me.copies

                // reduce_scatter: rank r keeps counts[r] elements of the sum, after the blocks of the ranks before it.
                w.reduceScatter(src, 0, dst, 0, counts, Datatype.INT, Op.SUM)
                val before = counts.take(r).sum()
                read(dev, out, counts[r]).toList() shouldBe List(counts[r]) { 300_000 + 3 * (before + it) }
                (c.fromBytes.get() to c.toBytes.get()) shouldBe (6 * 4L to counts[r] * 4L)
                // In place: the whole input in the receive region, this rank's block left at its start.
                put(dev, out, IntArray(6) { r + it })
                w.ireduceScatter(null, 0, dst, 0, counts, Datatype.INT, Op.SUM).waitFor()
                read(dev, out, counts[r]).toList() shouldBe List(counts[r]) { 3 + 3 * (before + it) }
                // Equal counts: the block form; a strided type: refused.
                w.reduceScatter(src, 0, dst, 0, intArrayOf(2, 2, 2), Datatype.INT, Op.MAX)
                read(dev, out, 2).toList() shouldBe List(2) { 200_000 + 2 * r + it }
                shouldThrow<MPIException> {
                        w.reduceScatter(src, 0, dst, 0, counts, Datatype.vector(2, 1, 2, Datatype.INT).commit(), Op.SUM)
                    }
                    .errorClass shouldBe ErrorClass.ERR_TYPE

                // alltoallw: j+1 ints of block j to rank j at byte displacements; rank j's r+1 ints at j*(r+1) ints.
                c.reset()
                val types = Array(size) { Datatype.INT }
                val sendDispls = intArrayOf(0, 4, 12)
                w.alltoallw(
                    src,
                    0,
                    IntArray(size) { it + 1 },
                    sendDispls,
                    types,
                    dst,
                    0,
                    IntArray(size) { r + 1 },
                    IntArray(size) { it * (r + 1) * 4 },
                    types,
                )
                read(dev, out, size * (r + 1)).toList() shouldBe
                    List(size * (r + 1)) { (it / (r + 1)) * 100_000 + sendDispls[r] / 4 + it % (r + 1) }
                // The staged send span (24 bytes) and the receive span, read first so gaps keep their bytes.
                val span = size * (r + 1) * 4L
                (c.fromBytes.get() to c.toBytes.get()) shouldBe (24 + span to span)
                shouldThrow<MPIException> {
                        w.alltoallw(src, 0, IntArray(2), IntArray(2), types, dst, 0, IntArray(2), IntArray(2), types)
                    }
                    .errorClass shouldBe ErrorClass.ERR_ARG
                val strided = Array(size) { Datatype.vector(2, 1, 2, Datatype.INT).commit() }
                shouldThrow<MPIException> {
                        w.alltoallw(
                            src,
                            0,
                            IntArray(size) { 1 },
                            IntArray(size),
                            strided,
                            dst,
                            0,
                            IntArray(size) { 1 },
                            IntArray(size),
                            strided,
                        )
                    }
                    .errorClass shouldBe ErrorClass.ERR_TYPE

                // The neighbor collectives on a periodic ring: block j from source j, block k to destination k.
                val ring = w.createCart(intArrayOf(size), booleanArrayOf(true))!!
                ring.setErrhandler(ErrorHandler.ERRORS_RETURN)
                val t = ring.getTopology() as CartTopology
                val from = t.sources(r)
                val to = t.destinations(r)
                c.reset()
                ring.neighborAllgather(src, 0, 4, Datatype.INT, dst, 0, 4, Datatype.INT)
                read(dev, out, 8).toList() shouldBe List(8) { from[it / 4] * 100_000 + it % 4 }
                (c.fromBytes.get() to c.toBytes.get()) shouldBe (2 * 16L to 2 * 16L)
                ring
                    .ineighborAllgatherv(
                        src,
                        0,
                        2,
                        Datatype.INT,
                        dst,
                        0,
                        intArrayOf(2, 2),
                        intArrayOf(5, 0),
                        Datatype.INT,
                    )
                    .waitFor()
                read(dev, out, 7).toList() shouldBe
                    listOf(from[1] * 100_000, from[1] * 100_000 + 1) +
                        read(dev, out + 8, 3).toList() +
                        listOf(from[0] * 100_000, from[0] * 100_000 + 1)
                // Block k of the send goes to destination k: each source sent me the block it aims at me.
                ring.neighborAlltoall(src, 0, 3, Datatype.INT, dst, 0, 3, Datatype.INT)
                val aimed = IntArray(2) { j -> t.destinations(from[j]).indexOf(r) } // the block source j aims at me
                for (j in 0 until 2) read(dev, out + 12L * j, 3).toList() shouldBe
                    List(3) { from[j] * 100_000 + 3 * aimed[j] + it }
                // alltoallv with a strided receive type: packed and unpacked host-side, the gaps kept.
                put(dev, out, IntArray(8) { -1 })
                val every2 = Datatype.vector(2, 1, 2, Datatype.INT).commit() // 2 ints spanning 3
                ring.neighborAlltoallv(
                    src,
                    0,
                    intArrayOf(2, 2),
                    intArrayOf(0, 2),
                    Datatype.INT,
                    dst,
                    0,
                    intArrayOf(1, 1),
                    intArrayOf(0, 1),
                    every2,
                )
                val got = read(dev, out, 8)
                for (j in 0 until 2) {
                    listOf(got[3 * j], got[3 * j + 2]) shouldBe List(2) { from[j] * 100_000 + 2 * aimed[j] + it }
                    got[3 * j + 1] shouldBe -1
                }
                shouldThrow<MPIException> {
                        ring.neighborAllgather(src, 4088, 4, Datatype.INT, dst, 0, 4, Datatype.INT)
                    }
                    .errorClass shouldBe ErrorClass.ERR_BUFFER
                shouldThrow<MPIException> { w.neighborAllgather(src, 0, 4, Datatype.INT, dst, 0, 4, Datatype.INT) }
                    .errorClass shouldBe ErrorClass.ERR_TOPOLOGY
                ring.free()
                src.close()
                dst.close()
            }
        }

        test("a Java program sends, receives and allreduces device memory through its own copy functions") {
            val dev = SegmentDevice(1 shl 20, "mpi-java-device")
            val at = List(2) { LongArray(2) { dev.alloc(4096) } }
            val out = ConcurrentHashMap<Int, String>()
            runRanks(2) { mpi -> out[mpi.world.rank] = JavaRegionCaller.run(mpi, dev, at[mpi.world.rank]) }
            out[0] shouldBe "sent 16 ints through 1 copy calls; allreduce 1,3,5"
            out[1] shouldBe "got 16 ints: 0..150 through 1 copy calls; allreduce 1,3,5"
        }

        test("a Java program calls each of the other region shapes: send modes, mrecv, sendrecv, exchanges") {
            val dev = SegmentDevice(1 shl 20, "mpi-java-exchange-device")
            val at = List(2) { LongArray(2) { dev.alloc(4096) } }
            val out = ConcurrentHashMap<Int, String>()
            runRanks(2) { mpi -> out[mpi.world.rank] = JavaRegionCaller.exchanges(mpi, dev, at[mpi.world.rank]) }
            out[0] shouldBe "sendrecv 100,101; replace 0,1; reduce_scatter 100; alltoallw 0,100; neighbours 101,101"
            out[1] shouldBe
                "modes 0,1,2,3,4,5,6,7,7,7,7,7; sendrecv 0,1; replace 100,101; reduce_scatter 102,104; " +
                    "alltoallw 1,101; neighbours 1,1"
        }
    })
