package braid.core

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import org.agrona.concurrent.UnsafeBuffer

/**
 * Address-vector bookkeeping over real traffic, the same on every rail (fi_av(3) and libfabric's util AV): an address
 * inserted twice keeps one fi_addr and leaves on its last remove; a removed address may be inserted again and gets a
 * new fi_addr; a MAP fi_addr of a removed address is refused even once its slot is reused; and the messages of every
 * peer still inserted carry the fi_addr it has now, so receives directed at it match. [open] gives `count` senders of
 * the rail; each case adds a receiver with an AV of the type under test.
 */
fun FunSpec.avContract(rail: String, open: (count: Int) -> TestFabric) {
    fun receiver(f: TestFabric, type: AvType): TestFabric.Node =
        TestFabric.Node(
                f.fabric.domain(f.info.copy(domainAttr = f.info.domainAttr.copy(avType = type))),
                CqFormat.TAGGED,
            )
            .also { it.ep.enable() }

    /** [from] sends [text] with [tag] to [to]'s endpoint ([to] inserted in its AV as [dest]). */
    fun send(from: TestFabric.Node, dest: Long, tag: Long, text: String) {
        from.ep.tryTsend(buf(text), 0, text.length, dest, tag, null) shouldBe 0
    }

    /** Posts a receive for [tag] from [src] on [r] and returns its completion, driving [senders]. */
    fun receive(r: TestFabric.Node, src: Long, tag: Long, senders: List<TestFabric.Node>): Completion {
        val rx = UnsafeBuffer(ByteArray(64))
        r.ep.tryTrecv(rx, 0, 64, src, tag, 0, "rx-$tag") shouldBe 0
        return r.await(1, others = senders).single() as Completion
    }

    for (type in listOf(AvType.TABLE, AvType.MAP)) {
        test(
            "$rail, $type AV: an address inserted twice has one fi_addr; after one remove the peer's messages still carry it and directed receives match"
        ) {
            open(1).use { f ->
                val s = f.nodes[0]
                val r = receiver(f, type)
                try {
                    val toR = s.av.insert(r.ep.address)
                    val first = r.av.insert(s.ep.address)
                    val second = r.av.insert(s.ep.address)
                    second shouldBe first
                    r.av.count shouldBe 1
                    r.av.remove(first)
                    r.av.contains(second) shouldBe true
                    send(s, toR, 1, "still-known")
                    receive(r, second, 1, listOf(s)).source shouldBe second
                    r.av.remove(second)
                    r.av.contains(second) shouldBe false
                    shouldThrow<FabricException> { r.av.lookup(second) }.code shouldBe Errno.ENOENT
                    shouldThrow<FabricException> { r.av.remove(second) }.code shouldBe Errno.ENOENT
                    send(s, toR, 2, "now-unknown")
                    receive(r, FiAddr.UNSPEC, 2, listOf(s)).source shouldBe FiAddr.NOTAVAIL
                } finally {
                    r.ep.close()
                }
            }
        }

        test(
            "$rail, $type AV: a removed address inserted again gets a new fi_addr its messages carry; the old one is refused"
        ) {
            open(1).use { f ->
                val s = f.nodes[0]
                val r = receiver(f, type)
                try {
                    val toR = s.av.insert(r.ep.address)
                    val old = r.av.insert(s.ep.address)
                    send(s, toR, 1, "before")
                    receive(r, old, 1, listOf(s)).source shouldBe old
                    r.av.remove(old)
                    val again = r.av.insert(s.ep.address)
                    again shouldNotBe old
                    if (type == AvType.MAP)
                        (again and 0xffff_ffffL) shouldBe (old and 0xffff_ffffL) // same slot, new generation
                    r.av.contains(old) shouldBe false
                    r.ep.tryTsend(buf("x"), 0, 1, old, 9, null) shouldNotBe 0
                    send(s, toR, 2, "after")
                    receive(r, again, 2, listOf(s)).source shouldBe again
                } finally {
                    r.ep.close()
                }
            }
        }

        test(
            "$rail, $type AV: with one peer removed and another inserted twice, every surviving fi_addr resolves its own peer's messages"
        ) {
            open(3).use { f ->
                val (s0, s1, s2) = f.nodes
                val r = receiver(f, type)
                try {
                    val to = f.nodes.map { it.av.insert(r.ep.address) }
                    val a0 = r.av.insert(s0.ep.address)
                    val a1 = r.av.insert(s1.ep.address)
                    val a2 = r.av.insert(s2.ep.address)
                    r.av.insert(s0.ep.address) shouldBe a0
                    r.av.remove(a1)
                    r.av.remove(a0) // one of two inserts
                    send(s0, to[0], 5, "zero")
                    send(s1, to[1], 5, "one")
                    send(s2, to[2], 5, "two")
                    receive(r, a2, 5, f.nodes).source shouldBe a2
                    receive(r, a0, 5, f.nodes).source shouldBe a0
                    receive(r, FiAddr.UNSPEC, 5, f.nodes).source shouldBe FiAddr.NOTAVAIL
                    val b1 = r.av.insert(s1.ep.address)
                    send(s1, to[1], 6, "one-again")
                    receive(r, b1, 6, f.nodes).source shouldBe b1
                    r.av.count shouldBe 3
                } finally {
                    r.ep.close()
                }
            }
        }
    }
}
