package braid.collectives

import braid.core.AddressVector
import braid.core.AvSet
import braid.core.Braid
import braid.core.Endpoint
import braid.core.Fabric
import braid.core.Info
import braid.core.OpFlags
import braid.it.Rendezvous
import java.nio.file.Path

/**
 * One rank's endpoint in a multi-process collectives test or benchmark: opened from an [Info] with a CQ and an AV, its
 * address published in a directory through rail-core's [Rendezvous], and every rank's address inserted in rank order
 * ([members]).
 */
internal class RankEndpoint
private constructor(
    val rank: Int,
    val size: Int,
    private val fabric: Fabric,
    val ep: Endpoint,
    val av: AddressVector,
    val members: LongArray,
) : AutoCloseable {
    /** An AV set of every rank, in rank order. */
    val set: AvSet
        get() = av.avSet(*members)

    override fun close() {
        ep.close()
        fabric.close()
    }

    companion object {
        /** Opens rank [rank] of [size] from [info], publishing its address in [dir] under [key] of its rank. */
        @JvmSynthetic
        fun open(info: Info, dir: Path, rank: Int, size: Int, key: (Int) -> String = { "$it" }): RankEndpoint {
            val fabric = Braid.fabric(info)
            val domain = fabric.domain(info)
            val cq = domain.completionQueue()
            val av = domain.addressVector()
            val ep =
                domain.endpoint().also {
                    it.bind(cq, OpFlags.TRANSMIT or OpFlags.RECV)
                    it.bind(av)
                    it.enable()
                }
            Rendezvous.publish(dir, key(rank), ep.address)
            val members = LongArray(size) { av.insert(Rendezvous.lookup(dir, key(it))) }
            return RankEndpoint(rank, size, fabric, ep, av, members)
        }
    }
}

/** A direct buffer of [bytes] (at least 1) for the benchmark programs' sends and receives. */
internal fun benchBuffer(bytes: Int): org.agrona.concurrent.UnsafeBuffer =
    org.agrona.concurrent.UnsafeBuffer(java.nio.ByteBuffer.allocateDirect(maxOf(bytes, 1)))
