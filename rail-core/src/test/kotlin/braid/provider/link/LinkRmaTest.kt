package braid.provider.link

import braid.core.AtomicDatatype
import braid.core.AtomicOp
import braid.core.DeferredOp
import braid.core.DeferredWork
import braid.core.MrAccess
import braid.core.Rail
import braid.core.TestFabric
import braid.core.WorkStatus
import braid.core.direct
import braid.core.driveUntil
import braid.core.rmaContract
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

/**
 * RMA and atomics through the link ([braid.core.rmaContract]): between nodes that all have shm (the link picks shm),
 * and from a node that has shm to nodes reached only over tcp.
 */
class LinkRmaTest :
    FunSpec({
        rmaContract("same host, over shm: ") { count -> TestFabric(count, Rail.LINK) }
        rmaContract("to peers without shm, over tcp: ") { count ->
            TestFabric(rail = Rail.link(listOf("shm+tcp:lo") + List(count - 1) { "tcp:lo" }))
        }

        test(
            "deferred work through the link: a triggered write, then on its completion a fetch-add, to a same-host peer and to one reached over tcp"
        ) {
            TestFabric(rail = Rail.link("shm+tcp:lo", "shm+tcp:lo", "tcp:lo")).use { f ->
                val a = f.nodes[0]
                val dw = a.domain.deferredWork
                val go = a.domain.counter()
                for (peer in 1..2) {
                    val mr = f.nodes[peer].domain.registerMemory(direct(16), MrAccess.REMOTE)
                    val written = a.domain.counter()
                    val added = a.domain.counter()
                    val src = direct(8)
                    val result = direct(8)
                    val write =
                        DeferredWork(
                            go,
                            peer.toLong(),
                            DeferredOp.Write(a.ep, src, 0, 8, f.addrs[0][peer], 0, mr.key),
                            written,
                        )
                    val add =
                        DeferredWork(
                            written,
                            1,
                            DeferredOp.FetchAtomic(
                                a.ep,
                                direct(8).also { it.putLong(0, 5) },
                                0,
                                1,
                                result,
                                0,
                                f.addrs[0][peer],
                                0,
                                mr.key,
                                AtomicDatatype.INT64,
                                AtomicOp.SUM,
                            ),
                            added,
                        )
                    dw.queue(write)
                    dw.queue(add)
                    src.putLong(0, 100L * peer) // read when the write fires, not when it was queued
                    go.add(1)
                    driveUntil(
                        "peer $peer: the triggered write and fetch-add",
                        f.nodes,
                        20_000,
                        seen = { "write $write, add $add" },
                    ) {
                        added.value >= 1
                    }
                    write.status shouldBe WorkStatus.COMPLETED
                    result.getLong(0) shouldBe 100L * peer
                    mr.buffer.getLong(0) shouldBe 100L * peer + 5
                }
            }
        }
    })
