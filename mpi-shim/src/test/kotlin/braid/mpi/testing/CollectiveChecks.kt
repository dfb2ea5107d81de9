package braid.mpi.testing

import braid.mpi.Datatype
import braid.mpi.ErrorClass
import braid.mpi.Intercomm
import braid.mpi.Intracomm
import braid.mpi.MPIException
import braid.mpi.Mpi
import braid.mpi.Op
import braid.mpi.Request
import java.nio.ByteBuffer
import java.nio.ByteOrder

/**
 * Every MPI collective on a communicator, each checked against a reference this rank computes on its own (every rank's
 * input is a function of its rank: element i of rank r is `r*100 + i`). Used by the in-process spec and by the
 * launcher-started Java program; throws [AssertionError] naming the collective and the first wrong element. The
 * communicator's error handler must be ERRORS_RETURN (the bad-call checks expect exceptions).
 */
object CollectiveChecks {
    fun buf(n: Int): ByteBuffer = ByteBuffer.allocate(n).order(ByteOrder.nativeOrder())

    fun intsOf(vararg v: Int): ByteBuffer =
        buf(v.size * 4).also { b -> v.forEachIndexed { i, x -> b.putInt(i * 4, x) } }

    fun input(r: Int, n: Int): ByteBuffer = intsOf(*IntArray(n) { r * 100 + it })

    fun read(b: ByteBuffer, n: Int, from: Int = 0): List<Int> = List(n) { b.getInt((from + it) * 4) }

    private fun expect(what: String, got: List<Int>, want: List<Int>) {
        if (got != want) throw AssertionError("$what: got $got, expected $want")
    }

    private fun expectError(what: String, errorClass: Int, block: () -> Unit) {
        val e =
            try {
                block()
                null
            } catch (e: MPIException) {
                e
            } ?: throw AssertionError("$what: no error raised")
        if (e.errorClass != errorClass)
            throw AssertionError(
                "$what: raised ${ErrorClass.name(e.errorClass)} (${e.message}), expected ${ErrorClass.name(errorClass)}"
            )
    }

    /** Runs every intracommunicator collective on [c]; returns how many checks passed. */
    @JvmStatic
    fun runAll(c: Intracomm): Int {
        val p = c.size
        val me = c.rank
        var checks = 0
        fun ok() {
            checks++
        }
        val INT = Datatype.INT

        c.barrier()
        c.ibarrier().waitFor()
        ok()

        // bcast: plain from the last rank, and a strided vector type from rank 0.
        run {
            val b = if (me == p - 1) input(me, 5) else buf(20)
            c.bcast(b, 5, INT, p - 1)
            expect("bcast", read(b, 5), List(5) { (p - 1) * 100 + it })
            ok()
            val vec = Datatype.vector(3, 1, 2, INT).commit()
            val v = if (me == 0) intsOf(7, -1, 8, -1, 9) else intsOf(0, me, 0, me, 0)
            c.bcast(v, 1, vec, 0)
            expect(
                "bcast of vector(3,1,2,INT)",
                read(v, 5),
                listOf(7, if (me == 0) -1 else me, 8, if (me == 0) -1 else me, 9),
            )
            ok()
            vec.free()
        }

        // reduce, allreduce (built-in ops, pairs, in place, a strided type).
        run {
            val sum = List(4) { i -> (0 until p).sumOf { r -> r * 100 + i } }
            val root = 1 % p
            val out = if (me == root) buf(16) else null
            c.reduce(input(me, 4), out, 4, INT, Op.SUM, root)
            if (me == root) {
                expect("reduce SUM", read(out!!, 4), sum)
                ok()
            }
            val inPlace = input(me, 4)
            c.reduce(if (me == root) Mpi.IN_PLACE else inPlace, if (me == root) inPlace else null, 4, INT, Op.SUM, root)
            if (me == root) {
                expect("reduce SUM in place", read(inPlace, 4), sum)
                ok()
            }

            val all = buf(16)
            c.allreduce(input(me, 4), all, 4, INT, Op.SUM)
            expect("allreduce SUM", read(all, 4), sum)
            ok()
            val ip = input(me, 4)
            c.allreduce(Mpi.IN_PLACE, ip, 4, INT, Op.MAX)
            expect("allreduce MAX in place", read(ip, 4), List(4) { (p - 1) * 100 + it })
            ok()

            val d = buf(16).putDouble(0, me + 0.5).putDouble(8, -me.toDouble())
            val dout = buf(16)
            c.allreduce(d, dout, 2, Datatype.DOUBLE, Op.SUM)
            val wantD = (0 until p).sumOf { it + 0.5 }
            if (dout.getDouble(0) != wantD || dout.getDouble(8) != -(0 until p).sum().toDouble())
                throw AssertionError("allreduce DOUBLE SUM: ${dout.getDouble(0)}, ${dout.getDouble(8)}")
            ok()

            // MINLOC on (int value, int index): the value (me - 1)^2 is least at rank 1 (rank 0 when alone).
            val pair = intsOf((me - 1) * (me - 1), me)
            val loc = buf(8)
            c.allreduce(pair, loc, 1, Datatype.INT2, Op.MINLOC)
            val best = (0 until p).minByOrNull { (it - 1) * (it - 1) }!!
            expect("allreduce MINLOC", read(loc, 2), listOf((best - 1) * (best - 1), best))
            ok()

            // A strided type: every other int, the gaps untouched.
            val strided = Datatype.vector(3, 1, 2, INT).commit()
            val sin = intsOf(me, -7, me + 1, -7, me + 2)
            val sout = intsOf(5, 5, 5, 5, 5)
            c.allreduce(sin, sout, 1, strided, Op.SUM)
            val s = (0 until p).sum()
            expect("allreduce SUM of vector(3,1,2,INT)", read(sout, 5), listOf(s, 5, s + p, 5, s + 2 * p))
            ok()
            strided.free()
        }

        // User ops: "left" (non-commutative, one INT per element) keeps rank 0's; a 2x2 matrix product
        // over contiguous(4, INT) elements (non-commutative, several ints per element) composes in rank order.
        run {
            val left =
                Op.create(
                    { input, inout, count, _ -> for (i in 0 until count) inout.putInt(i * 4, input.getInt(i * 4)) },
                    false,
                )
            val out = buf(12)
            c.allreduce(input(me, 3), out, 3, INT, left)
            expect("allreduce with a non-commutative user op", read(out, 3), List(3) { it })
            ok()
            left.free()

            val mat = Datatype.contiguous(4, INT).commit()
            val matmul =
                Op.create(
                    { input, inout, count, _ ->
                        for (k in 0 until count) {
                            val o = k * 16
                            val a = IntArray(4) { input.getInt(o + it * 4) }
                            val b = IntArray(4) { inout.getInt(o + it * 4) }
                            inout.putInt(o, a[0] * b[0] + a[1] * b[2])
                            inout.putInt(o + 4, a[0] * b[1] + a[1] * b[3])
                            inout.putInt(o + 8, a[2] * b[0] + a[3] * b[2])
                            inout.putInt(o + 12, a[2] * b[1] + a[3] * b[3])
                        }
                    },
                    false,
                )
            fun m(r: Int) = intArrayOf(1, r + 1, 0, 2)
            fun mul(a: IntArray, b: IntArray) =
                intArrayOf(
                    a[0] * b[0] + a[1] * b[2],
                    a[0] * b[1] + a[1] * b[3],
                    a[2] * b[0] + a[3] * b[2],
                    a[2] * b[1] + a[3] * b[3],
                )
            var want = m(0)
            for (r in 1 until p) want = mul(want, m(r))
            val mout = buf(16)
            c.allreduce(intsOf(*m(me)), mout, 1, mat, matmul)
            expect("allreduce of 2x2 matrices by a non-commutative user op", read(mout, 4), want.toList())
            ok()
            var prefix = m(0)
            for (r in 1..me) prefix = mul(prefix, m(r))
            c.scan(intsOf(*m(me)), mout, 1, mat, matmul)
            expect("scan of 2x2 matrices", read(mout, 4), prefix.toList())
            ok()
            matmul.free()
            mat.free()
        }

        // reduce_scatter_block, reduce_scatter, scan, exscan.
        run {
            val rsb = buf(8)
            c.reduceScatterBlock(input(me, 2 * p), rsb, 2, INT, Op.SUM)
            expect(
                "reduce_scatter_block",
                read(rsb, 2),
                List(2) { i -> (0 until p).sumOf { r -> r * 100 + 2 * me + i } },
            )
            ok()
            val counts = IntArray(p) { it + 1 }
            val total = counts.sum()
            val at = (0 until me).sumOf { counts[it] }
            val rs = buf(counts[me] * 4)
            c.reduceScatter(input(me, total), rs, counts, INT, Op.SUM)
            expect(
                "reduce_scatter",
                read(rs, counts[me]),
                List(counts[me]) { i -> (0 until p).sumOf { r -> r * 100 + at + i } },
            )
            ok()
            // In place: the input is the receive buffer; this rank's block lands at its start.
            val rsbIn = input(me, 2 * p)
            c.reduceScatterBlock(Mpi.IN_PLACE, rsbIn, 2, INT, Op.SUM)
            expect(
                "reduce_scatter_block in place",
                read(rsbIn, 2),
                List(2) { i -> (0 until p).sumOf { r -> r * 100 + 2 * me + i } },
            )
            ok()
            // A non-commutative op ("left" keeps the first operand) on unequal counts: rank 0's input, in rank order.
            val left =
                Op.create(
                    { input, inout, count, _ -> for (i in 0 until count) inout.putInt(i * 4, input.getInt(i * 4)) },
                    false,
                )
            val rl = buf(counts[me] * 4)
            c.ireduceScatter(input(me, total), rl, counts, INT, left).waitFor()
            expect("ireduce_scatter by a non-commutative user op", read(rl, counts[me]), List(counts[me]) { at + it })
            ok()
            val rlb = buf(8)
            c.reduceScatterBlock(input(me, 2 * p), rlb, 2, INT, left)
            expect("reduce_scatter_block by a non-commutative user op", read(rlb, 2), List(2) { 2 * me + it })
            ok()
            left.free()
            // A user op on elements of two ints (a contiguous run): allgather and fold, this rank's block kept.
            val pair = Datatype.contiguous(2, INT).commit()
            val pairSum =
                Op.create(
                    { input, inout, count, _ ->
                        for (i in 0 until 2 * count) inout.putInt(i * 4, input.getInt(i * 4) + inout.getInt(i * 4))
                    },
                    true,
                )
            val rp = buf(8)
            c.reduceScatterBlock(input(me, 2 * p), rp, 1, pair, pairSum)
            expect(
                "reduce_scatter_block of contiguous(2, INT) by a user op",
                read(rp, 2),
                List(2) { i -> (0 until p).sumOf { r -> r * 100 + 2 * me + i } },
            )
            ok()
            pairSum.free()
            pair.free()
            val sc = buf(8)
            c.scan(input(me, 2), sc, 2, INT, Op.SUM)
            expect("scan", read(sc, 2), List(2) { i -> (0..me).sumOf { r -> r * 100 + i } })
            ok()
            val ex = intsOf(-1, -1)
            c.exscan(input(me, 2), ex, 2, INT, Op.SUM)
            expect(
                "exscan",
                read(ex, 2),
                if (me == 0) listOf(-1, -1) else List(2) { i -> (0 until me).sumOf { r -> r * 100 + i } },
            )
            ok()
        }

        // gather(v), scatter(v).
        run {
            val root = (p - 1) / 2
            val g = if (me == root) buf(3 * p * 4) else null
            c.gather(input(me, 3), 3, INT, g, 3, INT, root)
            if (me == root) {
                expect("gather", read(g!!, 3 * p), List(3 * p) { (it / 3) * 100 + it % 3 })
                ok()
            }
            // gatherv: rank r sends r+1 ints, placed in reverse rank order.
            val counts = IntArray(p) { it + 1 }
            val displs = IntArray(p)
            run {
                var d = 0
                for (r in p - 1 downTo 0) {
                    displs[r] = d
                    d += counts[r]
                }
            }
            val gv = if (me == root) buf(counts.sum() * 4) else null
            c.gatherv(input(me, me + 1), me + 1, INT, gv, counts, displs, INT, root)
            if (me == root) {
                val want = IntArray(counts.sum())
                for (r in 0 until p) for (i in 0..r) want[displs[r] + i] = r * 100 + i
                expect("gatherv", read(gv!!, want.size), want.toList())
                ok()
            }
            val s = buf(8)
            c.scatter(if (me == root) input(root, 2 * p) else null, 2, INT, s, 2, INT, root)
            expect("scatter", read(s, 2), List(2) { root * 100 + 2 * me + it })
            ok()
            val sv = buf(counts[me] * 4)
            c.scatterv(
                if (me == root) input(root, counts.sum()) else null,
                counts,
                displs,
                INT,
                sv,
                counts[me],
                INT,
                root,
            )
            expect("scatterv", read(sv, counts[me]), List(counts[me]) { root * 100 + displs[me] + it })
            ok()
        }

        // allgather(v), alltoall(v).
        run {
            val ag = buf(2 * p * 4)
            c.allgather(input(me, 2), 2, INT, ag, 2, INT)
            val want = List(2 * p) { (it / 2) * 100 + it % 2 }
            expect("allgather", read(ag, 2 * p), want)
            ok()
            val agi = buf(2 * p * 4)
            agi.putInt(me * 8, me * 100)
            agi.putInt(me * 8 + 4, me * 100 + 1)
            c.allgather(Mpi.IN_PLACE, 0, INT, agi, 2, INT)
            expect("allgather in place", read(agi, 2 * p), want)
            ok()
            val counts = IntArray(p) { it + 1 }
            val displs = IntArray(p)
            for (r in 1 until p) displs[r] = displs[r - 1] + counts[r - 1]
            val agv = buf(counts.sum() * 4)
            c.allgatherv(input(me, me + 1), me + 1, INT, agv, counts, displs, INT)
            expect("allgatherv", read(agv, counts.sum()), List(p) { r -> List(r + 1) { r * 100 + it } }.flatten())
            ok()
            val a2a = buf(p * 4)
            c.alltoall(intsOf(*IntArray(p) { me * 100 + it }), 1, INT, a2a, 1, INT)
            expect("alltoall", read(a2a, p), List(p) { it * 100 + me })
            ok()
            // alltoallv: rank r sends j+1 ints to rank j.
            val sc = IntArray(p) { it + 1 }
            val sd = IntArray(p)
            for (j in 1 until p) sd[j] = sd[j - 1] + sc[j - 1]
            val rc = IntArray(p) { me + 1 }
            val rd = IntArray(p) { it * (me + 1) }
            val sendv = intsOf(*IntArray(sc.sum()) { me * 100 + it })
            val recvv = buf(p * (me + 1) * 4)
            c.alltoallv(sendv, sc, sd, INT, recvv, rc, rd, INT)
            expect(
                "alltoallv",
                read(recvv, p * (me + 1)),
                List(p) { r -> List(me + 1) { r * 100 + sd[me] + it } }.flatten(),
            )
            ok()
        }

        // Nonblocking collectives in flight together, completed by waitAll.
        run {
            val a = buf(8)
            val b = buf(p * 4)
            val d = if (me == 0) input(0, 3) else buf(12)
            val reqs =
                arrayOf<Request>(
                    c.iallreduce(input(me, 2), a, 2, INT, Op.SUM),
                    c.iallgather(intsOf(me), 1, INT, b, 1, INT),
                    c.ibcast(d, 3, INT, 0),
                    c.ibarrier(),
                )
            Request.waitAll(reqs)
            expect("iallreduce", read(a, 2), List(2) { i -> (0 until p).sumOf { r -> r * 100 + i } })
            expect("iallgather", read(b, p), List(p) { it })
            expect("ibcast", read(d, 3), listOf(0, 1, 2))
            ok()
            val t = c.iallreduce(intsOf(1), a, 1, INT, Op.SUM)
            var st = t.test()
            var spins = 0
            while (st == null) {
                st = t.test()
                if (++spins > 50_000_000) throw AssertionError("iallreduce never completed under test()")
            }
            expect("iallreduce by test", read(a, 1), listOf(p))
            ok()
        }

        // Bad calls raise MPI errors of the right class.
        run {
            expectError("bcast to root $p", ErrorClass.ERR_ROOT) { c.bcast(buf(4), 1, INT, p) }
            expectError("allgatherv with ${p + 1} counts", ErrorClass.ERR_ARG) {
                c.allgatherv(buf(4), 1, INT, buf(4 * (p + 1)), IntArray(p + 1) { 1 }, IntArray(p + 1) { it }, INT)
            }
            expectError("allreduce with MPI_REPLACE", ErrorClass.ERR_OP) {
                c.allreduce(buf(4), buf(4), 1, INT, Op.REPLACE)
            }
            expectError("allreduce with a negative count", ErrorClass.ERR_COUNT) {
                c.allreduce(buf(4), buf(4), -1, INT, Op.SUM)
            }
            expectError("allreduce into a too-small buffer", ErrorClass.ERR_BUFFER) {
                c.allreduce(buf(8), buf(4), 2, INT, Op.SUM)
            }
            expectError("allreduce of a big-endian buffer", ErrorClass.ERR_BUFFER) {
                c.allreduce(ByteBuffer.allocate(4).order(otherOrder()), buf(4), 1, INT, Op.SUM)
            }
            ok()
        }
        c.barrier()
        return checks
    }

    private fun otherOrder(): ByteOrder =
        if (ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN) ByteOrder.LITTLE_ENDIAN else ByteOrder.BIG_ENDIAN

    /**
     * The intercommunicator collectives on [ic]: barrier, bcast both ways (ROOT / PROC_NULL), allgather, alltoall,
     * allreduce; [lowSide] says which side this is ("a" and "b" give different inputs: side b's values are offset by
     * 1000).
     */
    @JvmStatic
    fun runInter(ic: Intercomm, sideB: Boolean): Int {
        val me = ic.rank
        val rs = ic.remoteSize
        val off = if (sideB) 1000 else 0
        val remoteOff = if (sideB) 0 else 1000
        var checks = 0
        ic.barrier()
        checks++
        // bcast from side a's rank 0 to side b.
        val b = buf(12)
        if (!sideB) {
            if (me == 0) {
                b.putInt(0, 1)
                b.putInt(4, 2)
                b.putInt(8, 3)
            }
            ic.bcast(b, 3, Datatype.INT, if (me == 0) Mpi.ROOT else Mpi.PROC_NULL)
        } else {
            ic.bcast(b, 3, Datatype.INT, 0)
            expect("intercomm bcast", read(b, 3), listOf(1, 2, 3))
        }
        checks++
        // bcast from side b's last rank to side a.
        val b2 = buf(4)
        if (sideB) {
            if (me == ic.size - 1) b2.putInt(0, 77)
            ic.bcast(b2, 1, Datatype.INT, if (me == ic.size - 1) Mpi.ROOT else Mpi.PROC_NULL)
        } else {
            ic.bcast(b2, 1, Datatype.INT, rs - 1)
            expect("intercomm bcast back", read(b2, 1), listOf(77))
        }
        checks++
        val ag = buf(rs * 8)
        ic.allgather(intsOf(off + me, off + me * 10), 2, Datatype.INT, ag, 2, Datatype.INT)
        expect(
            "intercomm allgather",
            read(ag, 2 * rs),
            List(rs) { listOf(remoteOff + it, remoteOff + it * 10) }.flatten(),
        )
        checks++
        val a2a = buf(rs * 4)
        ic.alltoall(intsOf(*IntArray(rs) { off + me * 10 + it }), 1, Datatype.INT, a2a, 1, Datatype.INT)
        expect("intercomm alltoall", read(a2a, rs), List(rs) { remoteOff + it * 10 + me })
        checks++
        val ar = buf(4)
        ic.allreduce(intsOf(off + me), ar, 1, Datatype.INT, Op.SUM)
        expect("intercomm allreduce", read(ar, 1), listOf((0 until rs).sumOf { remoteOff + it }))
        checks++
        checks += runInterRooted(ic, sideB)
        expectError("intercomm scan", ErrorClass.ERR_COMM) { ic.scan(buf(4), buf(4), 1, Datatype.INT, Op.SUM) }
        checks++
        expectError("intercomm reduce to root ${rs}", ErrorClass.ERR_ROOT) {
            ic.reduce(buf(4), null, 1, Datatype.INT, Op.SUM, rs)
        }
        checks++
        return checks
    }

    /**
     * The intercommunicator collectives beyond [runInter]'s: reduce (built-in and a non-commutative user op),
     * gather(v), scatter(v), allgatherv, alltoallv and reduce_scatter(_block), each in both directions where it has a
     * root, blocking and nonblocking, against a reference built from the remote group's inputs. Element i of rank r's
     * input on side a is `r*100 + i`, on side b `1000 + r*100 + i`.
     */
    private fun runInterRooted(ic: Intercomm, sideB: Boolean): Int {
        val me = ic.rank
        val ls = ic.size
        val rs = ic.remoteSize
        val off = if (sideB) 1000 else 0
        val remoteOff = if (sideB) 0 else 1000
        val INT = Datatype.INT
        var checks = 0
        fun mine(n: Int) = intsOf(*IntArray(n) { off + me * 100 + it })
        fun theirs(r: Int, i: Int) = remoteOff + r * 100 + i
        /** The root argument of side [rootSide] (true: b) with its root at [rootRank] of that side. */
        fun rootArg(rootSide: Boolean, rootRank: Int) =
            if (rootSide == sideB) (if (me == rootRank) Mpi.ROOT else Mpi.PROC_NULL) else rootRank
        fun atRoot(rootSide: Boolean, rootRank: Int) = rootSide == sideB && me == rootRank

        // reduce: to side a's last rank, then to side b's rank 0; SUM, and a non-commutative user op keeping the first
        // operand.
        for (rootSide in listOf(false, true)) {
            val rootRank = if (rootSide) 0 else (if (sideB) rs else ls) - 1
            val out = if (atRoot(rootSide, rootRank)) buf(12) else null
            ic.reduce(if (rootSide == sideB) null else mine(3), out, 3, INT, Op.SUM, rootArg(rootSide, rootRank))
            if (out != null) {
                expect(
                    "intercomm reduce SUM to side ${if (rootSide) "b" else "a"}",
                    read(out, 3),
                    List(3) { i -> (0 until rs).sumOf { theirs(it, i) } },
                )
                checks++
            }
            val first =
                Op.create(
                    { input, inout, count, _ -> for (i in 0 until count) inout.putInt(i * 4, input.getInt(i * 4)) },
                    false,
                )
            val out2 = if (atRoot(rootSide, rootRank)) buf(8) else null
            ic.ireduce(if (rootSide == sideB) null else mine(2), out2, 2, INT, first, rootArg(rootSide, rootRank))
                .waitFor()
            if (out2 != null) {
                expect("intercomm ireduce by a non-commutative user op", read(out2, 2), List(2) { theirs(0, it) })
                checks++
            }
            first.free()
        }

        // gather to side a's rank 0 (2 ints from each of side b); gatherv to side b's last rank (rank r of side a sends
        // r+1 ints, placed in reverse order).
        run {
            val out = if (atRoot(false, 0)) buf(2 * rs * 4) else null
            ic.gather(if (sideB) mine(2) else null, 2, INT, out, 2, INT, rootArg(false, 0))
            if (out != null) {
                expect("intercomm gather", read(out, 2 * rs), List(2 * rs) { theirs(it / 2, it % 2) })
                checks++
            }
            val bLast = (if (sideB) ls else rs) - 1
            val counts = IntArray(rs) { it + 1 }
            val displs = IntArray(rs)
            run {
                var d = 0
                for (r in rs - 1 downTo 0) {
                    displs[r] = d
                    d += counts[r]
                }
            }
            val outv = if (atRoot(true, bLast)) buf(counts.sum() * 4) else null
            ic.gatherv(
                if (!sideB) mine(me + 1) else null,
                me + 1,
                INT,
                outv,
                if (outv != null) counts else null,
                if (outv != null) displs else null,
                INT,
                rootArg(true, bLast),
            )
            if (outv != null) {
                val want = IntArray(counts.sum())
                for (r in 0 until rs) for (i in 0..r) want[displs[r] + i] = theirs(r, i)
                expect("intercomm gatherv", read(outv, want.size), want.toList())
                checks++
            }
        }

        // scatter from side a's rank 0 (2 ints to each of side b); scatterv from side b's rank 0 (r+1 ints to rank r of
        // side a, from displacement 2r).
        run {
            val root = atRoot(false, 0)
            val got = buf(8)
            ic.scatter(
                if (root) intsOf(*IntArray(2 * rs) { 5000 + it }) else null,
                2,
                INT,
                if (sideB) got else null,
                2,
                INT,
                rootArg(false, 0),
            )
            if (sideB) {
                expect("intercomm scatter", read(got, 2), List(2) { 5000 + 2 * me + it })
                checks++
            }
            val vroot = atRoot(true, 0)
            val counts = IntArray(rs) { it + 1 }
            val displs = IntArray(rs) { 2 * it }
            val gotv = buf((me + 1) * 4)
            val sendv = if (vroot) intsOf(*IntArray(2 * rs + rs) { 7000 + it }) else null
            ic.iscatterv(
                    sendv,
                    if (vroot) counts else null,
                    if (vroot) displs else null,
                    INT,
                    if (!sideB) gotv else null,
                    me + 1,
                    INT,
                    rootArg(true, 0),
                )
                .waitFor()
            if (!sideB) {
                expect("intercomm iscatterv", read(gotv, me + 1), List(me + 1) { 7000 + 2 * me + it })
                checks++
            }
        }

        // allgatherv: rank r sends r+1 ints; each rank gets every remote rank's, packed in rank order.
        run {
            val counts = IntArray(rs) { it + 1 }
            val displs = IntArray(rs)
            for (r in 1 until rs) displs[r] = displs[r - 1] + counts[r - 1]
            val out = buf(counts.sum() * 4)
            ic.allgatherv(mine(me + 1), me + 1, INT, out, counts, displs, INT)
            expect(
                "intercomm allgatherv",
                read(out, counts.sum()),
                List(rs) { r -> List(r + 1) { theirs(r, it) } }.flatten(),
            )
            checks++
        }

        // alltoallv: rank r sends j+1 ints to remote rank j (values off + r*100 + 10j + k), so it gets r+1 from each.
        run {
            val sc = IntArray(rs) { it + 1 }
            val sd = IntArray(rs)
            for (j in 1 until rs) sd[j] = sd[j - 1] + sc[j - 1]
            val send =
                intsOf(
                    *IntArray(sc.sum()) { k ->
                        val j = sd.indexOfLast { it <= k }
                        off + me * 100 + 10 * j + (k - sd[j])
                    }
                )
            val rc = IntArray(rs) { me + 1 }
            val rd = IntArray(rs) { it * (me + 1) }
            val out = buf(rs * (me + 1) * 4)
            ic.alltoallv(send, sc, sd, INT, out, rc, rd, INT)
            expect(
                "intercomm alltoallv",
                read(out, rs * (me + 1)),
                List(rs) { r -> List(me + 1) { k -> remoteOff + r * 100 + 10 * me + k } }.flatten(),
            )
            checks++
        }

        // reduce_scatter_block: both groups reduce a vector of ls*rs elements; each rank keeps its block of the remote
        // group's sum.
        run {
            val total = ls * rs
            val out = buf(rs * 4)
            ic.reduceScatterBlock(mine(total), out, rs, INT, Op.SUM)
            expect(
                "intercomm reduce_scatter_block",
                read(out, rs),
                List(rs) { i -> (0 until rs).sumOf { theirs(it, me * rs + i) } },
            )
            checks++
        }

        // reduce_scatter with unequal counts (20 elements: rank j keeps j+1, the last the rest), blocking and
        // nonblocking.
        run {
            val counts = IntArray(ls) { if (it < ls - 1) it + 1 else 20 - (ls - 1) * ls / 2 }
            val at = (0 until me).sumOf { counts[it] }
            for (blocking in listOf(true, false)) {
                val out = buf(counts[me] * 4)
                if (blocking) ic.reduceScatter(mine(20), out, counts, INT, Op.SUM)
                else ic.ireduceScatter(mine(20), out, counts, INT, Op.SUM).waitFor()
                expect(
                    "intercomm reduce_scatter (${if (blocking) "blocking" else "nonblocking"})",
                    read(out, counts[me]),
                    List(counts[me]) { i -> (0 until rs).sumOf { theirs(it, at + i) } },
                )
                checks++
            }
            // In flight together: a multi-stage reduce_scatter (local group, then the leaders), an allreduce
            // and a barrier over both groups, and a reduce; every rank starts them in one order, waits for all.
            val out = buf(counts[me] * 4)
            val ar = buf(4)
            val red = if (atRoot(false, 0)) buf(4) else null
            val reqs =
                arrayOf(
                    ic.ireduceScatter(mine(20), out, counts, INT, Op.SUM),
                    ic.iallreduce(intsOf(off + me), ar, 1, INT, Op.MAX),
                    ic.ibarrier(),
                    ic.ireduce(if (sideB) mine(1) else null, red, 1, INT, Op.MIN, rootArg(false, 0)),
                )
            Request.waitAll(reqs)
            expect(
                "intercomm ireduce_scatter beside other collectives",
                read(out, counts[me]),
                List(counts[me]) { i -> (0 until rs).sumOf { theirs(it, at + i) } },
            )
            expect("intercomm iallreduce beside other collectives", read(ar, 1), listOf(remoteOff + rs - 1))
            if (red != null) expect("intercomm ireduce beside other collectives", read(red, 1), listOf(theirs(0, 0)))
            checks++
        }
        return checks
    }

    /** Both kinds on [c]'s world: the intracommunicator checks, then an intercommunicator of ranks < 1 and the rest. */
    @JvmStatic
    fun runEverything(c: Intracomm): Int {
        var n = runAll(c)
        if (c.size >= 2) n += runInterSplit(c, 1) { half -> runAll(half) }
        return n
    }

    /**
     * [runInter] on an intercommunicator of [c]'s ranks below [low] (side a) and the rest (side b), then [alsoOnHalf]
     * on this rank's half; returns the checks passed.
     */
    @JvmStatic
    fun runInterSplit(c: Intracomm, low: Int, alsoOnHalf: (Intracomm) -> Int = { 0 }): Int {
        val sideB = c.rank >= low
        val half = c.split(if (sideB) 1 else 0, c.rank)!!
        half.setErrhandler(braid.mpi.ErrorHandler.ERRORS_RETURN)
        val ic = half.createIntercomm(0, c, if (sideB) 0 else low, 5)
        ic.setErrhandler(braid.mpi.ErrorHandler.ERRORS_RETURN)
        val n = runInter(ic, sideB) + alsoOnHalf(half)
        ic.free()
        half.free()
        return n
    }
}
