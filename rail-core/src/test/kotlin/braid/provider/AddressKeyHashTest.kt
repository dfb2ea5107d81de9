package braid.provider

import braid.core.AddressTable
import braid.provider.tcp.TcpAddressDescriptor
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.net.InetAddress
import java.net.InetSocketAddress
import kotlin.random.Random

/**
 * The address vector files addresses by the hash of their keys, which a tcp address computes without building its key
 * string: it must be the hash of that string, for every id, or a rail's lookup by key (which hashes the string) would
 * miss the entry.
 */
class AddressKeyHashTest :
    FunSpec({
        test("a tcp address's key hash is the hash of its key string, for ids of every length") {
            val at = InetSocketAddress(InetAddress.getLoopbackAddress(), 7000)
            val ids =
                listOf(1L, 0xfL, 0x10L, 0xabcdefL, Long.MAX_VALUE, -1L, Long.MIN_VALUE) +
                    List(200) { Random(it).nextLong().let { v -> if (v == 0L) 1L else v } }
            for (id in ids) {
                val a = TcpAddressDescriptor.parse(TcpAddressDescriptor.encode(42, id, at))
                a.keyHash() shouldBe AddressTable.keyHash(a.key)
                a.indexKeyHash(0) shouldBe AddressTable.keyHash(a.key)
            }
        }
    })
