package braid.dsl

import braid.core.LinkSelector
import braid.core.LinkStringException

/**
 * Link strings (`BRAID_LINKS`, libfabric's `FI_LNX_PROV_LINKS`) as [LinkSpec]s: links separated by `|`, the rails of a
 * link by `+`, a rail's domain (interface) after `:`, e.g. `shm+tcp:eth0|shm+tcp:lo`. rail-core's [LinkSelector.parse]
 * reads the syntax; this object names what it read. Several domains (`shm+tcp:eth0,lo`) are as many links, one per
 * domain, as the link provider offers one entry per permutation. A link parsed from a string is named by its link
 * string; its rails by their provider, with an index when a provider repeats (`tcp0`, `tcp1`). Which rails a link may
 * join is checked with the rest of the spec ([SpecException]).
 */
public object LinkStrings {
    /**
     * Parses [text] into links. [where] names the text's origin in errors (`BRAID_LINKS`, `links[2]`); throws
     * [SpecException] naming the part that is wrong.
     */
    @JvmStatic
    @JvmOverloads
    public fun parse(text: String, where: String = "links"): List<LinkSpec> {
        val links =
            try {
                LinkSelector.parse(text, where)
            } catch (e: LinkStringException) {
                val subject = if (e.link != null) "link '${e.link}'" else "link string '$text'"
                throw problem(where, "$subject: ${e.problem}", e.hint)
            }
        return links
            .flatMap { it.expand() }
            .map { link ->
                val providers = link.rails.map { it.provider }
                LinkSpec(
                    name = link.toString(),
                    rails =
                        link.rails.mapIndexed { i, r ->
                            RailSpec(defaultRailName(r.provider, providers, i), r.provider, r.domains.singleOrNull())
                        },
                )
            }
    }

    /** Parses one link (no `|`). */
    @JvmStatic
    @JvmOverloads
    public fun parseOne(text: String, where: String = "links"): LinkSpec {
        val links = parse(text, where)
        if (links.size != 1)
            throw problem(
                where,
                "'$text' holds ${links.size} links where one is expected",
                "write one link, e.g. \"shm+tcp\"",
            )
        return links[0]
    }

    /** [rails] in link-string syntax. */
    @JvmStatic public fun format(rails: List<RailSpec>): String = rails.joinToString("+") { it.linkPart }

    /** [links] in link-string syntax, separated by `|`. */
    @JvmStatic public fun formatAll(links: List<LinkSpec>): String = links.joinToString("|") { it.linkString }

    /** `provider`, or `provider<k>` for the k-th rail of a provider that appears more than once. */
    @JvmSynthetic
    internal fun defaultRailName(provider: String, providers: List<String>, index: Int): String {
        if (providers.count { it == provider } == 1) return provider
        return provider + providers.subList(0, index).count { it == provider }
    }

    private fun problem(where: String, message: String, hint: String) =
        SpecException(listOf(SpecProblem(where, message, hint)))
}
