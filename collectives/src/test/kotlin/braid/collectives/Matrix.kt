package braid.collectives

import org.agrona.concurrent.UnsafeBuffer

/**
 * The test matrix one rank runs on a group: every operation × datatype × reduction (built-in and user, commutative or
 * not) × roots × a few counts, results checked against [Reference]. Every rank runs the same sequence (collectives are
 * called in the same order everywhere). [forced] groups run the same allreduce cases under each algorithm. Returns the
 * number of collectives run; throws with the first mismatches.
 */
class Matrix(
    private val group: CollectiveGroup,
    private val timeoutMillis: Long = 60_000,
    private val quick: Boolean = false,
) {
    private val p = group.size
    private val r = group.rank
    private val failures = ArrayList<String>()
    var runs = 0
        private set

    private fun fail(what: String) {
        if (failures.size < 20) failures += "rank $r of $p: $what"
    }

    private fun roots(): List<Int> = listOf(0, p - 1, p / 2).distinct()

    private fun done(req: CollectiveRequest) {
        req.waitFor(timeoutMillis)
        runs++
    }

    fun runAll(): Int {
        reductions()
        userReductions()
        movement()
        check(failures.isEmpty()) { "${failures.size} mismatches:\n" + failures.joinToString("\n") }
        return runs
    }

    /** The expected reduction over ranks [from]..[to) of elements of [count] (salted inputs). */
    private fun expected(t: Datatype, op: ReduceOp, count: Int, salt: Int, from: Int, to: Int): UnsafeBuffer {
        val acc = Reference.buffer(count * t.size)
        Reference.fill(acc, 0, t, from, count, salt, op)
        val x = Reference.buffer(t.size)
        for (rank in from + 1 until to) for (i in 0 until count) {
            Reference.put(x, 0, t, rank, i, salt, op)
            Reference.combine(t, op, acc, i * t.size, x, 0)
        }
        return acc
    }

    private fun compare(
        what: String,
        t: Datatype,
        got: UnsafeBuffer,
        gotOff: Int,
        exp: UnsafeBuffer,
        expOff: Int,
        count: Int,
    ) {
        for (i in 0 until count) {
            if (!Reference.same(t, got, gotOff + i * t.size, exp, expOff + i * t.size, p)) {
                fail("$what: element $i differs")
                return
            }
        }
    }

    private fun reductions() {
        val counts = if (quick) listOf(1, 9) else listOf(0, 1, 9, 70)
        var salt = 1
        for (t in Datatype.entries) for (op in ReduceOp.entries) {
            if (!t.supports(op)) continue
            for (count in counts) {
                salt++
                val es = t.size
                val send = Reference.buffer(count * es * p)
                val recv = Reference.buffer(count * es * p)
                Reference.fill(send, 0, t, r, count, salt, op)
                val all = expected(t, op, count, salt, 0, p)
                val what = "$op on $t × $count"
                done(group.startAllreduce(send, 0, recv, 0, count, t, op))
                compare("allreduce $what", t, recv, 0, all, 0, count)
                // in place
                Reference.fill(recv, 0, t, r, count, salt, op)
                done(group.startAllreduce(null, 0, recv, 0, count, t, op))
                compare("allreduce in place $what", t, recv, 0, all, 0, count)
                for (root in roots()) {
                    recv.setMemory(0, count * es, 0)
                    done(group.startReduce(send, 0, if (r == root) recv else null, 0, count, t, op, root))
                    if (r == root) compare("reduce to $root $what", t, recv, 0, all, 0, count)
                }
                done(group.startScan(send, 0, recv, 0, count, t, op))
                compare("scan $what", t, recv, 0, expected(t, op, count, salt, 0, r + 1), 0, count)
                done(group.startExscan(send, 0, recv, 0, count, t, op))
                if (r > 0) compare("exscan $what", t, recv, 0, expected(t, op, count, salt, 0, r), 0, count)
                if (count <= 9) {
                    // reduce-scatter-block: p blocks of count, rank r keeps block r
                    Reference.fill(send, 0, t, r, count * p, salt, op)
                    done(group.startReduceScatterBlock(send, 0, recv, 0, count, t, op))
                    val full = expected(t, op, count * p, salt, 0, p)
                    compare("reduce-scatter-block $what", t, recv, 0, full, r * count * es, count)
                }
            }
        }
    }

    private fun userExpected(u: UserReduction, t: Datatype, count: Int, salt: Int, from: Int, to: Int): UnsafeBuffer {
        val acc = Reference.buffer(count * t.size)
        Reference.fill(acc, 0, t, from, count, salt, null)
        val x = Reference.buffer(count * t.size)
        for (rank in from + 1 until to) {
            Reference.fill(x, 0, t, rank, count, salt, null)
            Reference.combineUser(u, t, acc, x, count)
        }
        return acc
    }

    private fun userReductions() {
        var salt = 1000
        for ((u, t) in listOf(Reference.MatMul to Datatype.INT64, Reference.MaxAbs to Datatype.INT32)) {
            for (count in if (quick) listOf(4) else listOf(4, 8, 400)) {
                salt++
                val es = t.size
                val send = Reference.buffer(count * es * p)
                val recv = Reference.buffer(count * es * p)
                Reference.fill(send, 0, t, r, count, salt, null)
                val all = userExpected(u, t, count, salt, 0, p)
                val what = "$u on $t × $count"
                done(group.startAllreduce(send, 0, recv, 0, count, t, u))
                compare("allreduce $what", t, recv, 0, all, 0, count)
                for (root in roots()) {
                    recv.setMemory(0, count * es, 0)
                    done(group.startReduce(send, 0, if (r == root) recv else null, 0, count, t, u, root))
                    if (r == root) compare("reduce to $root $what", t, recv, 0, all, 0, count)
                }
                done(group.startScan(send, 0, recv, 0, count, t, u))
                compare("scan $what", t, recv, 0, userExpected(u, t, count, salt, 0, r + 1), 0, count)
                done(group.startExscan(send, 0, recv, 0, count, t, u))
                if (r > 0) compare("exscan $what", t, recv, 0, userExpected(u, t, count, salt, 0, r), 0, count)
                Reference.fill(send, 0, t, r, count * p, salt, null)
                done(group.startReduceScatterBlock(send, 0, recv, 0, count, t, u))
                compare(
                    "reduce-scatter-block $what",
                    t,
                    recv,
                    0,
                    userExpected(u, t, count * p, salt, 0, p),
                    r * count * es,
                    count,
                )
            }
        }
    }

    private fun movement() {
        var salt = 5000
        val types =
            if (quick) listOf(Datatype.INT32)
            else listOf(Datatype.BYTE, Datatype.INT16, Datatype.DOUBLE_INT, Datatype.INT64)
        val ranksOf = { x: Int -> x }
        for (t in types) for (count in if (quick) listOf(3) else listOf(0, 1, 5, 3000)) {
            salt++
            val es = t.size
            val what = "$t × $count"
            // barrier
            done(group.startBarrier())
            // broadcast
            val buf = Reference.buffer(count * es)
            for (root in roots()) {
                if (r == root) Reference.fill(buf, 0, t, root, count, salt, null) else buf.setMemory(0, count * es, 0)
                done(group.startBroadcast(buf, 0, count, t, root))
                val exp = Reference.buffer(count * es).also { Reference.fill(it, 0, t, root, count, salt, null) }
                compare("broadcast from $root $what", t, buf, 0, exp, 0, count)
            }
            // allgather (+ in place)
            val mine = Reference.buffer(count * es).also { Reference.fill(it, 0, t, r, count, salt, null) }
            val out = Reference.buffer(count * es * p)
            val exp =
                Reference.buffer(count * es * p).also { e ->
                    for (k in 0 until p) Reference.fill(e, k * count * es, t, k, count, salt, null)
                }
            done(group.startAllgather(mine, 0, out, 0, count, t))
            compare("allgather $what", t, out, 0, exp, 0, count * p)
            out.setMemory(0, count * es * p, 0)
            Reference.fill(out, r * count * es, t, r, count, salt, null)
            done(group.startAllgather(null, 0, out, 0, count, t))
            compare("allgather in place $what", t, out, 0, exp, 0, count * p)
            // allgatherv: rank k contributes (k % 3) * count elements at a gap
            val vc = IntArray(p) { (it % 3) * count }
            val vd = IntArray(p).also { for (k in 1 until p) it[k] = it[k - 1] + vc[k - 1] + 1 }
            val vExtent = vd[p - 1] + vc[p - 1]
            val vOut = Reference.buffer(vExtent * es)
            val vMine = Reference.buffer(maxOf(1, vc[r]) * es).also { Reference.fill(it, 0, t, r, vc[r], salt, null) }
            done(group.startAllgatherv(vMine, 0, vOut, 0, vc, vd, t))
            for (k in 0 until p) compare(
                "allgatherv block $k $what",
                t,
                vOut,
                vd[k] * es,
                Reference.buffer(maxOf(1, vc[k]) * es).also { Reference.fill(it, 0, t, k, vc[k], salt, null) },
                0,
                vc[k],
            )
            for (root in roots()) {
                // gather / gatherv
                out.setMemory(0, count * es * p, 0)
                done(group.startGather(mine, 0, if (r == root) out else null, 0, count, t, root))
                if (r == root) compare("gather to $root $what", t, out, 0, exp, 0, count * p)
                vOut.setMemory(0, vExtent * es, 0)
                done(
                    group.startGatherv(
                        vMine,
                        0,
                        vc[r],
                        if (r == root) vOut else null,
                        0,
                        if (r == root) vc else null,
                        if (r == root) vd else null,
                        t,
                        root,
                    )
                )
                if (r == root)
                    for (k in 0 until p) compare(
                        "gatherv block $k to $root $what",
                        t,
                        vOut,
                        vd[k] * es,
                        Reference.buffer(maxOf(1, vc[k]) * es).also { Reference.fill(it, 0, t, k, vc[k], salt, null) },
                        0,
                        vc[k],
                    )
                // scatter / scatterv: the root sends rank k its own expected block
                val got = Reference.buffer(maxOf(count, vc.max()) * es)
                done(group.startScatter(if (r == root) exp else null, 0, got, 0, count, t, root))
                compare("scatter from $root $what", t, got, 0, mine, 0, count)
                val vAll =
                    Reference.buffer(vExtent * es).also { e ->
                        for (k in 0 until p) Reference.fill(e, vd[k] * es, t, k, vc[k], salt, null)
                    }
                done(
                    group.startScatterv(
                        if (r == root) vAll else null,
                        0,
                        if (r == root) vc else null,
                        if (r == root) vd else null,
                        got,
                        0,
                        vc[r],
                        t,
                        root,
                    )
                )
                compare("scatterv from $root $what", t, got, 0, vMine, 0, vc[r])
            }
            // alltoall: block for rank k from rank j = fill(rank j*p+k)
            val aSend =
                Reference.buffer(count * es * p).also { b ->
                    for (k in 0 until p) Reference.fill(b, k * count * es, t, r * p + k, count, salt, null)
                }
            val aRecv = Reference.buffer(count * es * p)
            done(group.startAlltoall(aSend, 0, aRecv, 0, count, t))
            for (j in 0 until p) compare(
                "alltoall block from $j $what",
                t,
                aRecv,
                j * count * es,
                Reference.buffer(maxOf(1, count) * es).also { Reference.fill(it, 0, t, j * p + r, count, salt, null) },
                0,
                count,
            )
            // alltoallv: rank j sends rank k ((j + k) % 3) * count elements
            val sc = IntArray(p) { ((r + it) % 3) * count }
            val sd = IntArray(p).also { for (k in 1 until p) it[k] = it[k - 1] + sc[k - 1] }
            val rc = IntArray(p) { ((it + r) % 3) * count }
            val rd = IntArray(p).also { for (k in 1 until p) it[k] = it[k - 1] + rc[k - 1] + 2 }
            val avSend =
                Reference.buffer(maxOf(1, sd[p - 1] + sc[p - 1]) * es).also { b ->
                    for (k in 0 until p) Reference.fill(b, sd[k] * es, t, r * p + k, sc[k], salt, null)
                }
            val avRecv = Reference.buffer(maxOf(1, rd[p - 1] + rc[p - 1]) * es)
            done(group.startAlltoallv(avSend, 0, sc, sd, avRecv, 0, rc, rd, t))
            for (j in 0 until p) compare(
                "alltoallv block from $j $what",
                t,
                avRecv,
                rd[j] * es,
                Reference.buffer(maxOf(1, rc[j]) * es).also { Reference.fill(it, 0, t, j * p + r, rc[j], salt, null) },
                0,
                rc[j],
            )
            ranksOf(0)
        }
    }

    /** The allreduce cases again under one forced algorithm (the group's tuning forces it). */
    fun allreduceCases(): Int {
        var salt = 9000
        for ((t, op) in
            listOf(
                Datatype.INT64 to ReduceOp.SUM,
                Datatype.DOUBLE to ReduceOp.SUM,
                Datatype.INT32 to ReduceOp.BXOR,
                Datatype.FLOAT to ReduceOp.MAX,
            )) {
            for (count in listOf(1, 7, 1000, 5003)) {
                salt++
                val send = Reference.buffer(count * t.size)
                val recv = Reference.buffer(count * t.size)
                Reference.fill(send, 0, t, r, count, salt, op)
                done(group.startAllreduce(send, 0, recv, 0, count, t, op))
                compare(
                    "allreduce $op on $t × $count (${group.tuning.forced(CollectiveOp.ALLREDUCE)})",
                    t,
                    recv,
                    0,
                    expected(t, op, count, salt, 0, p),
                    0,
                    count,
                )
            }
        }
        for (count in listOf(4, 4000)) {
            salt++
            val send = Reference.buffer(count * 8)
            val recv = Reference.buffer(count * 8)
            Reference.fill(send, 0, Datatype.INT64, r, count, salt, null)
            done(group.startAllreduce(send, 0, recv, 0, count, Datatype.INT64, Reference.MatMul))
            compare(
                "allreduce MatMul × $count",
                Datatype.INT64,
                recv,
                0,
                userExpected(Reference.MatMul, Datatype.INT64, count, salt, 0, p),
                0,
                count,
            )
        }
        for (count in listOf(10, 8_000)) {
            salt++
            val buf = Reference.buffer(count * 4)
            if (r == p - 1) Reference.fill(buf, 0, Datatype.INT32, r, count, salt, null)
            done(group.startBroadcast(buf, 0, count, Datatype.INT32, p - 1))
            compare(
                "broadcast × $count (${group.tuning.forced(CollectiveOp.BROADCAST)})",
                Datatype.INT32,
                buf,
                0,
                Reference.buffer(count * 4).also { Reference.fill(it, 0, Datatype.INT32, p - 1, count, salt, null) },
                0,
                count,
            )
            val out = Reference.buffer(count * 4 * p)
            val mine = Reference.buffer(count * 4).also { Reference.fill(it, 0, Datatype.INT32, r, count, salt, null) }
            done(group.startAllgather(mine, 0, out, 0, count, Datatype.INT32))
            for (k in 0 until p) compare(
                "allgather block $k × $count (${group.tuning.forced(CollectiveOp.ALLGATHER)})",
                Datatype.INT32,
                out,
                k * count * 4,
                Reference.buffer(count * 4).also { Reference.fill(it, 0, Datatype.INT32, k, count, salt, null) },
                0,
                count,
            )
        }
        check(failures.isEmpty()) { "${failures.size} mismatches:\n" + failures.joinToString("\n") }
        return runs
    }

    companion object {
        /** The tunings the forced-algorithm cases run under. */
        val FORCED: List<CollectiveTuning> =
            listOf(
                CollectiveTuning.DEFAULT.withAlgorithm(CollectiveOp.ALLREDUCE, CollectiveAlgorithm.RECURSIVE_DOUBLING)
                    .withAlgorithm(CollectiveOp.BROADCAST, CollectiveAlgorithm.BINOMIAL)
                    .withAlgorithm(CollectiveOp.ALLGATHER, CollectiveAlgorithm.RECURSIVE_DOUBLING),
                CollectiveTuning.DEFAULT.withAlgorithm(CollectiveOp.ALLREDUCE, CollectiveAlgorithm.RING)
                    .withAlgorithm(CollectiveOp.BROADCAST, CollectiveAlgorithm.SCATTER_ALLGATHER)
                    .withAlgorithm(CollectiveOp.ALLGATHER, CollectiveAlgorithm.RING),
                CollectiveTuning.DEFAULT.withAlgorithm(CollectiveOp.ALLREDUCE, CollectiveAlgorithm.RABENSEIFNER),
            )
    }
}
