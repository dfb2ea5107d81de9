package braid.core

/**
 * A rail's place in its link, for an [Info] in a link's [Info.rails]: its identity ([name]) and its relative [weight]
 * among the link's network rails.
 *
 * The [name] is what the rail is known by everywhere a link keeps something per rail: its part of the link's address
 * blob (peers pair their rails by it), its view of the address vector, its statistics ([RailStats.rail]) and its
 * account in the endpoint's unexpected bounds. A topology names it (the DSL's `rail("a") { … }`); a link string names a
 * rail by its provider when the provider appears once in the link (`tcp` in `shm+tcp:eth0`), else by provider and
 * interface (`tcp:eth0` and `tcp:eth1` in `shm+tcp:eth0+tcp:eth1`).
 *
 * The [weight] spreads traffic under the link's policy (`LinkParams.POLICY`): under `PER_PEER` each rail is given peers
 * in proportion to it. It must be finite and > 0 (`LinkShape` refuses others).
 */
public data class RailAttr @JvmOverloads constructor(val name: String, val weight: Double = 1.0) {
    public fun withName(name: String): RailAttr = copy(name = name)

    public fun withWeight(weight: Double): RailAttr = copy(weight = weight)
}
