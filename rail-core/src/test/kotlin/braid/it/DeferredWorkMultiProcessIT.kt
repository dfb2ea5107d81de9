package braid.it

import braid.core.AtomicDatatype
import braid.core.AtomicOp
import braid.core.Completion
import braid.core.DeferredOp
import braid.core.DeferredWork
import braid.core.Errno
import braid.core.FiAddr
import braid.core.MrAccess
import braid.core.OpFlags
import braid.core.WorkStatus
import braid.core.direct
import braid.it.PeerMain.Rma
import braid.testsupport.ChildProcess
import braid.testsupport.Deadline
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.ByteBuffer
import java.nio.file.Files
import java.nio.file.Path
import java.time.Duration
import org.agrona.concurrent.UnsafeBuffer

/**
 * Deferred work and atomics between separate JVM processes, over shm, tcp (loopback) and the link: every operation type
 * issued through the deferred work queue at a peer process, and fetch-adds from several processes at once against one
 * target.
 */
class DeferredWorkMultiProcessIT :
    FunSpec({
        val main = PeerMain::class.java.name

        fun tempDir(): Path = Files.createTempDirectory("braid-dw-it")

        for (provider in listOf("shm", "tcp", "link")) {
            test(
                "$provider: every operation type fires from the deferred work queue against a peer process, in dependency order, and what it left there is right"
            ) {
                val dir = tempDir()
                PeerMain.Node(provider, dir, "init").use { node ->
                    val (d, cq, av, ep) = node
                    val kid =
                        ChildProcess.jvm(main, PeerMain.args(provider, "rma-target", dir, "target", "init"))
                            .output(dir.resolve("target.log"))
                            .start()
                    try {
                        val t = av.insert(Rendezvous.lookup(dir, "target"))
                        val key = Rma.KEY
                        val go = d.counter()
                        val done = d.counter()
                        val wrote = d.counter()
                        val added = d.counter()
                        val fetched = d.counter()
                        val failed = d.counter()
                        val set = d.counter()
                        val rx = UnsafeBuffer(ByteArray(64))
                        val trx = UnsafeBuffer(ByteArray(64))
                        val writeSrc = direct(64)
                        val readBack = direct(64)
                        val pattern = direct(Rma.PATTERN_LENGTH)
                        val fetchResult = direct(8)
                        val casResult = direct(8)
                        val works =
                            listOf(
                                DeferredWork(
                                    go,
                                    1,
                                    DeferredOp.Send(
                                        ep,
                                        UnsafeBuffer(Rma.TO_TARGET.toByteArray()),
                                        0,
                                        Rma.TO_TARGET.length,
                                        t,
                                    ),
                                    done,
                                ),
                                DeferredWork(
                                    go,
                                    1,
                                    DeferredOp.Tsend(
                                        ep,
                                        UnsafeBuffer(Rma.TAGGED_TO_TARGET.toByteArray()),
                                        0,
                                        Rma.TAGGED_TO_TARGET.length,
                                        t,
                                        7,
                                    ),
                                    done,
                                ),
                                DeferredWork(
                                    go,
                                    1,
                                    DeferredOp.Recv(ep, rx, 0, 64, t),
                                    done,
                                    OpFlags.COMPLETION,
                                    "recv",
                                ),
                                DeferredWork(go, 1, DeferredOp.Trecv(ep, trx, 0, 64, FiAddr.UNSPEC, 9), done),
                                DeferredWork(
                                    go,
                                    1,
                                    DeferredOp.Write(
                                        ep,
                                        writeSrc,
                                        0,
                                        Rma.WRITTEN.length,
                                        t,
                                        Rma.WRITE_AT.toLong(),
                                        key,
                                    ),
                                    wrote,
                                ),
                                // Reads what the write left, only once the write has completed.
                                DeferredWork(
                                    wrote,
                                    1,
                                    DeferredOp.Read(ep, readBack, 0, Rma.WRITTEN.length, t, Rma.WRITE_AT.toLong(), key),
                                    done,
                                ),
                                DeferredWork(
                                    go,
                                    1,
                                    DeferredOp.Read(
                                        ep,
                                        pattern,
                                        0,
                                        Rma.PATTERN_LENGTH,
                                        t,
                                        Rma.PATTERN_AT.toLong(),
                                        key,
                                    ),
                                    done,
                                ),
                                DeferredWork(
                                    go,
                                    1,
                                    DeferredOp.Atomic(
                                        ep,
                                        direct(8).also { it.putLong(0, 5) },
                                        0,
                                        1,
                                        t,
                                        0,
                                        key,
                                        AtomicDatatype.INT64,
                                        AtomicOp.SUM,
                                    ),
                                    added,
                                ),
                                DeferredWork(
                                    added,
                                    1,
                                    DeferredOp.FetchAtomic(
                                        ep,
                                        direct(8).also { it.putLong(0, 10) },
                                        0,
                                        1,
                                        fetchResult,
                                        0,
                                        t,
                                        0,
                                        key,
                                        AtomicDatatype.INT64,
                                        AtomicOp.SUM,
                                    ),
                                    fetched,
                                ),
                                DeferredWork(
                                    fetched,
                                    1,
                                    DeferredOp.CompareAtomic(
                                        ep,
                                        direct(8).also { it.putLong(0, Rma.FINAL) },
                                        0,
                                        1,
                                        direct(8).also { it.putLong(0, Rma.START + 15) },
                                        0,
                                        casResult,
                                        0,
                                        t,
                                        0,
                                        key,
                                        AtomicDatatype.INT64,
                                        AtomicOp.CSWAP,
                                    ),
                                    done,
                                ),
                                DeferredWork(
                                    go,
                                    1,
                                    DeferredOp.Write(ep, writeSrc, 0, 8, t, Rma.REGION - 4L, key),
                                    failed,
                                    OpFlags.COMPLETION,
                                    "out of bounds",
                                ),
                                DeferredWork(go, 1, DeferredOp.CounterAdd(done, 100)),
                                DeferredWork(go, 1, DeferredOp.CounterSet(set, 42)),
                            )
                        works.forEach { d.deferredWork.queue(it) }
                        writeSrc.putBytes(0, Rma.WRITTEN.toByteArray()) // read when the write fires
                        d.deferredWork.queued shouldBe works.size
                        go.add(1)
                        set.value shouldBe 42
                        val deadline =
                            Deadline.of(
                                "107 triggered operations, one failure and two CQ entries",
                                Duration.ofSeconds(120),
                            )
                        val cqEntries = ArrayList<Any?>()
                        val c = Completion()
                        val e = braid.core.CompletionError()
                        while (done.value < 107 || failed.errorValue < 1 || cqEntries.size < 2) {
                            when (cq.read(c)) {
                                1 -> cqEntries += c.context
                                -Errno.EAVAIL -> {
                                    cq.readErr(e)
                                    cqEntries += e.context
                                    e.err shouldBe Errno.EINVAL
                                    e.message shouldContain "outside the target's region of ${Rma.REGION} bytes"
                                }
                            }
                            deadline.check {
                                "done ${done.value}/107, failed $failed, CQ $cqEntries, works ${works.filter { it.status != WorkStatus.COMPLETED }}\nchild:\n${kid.output()}"
                            }
                        }
                        cqEntries.toSet() shouldBe setOf(works[2], works[10])
                        done.errorValue shouldBe 0
                        works.filter { it.status != WorkStatus.COMPLETED } shouldBe listOf(works[10])
                        String(ByteArray(Rma.FROM_TARGET.length).also { rx.getBytes(0, it) }) shouldBe Rma.FROM_TARGET
                        String(ByteArray(Rma.TAGGED_FROM_TARGET.length).also { trx.getBytes(0, it) }) shouldBe
                            Rma.TAGGED_FROM_TARGET
                        String(ByteArray(Rma.WRITTEN.length).also { readBack.getBytes(0, it) }) shouldBe Rma.WRITTEN
                        for (i in 0 until Rma.PATTERN_LENGTH) pattern.getByte(i) shouldBe Rma.pattern(i)
                        fetchResult.getLong(0) shouldBe Rma.START + 5
                        casResult.getLong(0) shouldBe Rma.START + 15
                        Rendezvous.mark(dir, "init")
                        kid.awaitOk(Duration.ofSeconds(120))
                    } finally {
                        kid.close()
                    }
                }
            }
        }

        for (provider in listOf("shm", "tcp")) {
            test(
                "$provider: fetch-adds from three processes at once are atomic: the old values chain from 0 to the sum of every contribution"
            ) {
                val dir = tempDir()
                PeerMain.Node(provider, dir, "target", publish = false).use { node ->
                    val d = node.domain
                    val region = d.registerMemory(ByteBuffer.allocateDirect(8), MrAccess.REMOTE, Rma.KEY)
                    node.publish() // only once the region exists: the adders start on it at once
                    val count = 1500
                    val kids =
                        (0 until 3).map { i ->
                            ChildProcess.jvm(
                                    main,
                                    PeerMain.args(provider, "rma-fetch-add", dir, "adder$i", "target", i, count),
                                )
                                .output(dir.resolve("adder$i.log"))
                                .start()
                        }
                    try {
                        val deadline = Deadline.of("the three adders to finish", Duration.ofSeconds(240))
                        while ((0 until 3).any { !Rendezvous.marked(dir, "adder$it") }) {
                            d.progress()
                            deadline.check { "children:\n" + kids.joinToString("\n") { it.output() } }
                        }
                        kids.forEach { it.awaitOk(Duration.ofSeconds(60)) }
                        val total = count.toLong() * (1 + 2 + 3)
                        region.buffer.getLong(0) shouldBe total
                        // Every fetch saw a distinct old value, and each one plus its increment is the next one seen.
                        val steps =
                            (0 until 3)
                                .flatMap { i ->
                                    Files.readAllLines(dir.resolve("adder$i.fetched")).map { line ->
                                        line.split(' ').let { it[0].toLong() to it[1].toLong() }
                                    }
                                }
                                .sortedBy { it.first }
                        steps.size shouldBe 3 * count
                        var expect = 0L
                        for ((old, inc) in steps) {
                            check(old == expect) {
                                "an atomic saw $old where the chain of earlier ones reached $expect"
                            }
                            expect = old + inc
                        }
                        expect shouldBe total
                    } finally {
                        kids.forEach { it.close() }
                    }
                }
            }
        }
    })
