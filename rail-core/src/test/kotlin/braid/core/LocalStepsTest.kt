package braid.core

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.concurrent.UnsafeBuffer

/**
 * Braid's local deferred steps (REDUCE, COPY, LOCAL): they run at their threshold, in order, and count like transfers.
 */
class LocalStepsTest :
    FunSpec({
        val sum =
            object : LocalReduction {
                override fun elementSize(): Int = 8

                override fun reduce(
                    src: DirectBuffer,
                    srcOffset: Int,
                    dst: MutableDirectBuffer,
                    dstOffset: Int,
                    count: Int,
                    srcFirst: Boolean,
                ): Int {
                    for (i in 0 until count) dst.putLong(
                        dstOffset + i * 8,
                        if (srcFirst) src.getLong(srcOffset + i * 8) * 10 + dst.getLong(dstOffset + i * 8)
                        else dst.getLong(dstOffset + i * 8) * 10 + src.getLong(srcOffset + i * 8),
                    )
                    return 0
                }
            }

        test(
            "a copy then a reduce chained by counters run at their thresholds, keep operand order and bump their completion counters"
        ) {
            TestFabric(1).use { f ->
                val d = f.nodes[0].domain
                val start = d.counter()
                val mid = d.counter()
                val end = d.counter()
                val a =
                    UnsafeBuffer(ByteArray(16)).apply {
                        putLong(0, 1)
                        putLong(8, 2)
                    }
                val b = UnsafeBuffer(ByteArray(16))
                val c =
                    UnsafeBuffer(ByteArray(16)).apply {
                        putLong(0, 3)
                        putLong(8, 4)
                    }
                val copy = DeferredWork(start, 1, DeferredOp.Copy(a, 0, b, 0, 16), mid)
                val reduce = DeferredWork(mid, 1, DeferredOp.Reduce(sum, c, 0, b, 0, 2, false), end)
                d.deferredWork.queue(reduce)
                d.deferredWork.queue(copy)
                b.getLong(0) shouldBe 0L
                start.add(1)
                end.value shouldBe 1L
                b.getLong(0) shouldBe 13L // dst ∘ src = 1*10 + 3
                b.getLong(8) shouldBe 24L
                copy.status shouldBe WorkStatus.COMPLETED
                // re-armed: the same requests again
                reduce.threshold = 2
                copy.threshold = 2
                d.deferredWork.queue(reduce)
                d.deferredWork.queue(copy)
                start.add(1)
                end.value shouldBe 2L
            }
        }

        test(
            "a local step that fails bumps the error side of its completion counter; a local step asking for a CQ entry is refused"
        ) {
            TestFabric(1).use { f ->
                val d = f.nodes[0].domain
                val t = d.counter()
                val done = d.counter()
                val w = DeferredWork(t, 0, DeferredOp.Local { -Errno.EIO }, done)
                d.deferredWork.queue(w)
                w.status shouldBe WorkStatus.FAILED
                done.errorValue shouldBe 1L
                shouldThrow<FabricException> {
                        d.deferredWork.queue(DeferredWork(t, 0, DeferredOp.Local { 0 }, null, OpFlags.COMPLETION))
                    }
                    .code shouldBe Errno.EINVAL
                shouldThrow<FabricException> {
                        d.deferredWork.queue(
                            DeferredWork(
                                t,
                                0,
                                DeferredOp.Copy(UnsafeBuffer(ByteArray(4)), 0, UnsafeBuffer(ByteArray(8)), 0, 8),
                                null,
                            )
                        )
                    }
                    .code shouldBe Errno.EINVAL
            }
        }
    })
