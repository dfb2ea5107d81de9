package braid.provider.shm

import braid.provider.RmaOutlet
import org.agrona.MutableDirectBuffer
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer

/**
 * One ring of a channel as an [RmaOutlet]: RMA requests ride the sender's bulk ring (never pushed back, unlike the data
 * ring, so an RMA never waits behind an unexpected message) and replies the receiver's control ring, as records of type
 * [type] whose payload is an [braid.provider.RmaDescriptor] record.
 */
internal class ShmRingOutlet(private val ring: OneToOneRingBuffer, private val type: Int) : RmaOutlet {
    override val maxRecord: Int = ring.maxMsgLength()

    override val buffer: MutableDirectBuffer
        get() = ring.buffer()

    override fun claim(length: Int): Int = ring.tryClaim(type, length)

    override fun commit(index: Int, length: Int) = ring.commit(index)
}
