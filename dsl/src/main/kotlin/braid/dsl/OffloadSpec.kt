package braid.dsl

import braid.collectives.CollectiveOp
import braid.collectives.offload.ShmOffload
import kotlinx.serialization.Serializable

/**
 * A collective offload provider paired with one of the topology's links (fi_peer(3): "an offload provider is paired
 * with a main peer provider"): groups joined on that link's endpoint run the [operations] it takes through one
 * shared-memory segment per host, and hierarchically across hosts ([ShmOffload]). In a file:
 * ```
 * offloads = [ { link = "shm+tcp:lo", operations = [allreduce, barrier, broadcast], slotBytes = "64 KiB" } ]
 * ```
 */
@Serializable
@ConsistentCopyVisibility
public data class OffloadSpec
internal constructor(
    /** The link it pairs with, by [LinkSpec.name]. */
    val link: String,
    /** The offload provider: `shm` (the only one so far). */
    val provider: String = SHM,
    /** The operations it takes, lower case (`allreduce`, `barrier`, …); empty: every one it implements. */
    val operations: List<String> = emptyList(),
    /** Bytes of one rank's slot in the segment; null: the provider's default (128 KiB). */
    @ByteCount val slotBytes: Int? = null,
    /** The fewest members on a host for it to take a group (the too-small rule). */
    val minMembers: Int = 2,
    /** Whether groups spanning hosts run hierarchically (segment inside, the link between leaders). */
    val hierarchical: Boolean = true,
) {
    /** The provider this spec describes (valid: [SpecRules] checked every field). */
    public fun toOffload(): ShmOffload {
        var o = ShmOffload.DEFAULT.withMinMembers(minMembers).withHierarchical(hierarchical)
        slotBytes?.let { o = o.withSlotBytes(it) }
        if (operations.isNotEmpty()) o = o.withOperations(operations.map { opOf(it)!! }.toSet())
        return o
    }

    /** One line for `braid info --config`. */
    public fun describe(): String =
        "offload $provider paired with link '$link': ${if (operations.isEmpty()) "every operation it implements (" + implemented() + ")" else operations.joinToString()}" +
            ", slot ${SpecRules.bytes(slotBytes ?: ShmOffload.DEFAULT.slotBytes)}, at least $minMembers members on a host" +
            if (hierarchical) ", hierarchical across hosts" else ", one host only"

    internal companion object {
        @JvmSynthetic
        fun opOf(name: String): CollectiveOp? = CollectiveOp.entries.firstOrNull { it.name.lowercase() == name }

        @JvmSynthetic fun implemented(): String = ShmOffload.IMPLEMENTED.joinToString { it.name.lowercase() }

        /** The rules of one offload pairing at [at] (`offloads[0]`). */
        @JvmSynthetic
        fun check(o: OffloadSpec, spec: TopologySpec, at: String, add: (String, String, String) -> Unit) {
            if (o.link.isEmpty()) {
                add(
                    "$at.link",
                    "offload names no link and the topology has ${spec.links.size}",
                    "set link to one of ${spec.links.joinToString { "'${it.name}'" }}",
                )
            } else if (spec.links.none { it.name == o.link }) {
                add(
                    "$at.link",
                    "offload pairs with link '${o.link}', which the topology does not have",
                    "name one of ${spec.links.joinToString { "'${it.name}'" }}",
                )
            }
            if (o.provider != SHM)
                add(
                    "$at.provider",
                    "offload provider '${o.provider}' does not exist",
                    "use \"shm\" (one shared-memory segment per host)",
                )
            o.operations.forEachIndexed { i, name ->
                val op = opOf(name)
                if (op == null || op !in ShmOffload.IMPLEMENTED) {
                    add(
                        "$at.operations[$i]",
                        "offload operation '$name' is not one it implements",
                        "use some of ${implemented()}, or leave operations out for all of them",
                    )
                }
            }
            o.slotBytes?.let {
                if (it < 64 || it > (1 shl 28))
                    add(
                        "$at.slotBytes",
                        "offload slotBytes $it is outside 64 B .. 256 MiB",
                        "set a slot size such as \"128 KiB\"",
                    )
            }
            if (o.minMembers < 2)
                add(
                    "$at.minMembers",
                    "offload minMembers ${o.minMembers} must be ≥ 2",
                    "a shared segment helps from 2 members on a host",
                )
        }
    }
}

/**
 * The block of [TopologyScope.offload]: the [link] it pairs with (by name; the topology's only link if left out) and
 * the [operations] it takes.
 */
public class OffloadScope internal constructor() : BraidScope {
    /** The link's name ([LinkSpec.name], e.g. `shm+tcp:lo`). */
    public var link: String? = null
    public var provider: String = SHM
    /** Bytes of one rank's slot; null: the provider's default. */
    public var slotBytes: Int? = null
    public var minMembers: Int = 2
    public var hierarchical: Boolean = true
    private val ops = ArrayList<String>()

    /** The operations it takes (`"allreduce"`, `"barrier"`, …); none named: all it implements. */
    public fun operations(vararg names: String) {
        ops += names.map { it.lowercase() }
    }

    /** The operations it takes, as [CollectiveOp]s. */
    public fun operations(ops: Set<CollectiveOp>) {
        this.ops += ops.map { it.name.lowercase() }
    }

    @JvmSynthetic
    internal fun toSpec(links: List<LinkSpec>): OffloadSpec =
        OffloadSpec(
            link ?: links.singleOrNull()?.name ?: "",
            provider,
            ops.toList(),
            slotBytes,
            minMembers,
            hierarchical,
        )
}
