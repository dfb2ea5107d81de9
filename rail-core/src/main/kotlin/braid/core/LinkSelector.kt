package braid.core

/**
 * One link of a link string, the syntax of libfabric's `FI_LNX_PROV_LINKS` that `BRAID_LINKS`, [Hints.links] and the
 * topology DSL's files use:
 * ```
 * links := link ('|' link)*
 * link  := rail ('+' rail)*
 * rail  := provider [':' domain (',' domain)*]
 * ```
 *
 * `shm+tcp` joins shm with tcp on any interface; `shm+tcp:eth0,lo` with tcp on eth0 or on lo (two links, see [expand]);
 * `shm+tcp:eth0|tcp:lo` offers two links. [parse] checks the syntax only: which providers exist and how many rails of
 * each a link may join is for whoever opens it (the link provider joins at most shm and one network rail, as LNX does).
 */
public data class LinkSelector(
    /** The rails in the order written. */
    val rails: List<RailSelector>
) {
    /** The providers joined by `+`, without domains: `shm+tcp`. */
    public val name: String
        get() = rails.joinToString("+") { it.provider }

    /**
     * One link for each choice of a domain per rail that names several: `shm+tcp:eth0,lo` is `shm+tcp:eth0` and
     * `shm+tcp:lo`. Rails naming no domain stay as they are.
     */
    public fun expand(): List<LinkSelector> =
        rails
            .fold(listOf(emptyList<RailSelector>())) { links, rail ->
                val choices =
                    if (rail.domains.size <= 1) listOf(rail)
                    else rail.domains.map { RailSelector(rail.provider, listOf(it)) }
                links.flatMap { prefix -> choices.map { prefix + it } }
            }
            .map { LinkSelector(it) }

    /** This link in link-string syntax. */
    override fun toString(): String = rails.joinToString("+")

    public companion object {
        /**
         * Parses [text] into its links, in the order written; blanks around names are ignored. [source] says where the
         * text came from (`BRAID_LINKS`, `Hints.links`, a file path) for the message of the [LinkStringException]
         * thrown when the syntax is broken.
         */
        @JvmStatic
        @JvmOverloads
        public fun parse(text: String, source: String = "link string"): List<LinkSelector> {
            fun bad(link: String?, problem: String, hint: String): Nothing =
                throw LinkStringException(source, text, link, problem, hint)
            if (text.isBlank()) bad(null, "is empty", "name at least one link, e.g. \"shm+tcp\"")
            return text.split('|').map { raw ->
                val link = raw.trim()
                if (link.isEmpty())
                    bad(null, "an empty link between '|'", "separate links with single '|', e.g. \"shm+tcp|tcp\"")
                LinkSelector(
                    link.split('+').map { r ->
                        val rail = r.trim()
                        if (rail.isEmpty())
                            bad(link, "an empty rail between '+'", "join rails with single '+', e.g. \"shm+tcp\"")
                        // The native rail names its native provider first: `ofi:tcp` is provider `ofi:tcp`.
                        val native = rail.startsWith("ofi:") && rail.length > 4
                        val named = if (native) rail.substring(4) else rail
                        val provider = (if (native) "ofi:" else "") + named.substringBefore(':').trim()
                        if (provider.isEmpty())
                            bad(
                                link,
                                "rail '$rail' has no provider before ':'",
                                "write provider:domain, e.g. \"tcp:lo\"",
                            )
                        val domains =
                            if (':' in named) named.substringAfter(':').split(',').map { it.trim() } else emptyList()
                        if (domains.any { ':' in it }) {
                            bad(
                                link,
                                "rail '$rail' has a malformed domain: one ':' separates the provider from its domains",
                                "write provider:domain, e.g. \"tcp:eth0\"",
                            )
                        }
                        if (domains.any { it.isEmpty() })
                            bad(
                                link,
                                "rail '$rail' has an empty domain name",
                                "write domains after ':', separated by single ',', e.g. \"tcp:eth0,lo\"",
                            )
                        RailSelector(provider, domains)
                    }
                )
            }
        }
    }
}

/** One rail of a [LinkSelector]: its [provider] and the [domains] it may open (for tcp, interfaces); empty: any. */
public data class RailSelector(val provider: String, val domains: List<String> = emptyList()) {
    /** This rail in link-string syntax: `tcp` or `tcp:eth0,lo`. */
    override fun toString(): String = if (domains.isEmpty()) provider else "$provider:${domains.joinToString(",")}"
}

/**
 * A link string that cannot be used: its syntax is broken ([LinkSelector.parse]) or it asks for what the provider
 * opening it cannot join. The message reads `<source>='<text>': link '<link>': <problem>; <hint>`; the parts are here
 * for callers that report them their own way.
 */
public class LinkStringException
internal constructor(
    /** Where the text came from: `BRAID_LINKS`, `Hints.links`, a file path. */
    public val source: String,
    public val text: String,
    /** The link at fault, as written; null when the fault is in the text as a whole. */
    public val link: String?,
    /** What is wrong, naming the rail or domain. */
    public val problem: String,
    /** How to fix it, with an example. */
    public val hint: String,
    @Suppress("UNUSED_PARAMETER") hidden: JavaHidden = JavaHidden(),
) : FabricException(Errno.EINVAL, "$source='$text': ${if (link != null) "link '$link': " else ""}$problem; $hint")
