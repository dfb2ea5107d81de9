package braid.core

/**
 * The limits every rail has, each under its provider's own parameter: shm's eager size is `shm.eager_size` and its ring
 * `shm.ring_size`, tcp's are `tcp.eager_size` and the connection buffers `tcp.buffer_size`. [Braid.limitParameter]
 * names the parameter, so that the dsl's `eagerSize` and `ringCapacity` (and any layer above rail-core) never switch on
 * a provider's name.
 */
public enum class RailLimit {
    /** The largest message sent eagerly; larger ones wait for their receive (rendezvous). */
    EAGER_SIZE,

    /** The bytes a rail buffers per peer: shm's ring, tcp's connection buffers. */
    RING_CAPACITY,
}
