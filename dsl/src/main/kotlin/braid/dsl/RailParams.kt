package braid.dsl

import braid.core.Braid
import braid.core.Info
import braid.core.Param
import braid.core.RailLimit

/**
 * The rail-core parameters behind a rail's limits in a spec: the spec says `eagerSize` and `ringCapacity` for every
 * rail, each provider names them its own way (`shm.ring_size`, `tcp.buffer_size`) and says which of its parameters
 * plays which limit ([Braid.limitParameter]). Defaults, environment variables and rules all come from those
 * declarations; the dsl only maps them onto its paths, and names no provider here.
 */
internal object RailParams {
    /** The parameter a rail of [provider] reads its eager size from, or null for a provider without one. */
    fun eager(provider: String): Param<Int>? = Braid.limitParameter(provider, RailLimit.EAGER_SIZE)

    /** The parameter behind `ringCapacity` for [provider]: shm's ring, tcp's connection buffers. */
    fun ring(provider: String): Param<Int>? = Braid.limitParameter(provider, RailLimit.RING_CAPACITY)

    /** [info]'s ring capacity (its provider's [ring] parameter), or null. */
    fun ringOf(info: Info): Int? = ring(info.provider)?.let { info.settings[it] }
}
