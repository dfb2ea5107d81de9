package braid.collectives

import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer

/**
 * The schedule generators: each appends one algorithm's steps, for this rank, to a [Schedule]. Offsets and lengths are
 * in bytes unless named `count` (elements of [es] bytes). A message's step number is computed the same way on both
 * sides (`phase shl 16 or index`), so the tag of every message of one call is unique per pair and direction.
 * Zero-length messages are left out only where both sides derive the length from the same arguments.
 */
internal class Algorithms(private val s: Schedule, private val r: Int, private val p: Int) {

    private fun mod(x: Int): Int = ((x % p) + p) % p

    // ## Barrier ##

    fun dissemination() {
        val zero = s.scratch(1)
        var d = 1
        var k = 0
        while (d < p) {
            s.recv(mod(r - d), zero, 0, 0, k)
            s.send(mod(r + d), zero, 0, 0, k)
            s.round()
            d = d shl 1
            k++
        }
    }

    // ## Broadcast ##

    /** Binomial broadcast of `buf[0, bytes)` from [root]. */
    fun bcastBinomial(buf: MutableDirectBuffer, bytes: Int, root: Int, phase: Int = 0) {
        val vr = mod(r - root)
        var mask = 1
        while (mask < p) {
            if (vr and mask != 0) {
                s.recv(mod(r - mask), buf, 0, bytes, phase shl 16)
                break
            }
            mask = mask shl 1
        }
        s.round()
        mask = mask shr 1
        while (mask > 0) {
            if (vr + mask < p) s.send(mod(r + mask), buf, 0, bytes, phase shl 16)
            mask = mask shr 1
        }
        s.round()
    }

    /** Broadcast as a binomial scatter of p chunks and a ring allgather of them. */
    fun bcastScatterAllgather(buf: MutableDirectBuffer, bytes: Int, root: Int) {
        val vr = mod(r - root)
        val chunk = (bytes + p - 1) / p
        fun at(v: Int): Int = minOf(bytes.toLong(), v.toLong() * chunk).toInt()
        var mask = 1
        while (mask < p) {
            if (vr and mask != 0) {
                val lo = at(vr)
                val hi = at(minOf(p, vr + mask))
                if (hi > lo) s.recv(mod(r - mask), buf, lo, hi - lo, 1 shl 16)
                break
            }
            mask = mask shl 1
        }
        s.round()
        mask = mask shr 1
        while (mask > 0) {
            if (vr + mask < p) {
                val lo = at(vr + mask)
                val hi = at(minOf(p, vr + 2 * mask))
                if (hi > lo) s.send(mod(r + mask), buf, lo, hi - lo, 1 shl 16)
            }
            mask = mask shr 1
        }
        s.round()
        for (step in 0 until p - 1) {
            val sb = mod(vr - step)
            val rb = mod(vr - step - 1)
            val sl = at(sb + 1) - at(sb)
            val rl = at(rb + 1) - at(rb)
            if (sl > 0) s.send(mod(r + 1), buf, at(sb), sl, (2 shl 16) or step)
            if (rl > 0) s.recv(mod(r - 1), buf, at(rb), rl, (2 shl 16) or step)
            s.round()
        }
    }

    // ## Reduce ##

    /**
     * Binomial reduce of [count] elements into [acc] (already holding this rank's input) at [root]. Commutative: the
     * tree is rooted at [root]. Non-commutative: rooted at rank 0 over ranks in order (each node combines `acc ∘ higher
     * ranks`), then 0 sends to [root], whose result lands in [rootOut].
     */
    fun reduceBinomial(
        acc: MutableDirectBuffer,
        count: Int,
        es: Int,
        root: Int,
        commutative: Boolean,
        rootOut: MutableDirectBuffer,
    ) {
        val bytes = count * es
        val treeRoot = if (commutative) root else 0
        val vr = mod(r - treeRoot)
        val tmp = s.scratch(bytes)
        var mask = 1
        var k = 0
        while (mask < p) {
            if (vr and mask == 0) {
                val src = vr or mask
                if (src < p) {
                    s.recv(mod(src + treeRoot), tmp, 0, bytes, (3 shl 16) or k)
                    s.round()
                    s.reduce(tmp, 0, acc, 0, count, false)
                    s.round()
                }
            } else {
                s.send(mod(vr - mask + treeRoot), acc, 0, bytes, (3 shl 16) or k)
                s.round()
                break
            }
            mask = mask shl 1
            k++
        }
        if (treeRoot != root) {
            if (r == treeRoot) s.send(root, acc, 0, bytes, 4 shl 16)
            if (r == root) s.recv(treeRoot, rootOut, 0, bytes, 4 shl 16)
            s.round()
        } else if (r == root && acc !== rootOut) {
            s.copy(acc, 0, rootOut, 0, bytes)
            s.round()
        }
    }

    // ## Allreduce ##

    private fun pof2(): Int = Integer.highestOneBit(p)

    /**
     * Folds ranks past the largest power of two into their neighbours: the even rank of each folded pair sends [input]
     * and waits for the result; the odd one combines it with its own into [acc]. Returns this rank's new rank, or -1.
     */
    private fun fold(
        input: DirectBuffer,
        acc: MutableDirectBuffer,
        tmp: MutableDirectBuffer,
        count: Int,
        es: Int,
    ): Int {
        val rem = p - pof2()
        if (r < 2 * rem) {
            if (r % 2 == 0) {
                s.send(r + 1, input, 0, count * es, 5 shl 16)
                s.round()
                return -1
            }
            s.recv(r - 1, tmp, 0, count * es, 5 shl 16)
            s.round()
            s.reduce3(tmp, 0, input, 0, acc, 0, count)
            s.round()
            return r / 2
        }
        return r - rem
    }

    /** Whether [fold] left this rank's partial result in acc (else it is still the input). */
    private fun foldedIntoAcc(): Boolean = r < 2 * (p - pof2())

    private fun unfold(acc: MutableDirectBuffer, count: Int, es: Int) {
        val rem = p - pof2()
        if (r < 2 * rem) {
            if (r % 2 == 1) s.send(r - 1, acc, 0, count * es, 6 shl 16) else s.recv(r + 1, acc, 0, count * es, 6 shl 16)
            s.round()
        }
    }

    private fun real(newRank: Int): Int {
        val rem = p - pof2()
        return if (newRank < rem) newRank * 2 + 1 else newRank + rem
    }

    /** A group of one: the result is the input. */
    private fun single(input: DirectBuffer, acc: MutableDirectBuffer, bytes: Int): Boolean {
        if (p != 1) return false
        s.copy(input, 0, acc, 0, bytes)
        s.round()
        return true
    }

    /**
     * Recursive doubling of [input] into [acc]; order-preserving. The first exchange sends the input itself and
     * combines it with what arrives straight into [acc] (MPICH's shape: one send and receive per round, the reduction
     * right after the receive, no copy first).
     */
    fun allreduceRecursiveDoubling(input: DirectBuffer, acc: MutableDirectBuffer, count: Int, es: Int) {
        val bytes = count * es
        if (single(input, acc, bytes)) return
        val tmp = s.scratch(bytes)
        val newRank = fold(input, acc, tmp, count, es)
        if (newRank >= 0) {
            var cur: DirectBuffer = if (foldedIntoAcc()) acc else input
            var mask = 1
            var k = 0
            while (mask < pof2()) {
                val dst = real(newRank xor mask)
                s.recv(dst, tmp, 0, bytes, (7 shl 16) or k)
                s.send(dst, cur, 0, bytes, (7 shl 16) or k)
                s.round()
                if (dst < r) s.reduce3(tmp, 0, cur, 0, acc, 0, count) else s.reduce3(cur, 0, tmp, 0, acc, 0, count)
                s.round()
                cur = acc
                mask = mask shl 1
                k++
            }
        }
        unfold(acc, count, es)
    }

    /**
     * Reduce-scatter ring over [acc] in p blocks; afterwards rank r's block r is complete. Commutative ops only.
     * [input] holds this rank's contribution (it may be [acc]): the first send reads it, and each block is combined
     * from it and what arrives into [acc] — every block arrives once, so the input is never copied.
     */
    fun reduceScatterRing(
        acc: MutableDirectBuffer,
        counts: IntArray,
        displs: IntArray,
        es: Int,
        tmp: MutableDirectBuffer,
        phase: Int,
        input: DirectBuffer = acc,
    ) {
        for (step in 0 until p - 1) {
            val sb = mod(r - step - 1)
            val rb = mod(r - step - 2)
            if (counts[sb] > 0)
                s.send(
                    mod(r + 1),
                    if (step == 0) input else acc,
                    displs[sb] * es,
                    counts[sb] * es,
                    (phase shl 16) or step,
                )
            if (counts[rb] > 0) s.recv(mod(r - 1), tmp, 0, counts[rb] * es, (phase shl 16) or step)
            s.round()
            s.reduce3(tmp, 0, input, displs[rb] * es, acc, displs[rb] * es, counts[rb])
            s.round()
        }
    }

    /** Ring allgather of p blocks in [buf] where rank r holds block r. */
    fun allgatherRing(buf: MutableDirectBuffer, counts: IntArray, displs: IntArray, es: Int, phase: Int) {
        for (step in 0 until p - 1) {
            val sb = mod(r - step)
            val rb = mod(r - step - 1)
            s.send(mod(r + 1), buf, displs[sb] * es, counts[sb] * es, (phase shl 16) or step)
            s.recv(mod(r - 1), buf, displs[rb] * es, counts[rb] * es, (phase shl 16) or step)
            s.round()
        }
    }

    fun allreduceRing(input: DirectBuffer, acc: MutableDirectBuffer, count: Int, es: Int) {
        if (single(input, acc, count * es)) return
        val (counts, displs) = blocks(count, p)
        val tmp = s.scratch(counts.max() * es)
        reduceScatterRing(acc, counts, displs, es, tmp, 8, input)
        allgatherRing(acc, counts, displs, es, 9)
    }

    /** Rabenseifner: recursive halving reduce-scatter, recursive doubling allgather, with the fold. */
    fun allreduceRabenseifner(input: DirectBuffer, acc: MutableDirectBuffer, count: Int, es: Int) {
        if (single(input, acc, count * es)) return
        val tmp = s.scratch(count * es)
        val newRank = fold(input, acc, tmp, count, es)
        if (newRank >= 0) {
            // The first halving step sends from the input and combines into acc the half it keeps; later steps work in
            // acc.
            var cur: DirectBuffer = if (foldedIntoAcc()) acc else input
            val pof2 = pof2()
            val (cnts, disps) = blocks(count, pof2)
            fun sum(from: Int, to: Int): Int {
                var n = 0
                for (i in from until to) n += cnts[i]
                return n
            }
            var sendIdx = 0
            var recvIdx = 0
            var lastIdx = pof2
            var mask = 1
            var k = 0
            while (mask < pof2) {
                val newDst = newRank xor mask
                val dst = real(newDst)
                val sendCnt: Int
                val recvCnt: Int
                if (newRank < newDst) {
                    sendIdx = recvIdx + pof2 / (mask * 2)
                    sendCnt = sum(sendIdx, lastIdx)
                    recvCnt = sum(recvIdx, sendIdx)
                } else {
                    recvIdx = sendIdx + pof2 / (mask * 2)
                    sendCnt = sum(sendIdx, recvIdx)
                    recvCnt = sum(recvIdx, lastIdx)
                }
                if (sendCnt > 0) s.send(dst, cur, disps[sendIdx] * es, sendCnt * es, (10 shl 16) or k)
                if (recvCnt > 0) s.recv(dst, tmp, disps[recvIdx] * es, recvCnt * es, (10 shl 16) or k)
                s.round()
                s.reduce3(tmp, disps[recvIdx] * es, cur, disps[recvIdx] * es, acc, disps[recvIdx] * es, recvCnt)
                s.round()
                cur = acc
                sendIdx = recvIdx
                mask = mask shl 1
                if (mask < pof2) lastIdx = recvIdx + pof2 / mask
                k++
            }
            mask = mask shr 1
            while (mask > 0) {
                val newDst = newRank xor mask
                val dst = real(newDst)
                val sendCnt: Int
                val recvCnt: Int
                if (newRank < newDst) {
                    if (mask != pof2 / 2) lastIdx += pof2 / (mask * 2)
                    recvIdx = sendIdx + pof2 / (mask * 2)
                    sendCnt = sum(sendIdx, recvIdx)
                    recvCnt = sum(recvIdx, lastIdx)
                } else {
                    recvIdx = sendIdx - pof2 / (mask * 2)
                    sendCnt = sum(sendIdx, lastIdx)
                    recvCnt = sum(recvIdx, sendIdx)
                }
                if (sendCnt > 0) s.send(dst, acc, disps[sendIdx] * es, sendCnt * es, (11 shl 16) or k)
                if (recvCnt > 0) s.recv(dst, acc, disps[recvIdx] * es, recvCnt * es, (11 shl 16) or k)
                s.round()
                if (newRank > newDst) sendIdx = recvIdx
                mask = mask shr 1
                k++
            }
        }
        unfold(acc, count, es)
    }

    // ## Allgather ##

    /** Recursive doubling allgather of equal blocks (p a power of two); rank r's block is in place. */
    fun allgatherRecursiveDoubling(buf: MutableDirectBuffer, blockBytes: Int) {
        var mask = 1
        var k = 0
        while (mask < p) {
            val dst = r xor mask
            val mine = (r / mask) * mask
            val theirs = (dst / mask) * mask
            s.send(dst, buf, mine * blockBytes, mask * blockBytes, (12 shl 16) or k)
            s.recv(dst, buf, theirs * blockBytes, mask * blockBytes, (12 shl 16) or k)
            s.round()
            mask = mask shl 1
            k++
        }
    }

    // ## Gather, scatter, alltoall ##

    fun gatherLinear(
        send: DirectBuffer,
        sendBytes: Int,
        recv: MutableDirectBuffer,
        counts: IntArray?,
        displs: IntArray?,
        es: Int,
        root: Int,
    ) {
        if (r == root) {
            for (i in 0 until p) {
                if (i == r) {
                    if (send !== recv) s.copy(send, 0, recv, displs!![i] * es, counts!![i] * es)
                } else s.recv(i, recv, displs!![i] * es, counts!![i] * es, 13 shl 16)
            }
        } else {
            s.send(root, send, 0, sendBytes, 13 shl 16)
        }
        s.round()
    }

    fun scatterLinear(
        send: DirectBuffer,
        counts: IntArray?,
        displs: IntArray?,
        recv: MutableDirectBuffer,
        recvBytes: Int,
        es: Int,
        root: Int,
    ) {
        if (r == root) {
            for (i in 0 until p) {
                if (i == r) {
                    if (send !== recv) s.copy(send, displs!![i] * es, recv, 0, counts!![i] * es)
                } else s.send(i, send, displs!![i] * es, counts!![i] * es, 14 shl 16)
            }
        } else {
            s.recv(root, recv, 0, recvBytes, 14 shl 16)
        }
        s.round()
    }

    fun alltoallPairwise(
        send: DirectBuffer,
        sc: IntArray,
        sd: IntArray,
        recv: MutableDirectBuffer,
        rc: IntArray,
        rd: IntArray,
        es: Int,
    ) {
        s.copy(send, sd[r] * es, recv, rd[r] * es, minOf(sc[r], rc[r]) * es)
        s.round()
        for (step in 1 until p) {
            val dst = mod(r + step)
            val src = mod(r - step)
            s.send(dst, send, sd[dst] * es, sc[dst] * es, (15 shl 16) or step)
            s.recv(src, recv, rd[src] * es, rc[src] * es, (15 shl 16) or step)
            s.round()
        }
    }

    // ## Scan, exscan ##

    /**
     * Prefix reduction by recursive doubling (MPICH's): [partial] holds this rank's input and travels; [out] gets the
     * ranks below (exclusive) or up to this one (inclusive, and then [out] holds this rank's input at the start). Rank
     * 0's [out] is left as it was for exscan.
     */
    fun prefix(
        partial: MutableDirectBuffer,
        out: MutableDirectBuffer,
        count: Int,
        es: Int,
        commutative: Boolean,
        exclusive: Boolean,
    ) {
        val bytes = count * es
        val tmp = s.scratch(bytes)
        val phase = if (exclusive) 17 else 16
        var mask = 1
        var k = 0
        var first = exclusive
        while (mask < p) {
            val dst = r xor mask
            if (dst < p) {
                s.send(dst, partial, 0, bytes, (phase shl 16) or k)
                s.recv(dst, tmp, 0, bytes, (phase shl 16) or k)
                s.round()
                if (r > dst) {
                    s.reduce(tmp, 0, partial, 0, count, true)
                    if (first) {
                        s.copy(tmp, 0, out, 0, bytes)
                        first = false
                    } else s.reduce(tmp, 0, out, 0, count, true)
                } else {
                    s.reduce(tmp, 0, partial, 0, count, commutative)
                }
                s.round()
            }
            mask = mask shl 1
            k++
        }
    }

    companion object {
        /** [count] elements cut into [n] blocks as even as can be (the first ones one larger). */
        fun blocks(count: Int, n: Int): Pair<IntArray, IntArray> {
            val counts = IntArray(n) { count / n + if (it < count % n) 1 else 0 }
            val displs = IntArray(n)
            for (i in 1 until n) displs[i] = displs[i - 1] + counts[i - 1]
            return counts to displs
        }
    }
}
