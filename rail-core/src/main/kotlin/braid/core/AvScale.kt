package braid.core

import braid.provider.AddressHeader
import braid.provider.link.LinkAddressDescriptor
import braid.provider.shm.ShmAddressDescriptor
import braid.provider.tcp.TcpAddressDescriptor
import java.lang.management.ManagementFactory
import java.net.InetAddress
import java.net.InetSocketAddress

/**
 * Address vectors with very many entries, for the million-peer test and benchmark: a domain of each rail, and valid
 * address blobs of that rail numbered 0, 1, 2, … (distinct peers; no endpoint behind them: an AV insert does not
 * contact its peer).
 */
internal object AvScale {
    val rails: List<String> = listOf("shm", "tcp", "link")

    private val host = 0x5eed_0000_0000_0001L
    private val loopback = InetAddress.getByName("127.0.0.1")

    /** A fabric and domain of [rail] (the link as shm+tcp on loopback); close the fabric when done. */
    fun open(rail: String): Pair<Fabric, Domain> {
        val hints =
            if (rail == "link") Hints(provider = "link").with(braid.provider.link.LinkParams.LINKS, "shm+tcp:lo")
            else Hints(provider = rail, domainName = if (rail == "tcp") "lo" else null)
        val info = Braid.getInfo(hints).first()
        val fabric = Braid.fabric(info)
        return fabric to fabric.domain(info)
    }

    private fun shm(i: Int): ByteArray =
        ShmAddressDescriptor.encode(host, "braid-${1000 + i % 4_000_000}-k${i / 7}-${i + 1}")

    private fun tcp(i: Int): ByteArray =
        TcpAddressDescriptor.encode(host, 0x1000_0000L + i, InetSocketAddress(loopback, 1024 + i % 60_000))

    /** Blob number [i] of [rail]: distinct for every [i]. */
    fun blob(rail: String, i: Int): ByteArray =
        when (rail) {
            "shm" -> shm(i)
            "tcp" -> tcp(i)
            else ->
                LinkAddressDescriptor.encode(
                    host,
                    listOf(AddressHeader.KIND_SHM to shm(i), AddressHeader.KIND_TCP to tcp(i)),
                )
        }

    /** Inserts blobs [from] until [until] of [rail] into [av] in batches of [batch], keeping no blob alive. */
    fun fill(av: AddressVector, rail: String, from: Int, until: Int, batch: Int = 10_000) {
        var i = from
        while (i < until) {
            val n = minOf(batch, until - i)
            val start = i
            av.insert(List(n) { blob(rail, start + it) })
            i += n
        }
    }

    /** Heap in use after full collections (several, until it stops falling). */
    fun heapAfterGc(): Long {
        val memory = ManagementFactory.getMemoryMXBean()
        var best = Long.MAX_VALUE
        repeat(4) {
            System.gc()
            Thread.sleep(50)
            best = minOf(best, memory.heapMemoryUsage.used)
        }
        return best
    }
}
