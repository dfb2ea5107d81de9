package braid.core

import braid.testsupport.Deadline
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import java.nio.ByteBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.concurrent.UnsafeBuffer

/** An off-heap buffer of [size] bytes. */
fun direct(size: Int): UnsafeBuffer = UnsafeBuffer(ByteBuffer.allocateDirect(size))

/** Writes [v] as one element of [type] at [i]. */
fun MutableDirectBuffer.putElement(i: Int, type: AtomicDatatype, v: Number) {
    when (type) {
        AtomicDatatype.INT32,
        AtomicDatatype.UINT32 -> putInt(i, v.toLong().toInt())
        AtomicDatatype.INT64,
        AtomicDatatype.UINT64 -> putLong(i, v.toLong())
        AtomicDatatype.FLOAT -> putFloat(i, v.toFloat())
        AtomicDatatype.DOUBLE -> putDouble(i, v.toDouble())
    }
}

/** The element of [type] at [i], as a Long (integers) or a Double (floating point). */
fun MutableDirectBuffer.element(i: Int, type: AtomicDatatype): Number =
    when (type) {
        AtomicDatatype.INT32,
        AtomicDatatype.UINT32 -> getInt(i).toLong()
        AtomicDatatype.INT64,
        AtomicDatatype.UINT64 -> getLong(i)
        AtomicDatatype.FLOAT -> getFloat(i).toDouble()
        AtomicDatatype.DOUBLE -> getDouble(i)
    }

/**
 * RMA and atomics every rail must carry, whatever its transport: writes and reads of any size (pieces larger than one
 * record), every atomic operation on every type it applies to, the target's refusals (key, bounds, access) as error
 * completions that name what was wrong, local refusals as return codes, and the READ/WRITE/REMOTE_* counters. Each
 * rail's spec runs these with [open] (`count` endpoints); [label] prefixes the test names when a spec runs it twice.
 *
 * [targetChecks] false: the rail's target is a native provider's, not Braid's [braid.provider.RmaEngine], so the two
 * tests that hold the target to Braid's own refusal messages and to its REMOTE_READ/REMOTE_WRITE counting are left out
 * (the native rail's own spec says what its providers answer instead); every other test runs unchanged.
 */
fun FunSpec.rmaContract(label: String = "", targetChecks: Boolean = true, open: (count: Int) -> TestFabric) {
    fun TestFabric.Node.register(size: Int, access: Int = MrAccess.REMOTE, key: Long = 0): MemoryRegion =
        domain.registerMemory(direct(size), access, key)

    test(
        label +
            "a write lands in the target's region at the offset, and a read brings it back, in pieces larger than one record"
    ) {
        open(2).use { f ->
            val (a, b) = f.nodes
            val mr = b.register(3 shl 20)
            for (size in listOf(0, 1, 100, 70_000, 2_500_000)) {
                val src = direct(size + 8)
                for (i in 0 until size) src.putByte(i + 8, (i * 7 + size).toByte())
                a.ep.tryWrite(src, 8, size, f.addrs[0][1], 1000, mr.key, "w$size") shouldBe 0
                val w = a.await(1, others = listOf(b)).single().shouldBeInstanceOf<Completion>()
                w.context shouldBe "w$size"
                w.flags shouldBe (OpFlags.RMA or OpFlags.WRITE)
                w.len shouldBe size.toLong()
                for (i in 0 until size step maxOf(1, size / 1000)) mr.buffer.getByte(1000 + i) shouldBe
                    (i * 7 + size).toByte()
                val dst = direct(size + 4)
                a.ep.tryRead(dst, 4, size, f.addrs[0][1], 1000, mr.key, "r$size") shouldBe 0
                val r = a.await(1, others = listOf(b)).single().shouldBeInstanceOf<Completion>()
                r.flags shouldBe (OpFlags.RMA or OpFlags.READ)
                r.len shouldBe size.toLong()
                for (i in 0 until size) if (dst.getByte(4 + i) != (i * 7 + size).toByte())
                    error("read byte $i of $size differs")
            }
        }
    }

    // (type, op, old, operand, compare, new): what the target holds after, the fetch returning old.
    class Case(
        val type: AtomicDatatype,
        val op: AtomicOp,
        val old: Number,
        val x: Number,
        val cmp: Number,
        val new: Number,
    )
    val cases = buildList {
        for (t in listOf(AtomicDatatype.INT32, AtomicDatatype.INT64)) {
            add(Case(t, AtomicOp.MIN, -5, 3, 0, -5))
            add(Case(t, AtomicOp.MAX, -5, 3, 0, 3))
            add(Case(t, AtomicOp.SUM, 10, -3, 0, 7))
            add(Case(t, AtomicOp.PROD, 6, -7, 0, -42))
            add(Case(t, AtomicOp.BOR, 12, 3, 0, 15))
            add(Case(t, AtomicOp.BAND, 12, 10, 0, 8))
            add(Case(t, AtomicOp.BXOR, 12, 10, 0, 6))
            add(Case(t, AtomicOp.LOR, 0, 9, 0, 1))
            add(Case(t, AtomicOp.LAND, 5, 0, 0, 0))
            add(Case(t, AtomicOp.LXOR, 5, 9, 0, 0))
            add(Case(t, AtomicOp.ATOMIC_WRITE, 5, 9, 0, 9))
            add(Case(t, AtomicOp.ATOMIC_READ, 5, 9, 0, 5))
            add(Case(t, AtomicOp.CSWAP, 5, 9, 5, 9))
            add(Case(t, AtomicOp.CSWAP, 5, 9, 4, 5))
        }
        // Unsigned: -1 is the largest value, so MIN keeps the operand and MAX the old value.
        add(Case(AtomicDatatype.UINT32, AtomicOp.MIN, -1, 3, 0, 3))
        add(Case(AtomicDatatype.UINT32, AtomicOp.MAX, -1, 3, 0, -1))
        add(Case(AtomicDatatype.UINT64, AtomicOp.MIN, -1, 3, 0, 3))
        add(Case(AtomicDatatype.UINT64, AtomicOp.MAX, -1, 3, 0, -1))
        add(Case(AtomicDatatype.UINT64, AtomicOp.SUM, -1, 2, 0, 1))
        add(Case(AtomicDatatype.UINT32, AtomicOp.BXOR, 0xF0, 0xFF, 0, 0x0F))
        add(Case(AtomicDatatype.UINT64, AtomicOp.CSWAP, -1, 7, -1, 7))
        for (t in listOf(AtomicDatatype.FLOAT, AtomicDatatype.DOUBLE)) {
            add(Case(t, AtomicOp.MIN, 2.5, 1.25, 0, 1.25))
            add(Case(t, AtomicOp.MAX, 2.5, 1.25, 0, 2.5))
            add(Case(t, AtomicOp.SUM, 2.5, 1.25, 0, 3.75))
            add(Case(t, AtomicOp.PROD, 2.5, -2.0, 0, -5.0))
            add(Case(t, AtomicOp.ATOMIC_WRITE, 2.5, 0.5, 0, 0.5))
            add(Case(t, AtomicOp.ATOMIC_READ, 2.5, 0.5, 0, 2.5))
            add(Case(t, AtomicOp.CSWAP, 2.5, 0.5, 2.5, 0.5))
            add(Case(t, AtomicOp.CSWAP, 2.5, 0.5, 2.4, 2.5))
        }
    }

    test(
        label +
            "every atomic operation on every type it applies to: the target holds old OP operand, the fetch returns old"
    ) {
        open(2).use { f ->
            val (a, b) = f.nodes
            val mr = b.register(cases.size * 3 * 8)
            val operand = direct(8)
            val compare = direct(8)
            val result = direct(8)
            val dest = f.addrs[0][1]
            var slot = 0
            for (c in cases) {
                val forms =
                    when (c.op) {
                        AtomicOp.CSWAP -> listOf(AtomicForm.COMPARE)
                        AtomicOp.ATOMIC_READ -> listOf(AtomicForm.FETCH)
                        else -> listOf(AtomicForm.UPDATE, AtomicForm.FETCH)
                    }
                for (form in forms) {
                    val at = 8 * slot++
                    val what = "${c.type} ${c.op} via $form"
                    mr.buffer.putElement(at, c.type, c.old)
                    operand.putElement(0, c.type, c.x)
                    compare.putElement(0, c.type, c.cmp)
                    result.putLong(0, 0x5555)
                    val rc =
                        when (form) {
                            AtomicForm.UPDATE ->
                                a.ep.tryAtomic(operand, 0, 1, dest, at.toLong(), mr.key, c.type, c.op, what)
                            AtomicForm.FETCH ->
                                a.ep.tryFetchAtomic(
                                    operand,
                                    0,
                                    1,
                                    result,
                                    0,
                                    dest,
                                    at.toLong(),
                                    mr.key,
                                    c.type,
                                    c.op,
                                    what,
                                )
                            AtomicForm.COMPARE ->
                                a.ep.tryCompareAtomic(
                                    operand,
                                    0,
                                    1,
                                    compare,
                                    0,
                                    result,
                                    0,
                                    dest,
                                    at.toLong(),
                                    mr.key,
                                    c.type,
                                    c.op,
                                    what,
                                )
                        }
                    rc shouldBe 0
                    val done = a.await(1, others = listOf(b)).single()
                    if (done !is Completion) error("$what: $done")
                    done.flags shouldBe
                        (OpFlags.ATOMIC or if (form == AtomicForm.UPDATE) OpFlags.WRITE else OpFlags.READ)
                    val expectNew =
                        UnsafeBuffer(ByteArray(8)).also { it.putElement(0, c.type, c.new) }.element(0, c.type)
                    val expectOld =
                        UnsafeBuffer(ByteArray(8)).also { it.putElement(0, c.type, c.old) }.element(0, c.type)
                    check(mr.buffer.element(at, c.type) == expectNew) {
                        "$what: target holds ${mr.buffer.element(at, c.type)}, expected $expectNew"
                    }
                    if (form != AtomicForm.UPDATE)
                        check(result.element(0, c.type) == expectOld) {
                            "$what: fetched ${result.element(0, c.type)}, expected $expectOld"
                        }
                }
            }
        }
    }

    test(label + "an atomic of several elements applies to each, and atomicValid says how many fit") {
        open(2).use { f ->
            val (a, b) = f.nodes
            val mr = b.register(4096)
            val n = a.ep.fetchAtomicValid(AtomicDatatype.INT64, AtomicOp.SUM)
            n shouldBeGreaterThan 3
            a.ep.compareAtomicValid(AtomicDatatype.INT64, AtomicOp.CSWAP) shouldBe n / 2
            a.ep.atomicValid(AtomicDatatype.DOUBLE, AtomicOp.BOR) shouldBe 0
            a.ep.atomicValid(AtomicDatatype.INT32, AtomicOp.ATOMIC_READ) shouldBe 0 // reading needs a fetching form
            val operand = direct(8 * n)
            val result = direct(8 * n)
            for (i in 0 until n) {
                operand.putLong(8 * i, i.toLong())
                mr.buffer.putLong(8 * i, 100L * i)
            }
            a.ep.tryFetchAtomic(
                operand,
                0,
                n,
                result,
                0,
                f.addrs[0][1],
                0,
                mr.key,
                AtomicDatatype.INT64,
                AtomicOp.SUM,
                "many",
            ) shouldBe 0
            a.await(1, others = listOf(b)).single().shouldBeInstanceOf<Completion>()
            (0 until n).map { mr.buffer.getLong(8 * it) } shouldContainExactly (0 until n).map { 101L * it }
            (0 until n).map { result.getLong(8 * it) } shouldContainExactly (0 until n).map { 100L * it }
            val tooMany = direct(8 * (n + 1))
            a.ep.tryFetchAtomic(
                tooMany,
                0,
                n + 1,
                tooMany,
                0,
                f.addrs[0][1],
                0,
                mr.key,
                AtomicDatatype.INT64,
                AtomicOp.SUM,
                null,
            ) shouldBe -Errno.EMSGSIZE
        }
    }

    if (targetChecks)
        test(
            label +
                "the target refuses an unknown key, bytes out of bounds and access not granted: error completions naming key, offset and length"
        ) {
            open(2).use { f ->
                val (a, b) = f.nodes
                val readOnly = b.register(64, MrAccess.REMOTE_READ)
                val writeOnly = b.register(64, MrAccess.REMOTE_WRITE)
                val dest = f.addrs[0][1]
                val src = direct(128)
                fun refused(): CompletionError =
                    a.await(1, others = listOf(b)).single().shouldBeInstanceOf<CompletionError>()

                a.ep.tryWrite(src, 0, 8, dest, 0, 424242, "no-key") shouldBe 0
                refused().also {
                    it.err shouldBe Errno.EACCES
                    it.context shouldBe "no-key"
                    it.flags shouldBe (OpFlags.RMA or OpFlags.WRITE)
                    it.message shouldContain "no memory region registered under key 424242"
                }

                a.ep.tryWrite(src, 0, 16, dest, 56, writeOnly.key, "bounds") shouldBe 0
                refused().also {
                    it.err shouldBe Errno.EINVAL
                    it.message shouldContain "bytes [56, 72) lie outside the target's region of 64 bytes"
                    it.message shouldContain "key ${writeOnly.key}"
                }
                a.ep.tryRead(src, 0, 128, dest, 0, readOnly.key, "read-bounds") shouldBe 0
                refused().err shouldBe Errno.EINVAL

                a.ep.tryWrite(src, 0, 8, dest, 0, readOnly.key, "write-ro") shouldBe 0
                refused().also {
                    it.err shouldBe Errno.EACCES
                    it.message shouldContain "grants REMOTE_READ; this needs REMOTE_WRITE"
                }
                a.ep.tryRead(src, 0, 8, dest, 0, writeOnly.key, "read-wo") shouldBe 0
                refused().also {
                    it.err shouldBe Errno.EACCES
                    it.message shouldContain "grants REMOTE_WRITE; this needs REMOTE_READ"
                }
                a.ep.tryFetchAtomic(
                    src,
                    0,
                    1,
                    src,
                    8,
                    dest,
                    0,
                    writeOnly.key,
                    AtomicDatatype.INT64,
                    AtomicOp.SUM,
                    "fetch-wo",
                ) shouldBe 0
                refused().also {
                    it.err shouldBe Errno.EACCES
                    it.flags shouldBe (OpFlags.ATOMIC or OpFlags.READ)
                    it.message shouldContain "fetch-atomic SUM of 1 INT64"
                }
                a.ep.tryAtomic(
                    src,
                    0,
                    1,
                    dest,
                    60,
                    writeOnly.key,
                    AtomicDatatype.INT64,
                    AtomicOp.SUM,
                    "atomic-bounds",
                ) shouldBe 0
                refused().err shouldBe Errno.EINVAL

                readOnly.close()
                a.ep.tryRead(src, 0, 8, dest, 0, readOnly.key, "closed") shouldBe 0
                refused().err shouldBe Errno.EACCES
                writeOnly.buffer.getLong(0) shouldBe 0L // nothing refused was carried out
            }
        }

    test(
        label +
            "local mistakes are return codes: an op that does not apply to the type or form, a bad range, a disabled endpoint"
    ) {
        open(2).use { f ->
            val a = f.nodes[0]
            val b = direct(64)
            val dest = f.addrs[0][1]
            a.ep.tryAtomic(b, 0, 1, dest, 0, 1, AtomicDatatype.DOUBLE, AtomicOp.BXOR, null) shouldBe -Errno.EOPNOTSUPP
            a.ep.tryAtomic(b, 0, 1, dest, 0, 1, AtomicDatatype.INT64, AtomicOp.CSWAP, null) shouldBe -Errno.EOPNOTSUPP
            a.ep.tryCompareAtomic(b, 0, 1, b, 8, b, 16, dest, 0, 1, AtomicDatatype.INT64, AtomicOp.SUM, null) shouldBe
                -Errno.EOPNOTSUPP
            a.ep.tryAtomic(b, 60, 1, dest, 0, 1, AtomicDatatype.INT64, AtomicOp.SUM, null) shouldBe -Errno.EINVAL
            a.ep.tryAtomic(b, 0, 0, dest, 0, 1, AtomicDatatype.INT64, AtomicOp.SUM, null) shouldBe -Errno.EINVAL
            a.ep.tryWrite(b, 0, 8, dest, -1, 1, null) shouldBe -Errno.EINVAL
            a.ep.tryRead(b, 60, 8, dest, 0, 1, null) shouldBe -Errno.EINVAL
            val idle = a.domain.endpoint(f.info)
            idle.tryWrite(b, 0, 8, dest, 0, 1, null) shouldBe -Errno.EOPBADSTATE
            idle.close()
        }
    }

    if (targetChecks)
        test(
            label +
                "READ and WRITE counters count this endpoint's operations; REMOTE_READ and REMOTE_WRITE count what peers did to its memory"
        ) {
            open(2).use { f ->
                val b = f.nodes[1]
                val mr = b.register(64)
                val reads = b.domain.counter()
                val writes = b.domain.counter()
                val cq = b.domain.completionQueue()
                val ep =
                    b.domain.endpoint(f.info).apply {
                        bind(cq, OpFlags.TRANSMIT or OpFlags.RECV)
                        bind(b.av)
                        bind(reads, OpFlags.REMOTE_READ)
                        bind(writes, OpFlags.REMOTE_WRITE)
                        enable()
                    }
                val a = f.nodes[0].domain
                val mine = a.counter()
                val acq = a.completionQueue()
                val init =
                    a.endpoint(f.info).apply {
                        bind(acq, OpFlags.TRANSMIT or OpFlags.RECV)
                        bind(f.nodes[0].av)
                        bind(mine, OpFlags.READ or OpFlags.WRITE)
                        enable()
                    }
                val dest = f.nodes[0].av.insert(ep.address)
                val buf = direct(8).also { it.putLong(0, 5) }
                init.tryWrite(buf, 0, 8, dest, 0, mr.key, null) shouldBe 0
                init.tryAtomic(buf, 0, 1, dest, 0, mr.key, AtomicDatatype.INT64, AtomicOp.SUM, null) shouldBe 0
                init.tryFetchAtomic(
                    buf,
                    0,
                    1,
                    buf,
                    0,
                    dest,
                    0,
                    mr.key,
                    AtomicDatatype.INT64,
                    AtomicOp.ATOMIC_READ,
                    null,
                ) shouldBe 0
                init.tryRead(buf, 0, 8, dest, 0, mr.key, null) shouldBe 0
                init.tryRead(buf, 0, 8, dest, 0, mr.key + 1000, null) shouldBe 0
                val deadline = Deadline.of("5 operations on the initiator's counter")
                while (mine.value + mine.errorValue < 5) {
                    a.progress()
                    b.domain.progress()
                    deadline.check { "counters: $mine" }
                }
                mine.value shouldBe 4
                mine.errorValue shouldBe 1
                writes.value shouldBe 2
                reads.value shouldBe 2
                mr.buffer.getLong(0) shouldBe 10L
                init.close()
                ep.close()
            }
        }

    test(
        label +
            "fetch-adds from two initiators to one target are atomic: every old value is seen once and the sum is exact"
    ) {
        open(3).use { f ->
            val (a, b, t) = f.nodes
            val mr = t.register(8)
            val n = 2000
            val seen = HashSet<Long>()
            val one = direct(8).also { it.putLong(0, 1) }
            val results = List(2) { direct(8 * n) }
            for (i in 0 until n) {
                for ((k, node) in listOf(a, b).withIndex()) {
                    val deadline = Deadline.of("fetch-add $i from initiator $k to be accepted")
                    while (true) {
                        val rc =
                            node.ep.tryFetchAtomic(
                                one,
                                0,
                                1,
                                results[k],
                                8 * i,
                                f.addrs[k][2],
                                0,
                                mr.key,
                                AtomicDatatype.INT64,
                                AtomicOp.SUM,
                                null,
                            )
                        if (rc == 0) break
                        rc shouldBe -Errno.EAGAIN
                        node.domain.progress()
                        t.domain.progress()
                        deadline.check()
                    }
                }
                t.domain.progress()
            }
            a.await(n, others = listOf(t))
            b.await(n, others = listOf(t))
            for (k in 0..1) for (i in 0 until n) check(seen.add(results[k].getLong(8 * i))) {
                "old value ${results[k].getLong(8 * i)} fetched twice"
            }
            seen shouldBe (0L until 2L * n).toSet()
            mr.buffer.getLong(0) shouldBe 2L * n
        }
    }
}
