package braid.provider.link

import braid.core.FabricException

/** One rail named in a link string: its provider and, optionally, the domains (interfaces) to use. */
internal data class RailSelector(val provider: String, val domains: List<String>) {
    override fun toString(): String = if (domains.isEmpty()) provider else "$provider:${domains.joinToString(",")}"
}

/** One link of a link string: the shared-memory rail and/or one network rail. */
internal data class LinkDescription(val rails: List<RailSelector>) {
    /** The link's name without domains, e.g. `shm+tcp`: the fabric name of its Info entries. */
    val name: String get() = rails.joinToString("+") { it.provider }

    override fun toString(): String = rails.joinToString("+")
}

/**
 * Link strings, in the syntax of LNX's `FI_LNX_PROV_LINKS` (used by `BRAID_LINKS` and
 * [braid.core.Hints.links]):
 *
 * ```
 * links := link ('|' link)*
 * link  := rail ('+' rail)*
 * rail  := provider [':' domain (',' domain)*]
 * ```
 * `shm+tcp` links shm with tcp on every interface (one Info entry each); `shm+tcp:eth0,lo` only
 * with those two; `shm+tcp:eth0|tcp:lo` offers two links. As in LNX, a link joins at most the
 * shared-memory rail and one network rail; either may stand alone (`tcp`).
 */
internal object LinkStrings {
    const val SHM: String = "shm"

    /**
     * Parses [text]; [source] names where it came from in errors (`BRAID_LINKS`,
     * `Hints.links`). [networkRails] are the providers that may be a link's network rail.
     */
    fun parse(text: String, source: String, networkRails: Set<String>): List<LinkDescription> {
        fun bad(link: String?, why: String): Nothing = throw FabricException.invalid(
            "$source='$text': " + (if (link != null) "link '$link': " else "") + why +
                "; write providers joined by '+', links separated by '|', domains after ':' (e.g. shm+tcp, shm+tcp:eth0,lo|tcp:lo)",
        )
        if (text.isBlank()) bad(null, "empty")
        return text.split('|').map { raw ->
            val link = raw.trim()
            if (link.isEmpty()) bad(null, "an empty link between '|'")
            val rails = link.split('+').map { r ->
                val rail = r.trim()
                if (rail.isEmpty()) bad(link, "an empty rail between '+'")
                val provider = rail.substringBefore(':').trim()
                if (provider.isEmpty()) bad(link, "rail '$rail' has no provider before ':'")
                if (provider != SHM && provider !in networkRails) {
                    bad(link, "unknown rail provider '$provider' (known: ${(listOf(SHM) + networkRails.sorted()).joinToString()})")
                }
                val domains = if (':' in rail) rail.substringAfter(':').split(',').map { it.trim() } else emptyList()
                if (domains.any { it.isEmpty() }) bad(link, "rail '$rail' has an empty domain name after ':'")
                if (provider == SHM && domains.any { it != SHM }) bad(link, "the shm rail has one domain, 'shm' (got '${domains.joinToString(",")}')")
                RailSelector(provider, domains)
            }
            if (rails.count { it.provider == SHM } > 1) bad(link, "shm appears twice")
            val network = rails.filter { it.provider != SHM }
            if (network.size > 1) bad(link, "joins ${network.size} network rails (${network.joinToString { it.provider }}); a link joins shm with at most one")
            LinkDescription(rails.sortedBy { if (it.provider == SHM) 0 else 1 })
        }
    }
}
