package braid.dsl

/**
 * The link-string syntax of `BRAID_LINKS` (libfabric's `FI_LNX_PROV_LINKS`): links separated by
 * `|`, the rails of a link by `+`, a rail's domain (interface) after `:`, e.g.
 * `shm+tcp:eth0|shm+tcp:lo`. Several domains (`shm+tcp:eth0,lo`) are as many links, one per
 * domain, as the link provider offers one entry per permutation. A link parsed from a string is
 * named by the string; its rails by their provider, with an index when a provider repeats
 * (`tcp0`, `tcp1`).
 */
public object LinkStrings {
    /**
     * Parses [text] into links. [where] names the text's origin in errors (`BRAID_LINKS`,
     * `links[2]`); throws [SpecException] naming the part that is wrong.
     */
    @JvmStatic
    @JvmOverloads
    public fun parse(text: String, where: String = "links"): List<LinkSpec> {
        val links = text.split('|').map { it.trim() }
        if (links.any { it.isEmpty() }) {
            throw problem(where, "link list '$text' has an empty link", "separate links with single '|', e.g. \"shm+tcp|tcp\"")
        }
        return links.flatMap { expand(it, where) }.map { parseLink(it, where) }
    }

    /** Parses one link (no `|`). */
    @JvmStatic
    @JvmOverloads
    public fun parseOne(text: String, where: String = "links"): LinkSpec {
        val links = parse(text, where)
        if (links.size != 1) throw problem(where, "'$text' holds ${links.size} links where one is expected", "write one link, e.g. \"shm+tcp\"")
        return links[0]
    }

    /** [rails] in link-string syntax. */
    @JvmStatic
    public fun format(rails: List<RailSpec>): String = rails.joinToString("+") { it.linkPart }

    /** [links] in link-string syntax, separated by `|`. */
    @JvmStatic
    public fun formatAll(links: List<LinkSpec>): String = links.joinToString("|") { it.linkString }

    /** `shm+tcp:eth0,lo` → `shm+tcp:eth0`, `shm+tcp:lo`. */
    private fun expand(link: String, where: String): List<String> {
        if (',' !in link) return listOf(link)
        val choices = link.split('+').map { rail ->
            val r = rail.trim()
            if (':' !in r) listOf(r) else r.substringAfter(':').split(',').map { d ->
                if (d.isBlank()) throw problem(where, "rail '$r' of link '$link' has an empty domain", "separate domains with single ',', e.g. \"tcp:eth0,lo\"")
                "${r.substringBefore(':')}:${d.trim()}"
            }
        }
        return choices.fold(listOf("")) { acc, options -> acc.flatMap { prefix -> options.map { if (prefix.isEmpty()) it else "$prefix+$it" } } }
    }

    private fun parseLink(text: String, where: String): LinkSpec {
        val parts = text.split('+').map { it.trim() }
        if (parts.any { it.isEmpty() }) {
            throw problem(where, "link '$text' has an empty rail", "join rails with single '+', e.g. \"shm+tcp\"")
        }
        val providers = parts.map { it.substringBefore(':').trim() }
        val rails = parts.mapIndexed { i, part ->
            val provider = providers[i]
            val domain = if (':' in part) part.substringAfter(':').trim() else null
            if (provider.isEmpty()) throw problem(where, "rail '$part' of link '$text' has no provider", "write provider:domain, e.g. \"tcp:lo\"")
            if (domain != null && (domain.isEmpty() || ':' in domain)) {
                throw problem(where, "rail '$part' of link '$text' has a malformed domain", "write provider:domain with one ':', e.g. \"tcp:eth0\"")
            }
            RailSpec(name = defaultRailName(provider, providers, i), provider = provider, domain = domain)
        }
        return LinkSpec(name = text, rails = rails)
    }

    /** `provider`, or `provider<k>` for the k-th rail of a provider that appears more than once. */
    internal fun defaultRailName(provider: String, providers: List<String>, index: Int): String {
        if (providers.count { it == provider } == 1) return provider
        return provider + providers.subList(0, index).count { it == provider }
    }

    private fun problem(where: String, message: String, hint: String) = SpecException(listOf(SpecProblem(where, message, hint)))
}
