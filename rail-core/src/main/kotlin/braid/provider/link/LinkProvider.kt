package braid.provider.link

import braid.core.Braid
import braid.core.Caps
import braid.core.Domain
import braid.core.EndpointAttr
import braid.core.EndpointType
import braid.core.FabricException
import braid.core.Hints
import braid.core.Info
import braid.core.LinkSelector
import braid.core.LinkStringException
import braid.core.Param
import braid.core.ParamSource
import braid.core.RailAttr
import braid.core.RailSelector
import braid.core.RxAttr
import braid.core.TxAttr
import braid.provider.AddressHeader
import braid.provider.DomainProvider
import braid.provider.HostIdentity
import braid.provider.PeerAddress
import braid.provider.Provider
import braid.provider.RailAv
import braid.provider.RailHost
import braid.provider.Transport

/**
 * The link (Braid's LNX, fi_lnx(7)): shared memory for peers on this host, one network rail for the others, under one
 * endpoint. The rails are peers of the link: they match through the endpoint's one shared receive context, write into
 * its completion queues and counters, and resolve addresses through its AV (each sees its own part of a [LinkAddress]).
 *
 * Which links: [LinkParams.LINKS] (`BRAID_LINKS`, default `shm+tcp`) in the hints' settings, in the syntax of
 * [LinkSelector.parse]; a link joins at most one shm rail and any number of network rails, each on its own interface
 * (`shm+tcp:eth0+tcp:eth1`), spread by [LinkParams.POLICY] ([LinkShape]). One Info per permutation (one per tcp
 * interface), named `shm+tcp:<interface>` (several network rails: `shm+tcp+tcp:eth0+eth1`), with the rails' own Info in
 * [Info.rails], each with its identity and weight ([Info.rail]).
 *
 * Parameters ([LinkParams]), as LNX's: `BRAID_LINK_DISABLE_SHM=1` leaves shm out (same-host peers then go over the
 * network rail); `BRAID_LINK_USE_SRQ=0` promises no any-source receive (they are refused with EINVAL — matching is
 * per-source indexed either way, so this only checks the promise); `BRAID_LINK_DUMP_STATS=1` prints
 * [braid.core.Endpoint.stats] to stderr when an endpoint closes.
 */
internal object LinkProvider : Provider {
    override val name: String = "link"
    const val DEFAULT_LINKS: String = "shm+tcp"

    override val parameters: List<Param<*>>
        get() = LinkParams.ALL

    const val SHM: String = LinkShape.SHM

    override fun infos(): List<Info> = infos(Hints())

    override fun hostIdOf(address: ByteArray): Long? =
        try {
            LinkAddressDescriptor.parse(address) { _, _ -> null }.hostId
        } catch (e: FabricException) {
            null
        }

    /** The first of the address's rail parts whose provider names its process (the shm part's). */
    override fun processOf(address: ByteArray): braid.core.shm.ProcessIdentity? =
        try {
            var found: braid.core.shm.ProcessIdentity? = null
            LinkAddressDescriptor.parse(address) { _, kind, blob ->
                if (found == null && kind != AddressHeader.KIND_LINK) found = Braid.processOf(blob)
                null
            }
            found
        } catch (e: FabricException) {
            null
        }

    override fun infos(hints: Hints): List<Info> {
        val settings = hints.settings.check(LinkParams.ALL)
        val links = settings.resolve(LinkParams.LINKS)
        val text = links.value
        val source =
            when (links.source) {
                ParamSource.DEFAULT -> "the default links"
                ParamSource.API -> "Hints.links" // set through the hints' settings; errors keep the name callers know
                else -> links.origin
            }
        val disableShm = settings[LinkParams.DISABLE_SHM]
        val policy = LinkShape.policyOf(settings[LinkParams.POLICY])!!
        val offers = ArrayList<Info>()
        val refused = ArrayList<String>()
        for (link in LinkSelector.parse(text, source).map { lnx(it, text, source, policy) }) {
            val rails = if (disableShm) link.rails.filter { it.provider != SHM } else link.rails
            if (rails.isEmpty()) {
                refused += "link '$link' has no rail left with BRAID_LINK_DISABLE_SHM=1"
                continue
            }
            val choices =
                rails.map { sel ->
                    val all =
                        Braid.provider(sel.provider).let { p ->
                            // The native rail reads which native provider from the name (`ofi:tcp`, `verbs`).
                            p.infos(
                                Hints(
                                    provider = if (p.name == sel.provider) null else sel.provider,
                                    settings = hints.settings,
                                )
                            )
                        }
                    val picked =
                        if (sel.domains.isEmpty()) all
                        else sel.domains.mapNotNull { d -> all.firstOrNull { it.domainName == d } }
                    val missing = sel.domains.filter { d -> all.none { it.domainName == d } }
                    if (missing.isNotEmpty())
                        refused +=
                            "link '$link': ${sel.provider} has no domain ${missing.joinToString { "'$it'" }} (has: ${all.joinToString { it.domainName }})"
                    picked
                }
            for (combination in permutations(choices)) {
                val named = named(rails, combination)
                val twice = named.groupBy { it.rail!!.name }.values.firstOrNull { it.size > 1 }
                if (twice != null) {
                    refused +=
                        "link '$link' would open ${twice.size} rails on ${twice[0].provider} interface '${twice[0].domainName}'"
                    continue
                }
                offers += linkInfo(LinkSelector(rails), named).copy(settings = hints.settings)
            }
        }
        if (offers.isEmpty())
            throw FabricException.noData("link: $source='$text' offers nothing: ${refused.joinToString("; ")}")
        return offers
    }

    override fun openDomain(domain: Domain, info: Info): DomainProvider = LinkDomain(domain, info)

    /**
     * [link] as LNX joins rails ([LinkShape]: shm, whose one domain is `shm`, and at most one of
     * [LinkShape.NETWORK_RAILS]), shm first; else a [LinkStringException] naming the link and its first problem, as the
     * parser's do.
     */
    private fun lnx(link: LinkSelector, text: String, source: String, policy: String): LinkSelector {
        val rails = link.rails.map { LinkShape.Rail(it.toString(), it.provider, it.domains) }
        LinkShape.problems(rails, policy).firstOrNull()?.let { p ->
            throw LinkStringException(source, text, link.toString(), p.problem, p.hint)
        }
        return LinkSelector(LinkShape.ordered(link.rails) { it.provider })
    }

    /**
     * [infos] of [link]'s rails, each with its identity ([RailAttr], weight 1): its provider when the provider appears
     * once in the link, else provider and interface (`tcp:eth0`).
     */
    private fun named(link: List<RailSelector>, infos: List<Info>): List<Info> =
        infos.map { i ->
            val name =
                if (link.count { it.provider == i.provider } == 1) i.provider else "${i.provider}:${i.domainName}"
            i.copy(rail = RailAttr(name))
        }

    private fun linkInfo(link: LinkSelector, rails: List<Info>): Info {
        val networks = rails.filter { it.provider != SHM }
        val network = networks.singleOrNull()
        // What the link carries: what every one of its rails carries (messages, RMA and atomics
        // through each rail; triggered operations through the domain's deferred work queue).
        val common =
            Caps.MSG or
                Caps.TAGGED or
                Caps.SEND or
                Caps.RECV or
                Caps.SOURCE or
                Caps.DIRECTED_RECV or
                Caps.RMA_ALL or
                Caps.HMEM or
                Caps.TRIGGER
        var caps = common
        for (r in rails) caps = caps and Braid.provider(r.provider).capsAsRail(r)
        for (r in rails) caps = caps or (r.caps and (Caps.LOCAL_COMM or Caps.REMOTE_COMM))
        return Info(
            provider = name,
            fabricName = link.name,
            domainName =
                when {
                    networks.isEmpty() -> link.name
                    network != null -> "${link.name}:${network.domainName}"
                    else -> "${link.name}:${networks.joinToString("+") { it.domainName }}"
                },
            caps = caps,
            mode = 0,
            endpointType = EndpointType.RDM,
            domainAttr = rails.first().domainAttr,
            endpointAttr =
                EndpointAttr(
                    protocol = "BRAID_LINK",
                    maxMsgSize = rails.minOf { it.endpointAttr.maxMsgSize },
                    eagerSize = rails.minOf { it.endpointAttr.eagerSize },
                ),
            txAttr = TxAttr(injectSize = rails.minOf { it.txAttr.injectSize }),
            rxAttr = RxAttr(unexpectedLimit = rails.minOf { it.rxAttr.unexpectedLimit }),
            rails = rails,
        )
    }

    private fun permutations(choices: List<List<Info>>): List<List<Info>> =
        choices.fold(listOf(emptyList())) { acc, options -> acc.flatMap { prefix -> options.map { prefix + it } } }
}

/** A link's part of a domain: each rail's own domain part, opened as the link's peer. */
internal class LinkDomain(private val domain: Domain, private val info: Info) : DomainProvider {
    private val rails: List<Pair<Info, DomainProvider>>

    init {
        if (info.rails.isEmpty()) {
            throw FabricException.invalid(
                "link domain '${info.domainName}': the Info names no rails; take it from Braid.getInfo(Hints(provider = \"link\"))"
            )
        }
        val opened = ArrayList<Pair<Info, DomainProvider>>()
        try {
            for (rail in info.rails) {
                val provider = Braid.provider(rail.provider)
                if (!provider.canBePeer) {
                    throw FabricException.invalid(
                        "link domain '${info.domainName}': provider '${rail.provider}' cannot be opened as a peer (it cannot share the link's CQ and receive context)"
                    )
                }
                if (AddressHeader.kindOf(rail.provider) < 0) {
                    throw FabricException.invalid(
                        "link domain '${info.domainName}': provider '${rail.provider}' has no address kind a link address can carry"
                    )
                }
                opened += rail to provider.openDomain(domain, rail)
            }
        } catch (e: Exception) {
            opened.forEach { runCatching { it.second.close() } }
            throw e
        }
        rails = opened
        val shape =
            rails.map { (i, _) ->
                LinkShape.Rail(i.rail?.name ?: i.provider, i.provider, listOf(i.domainName), i.rail?.weight ?: 1.0)
            }
        val linkSettings = domain.info.settings.overlay(info.settings)
        val policy = linkSettings[LinkParams.POLICY]
        val networkEager =
            rails.filter { it.first.provider != LinkShape.SHM }.maxOfOrNull { it.first.endpointAttr.eagerSize } ?: 0
        val problem =
            LinkShape.problems(shape, policy).firstOrNull()
                ?: (if (LinkShape.policyOf(policy) == LinkShape.STRIPE)
                    LinkShape.thresholdProblem(
                        linkSettings[LinkParams.STRIPE_THRESHOLD].toLong(),
                        networkEager,
                        linkSettings.resolve(LinkParams.STRIPE_THRESHOLD).let {
                            when (it.source) {
                                ParamSource.ENVIRONMENT -> it.param.env
                                ParamSource.FILE -> "${it.origin}: ${it.param.key}"
                                else -> it.param.key
                            }
                        },
                    )
                else null)
                ?: shape
                    .groupBy { it.name }
                    .values
                    .firstOrNull { it.size > 1 }
                    ?.let {
                        LinkShapeProblem(
                            LinkShapeProblem.Kind.SAME_INTERFACE,
                            "rails",
                            -1,
                            "has ${it.size} rails named '${it[0].name}'",
                            "give each rail its own name (Info.rail)",
                        )
                    }
        if (problem != null) {
            opened.forEach { runCatching { it.second.close() } }
            throw FabricException.invalid("${problem.message(info.domainName, shape)}; ${problem.hint}")
        }
    }

    /** Each rail's identity: its [RailAttr] name, or its provider (an Info built by hand). */
    private val names: List<String> = rails.map { (i, _) -> i.rail?.name ?: i.provider }

    override fun parseAddress(raw: ByteArray): PeerAddress {
        val parsed = LinkAddressDescriptor.parse(raw, partParser)
        if (parsed.version <= LinkAddressDescriptor.VERSION_UNNAMED) {
            // An older peer names no rails: pairing by kind works while this link has one rail of each.
            val ambiguous = rails.groupBy { it.first.provider }.filter { it.value.size > 1 }.keys
            val carried = ambiguous.firstOrNull { parsed.partsOfKind(AddressHeader.kindOf(it)) > 0 }
            if (carried != null) {
                throw FabricException.invalid(
                    "link address ${parsed.render()}: version ${parsed.version} (an older Braid, one unnamed rail per provider) cannot say which of this link's " +
                        "${rails.count { it.first.provider == carried }} $carried rails (${names.filterIndexed { i, _ -> rails[i].first.provider == carried }.joinToString { "'$it'" }}) it pairs with; " +
                        "this node writes and reads link address version ${LinkAddressDescriptor.VERSION}: run the same Braid on every node, or give this link one $carried rail"
                )
            }
        }
        return parsed
    }

    /**
     * Parses a part of a link address with the rail of its name, else with a rail of its kind (null: no such rail
     * here); one object for every parse.
     */
    private val partParser: (String, Int, ByteArray) -> PeerAddress? = { name, kind, blob ->
        var rail = -1
        for (i in 0 until rails.size) if (names[i] == name) rail = i
        if (rail < 0) {
            val provider = AddressHeader.nameOf(kind)
            for (i in 0 until rails.size) if (rail < 0 && rails[i].first.provider == provider) rail = i
        }
        if (rail < 0) null else rails[rail].second.parseAddress(blob)
    }

    override fun openEndpoint(host: RailHost, info: Info, av: RailAv): Transport {
        val opened = ArrayList<LinkRail>()
        val hosts = ArrayList<LinkRailHost>()
        val stage = ReorderStage(host)
        try {
            for ((k, pair) in rails.withIndex()) {
                val (railInfo, provider) = pair
                // The link's unexpected limit bounds its one shared queue: each rail is opened with it, not its own.
                val rail = railInfo.copy(rxAttr = railInfo.rxAttr.copy(unexpectedLimit = info.rxAttr.unexpectedLimit))
                val sole = rails.count { it.first.provider == railInfo.provider } == 1
                val railAv = av.forRail(names[k], railInfo.provider, sole)
                val railHost = LinkRailHost(host, names[k], stage)
                hosts += railHost
                opened +=
                    LinkRail(
                        names[k],
                        railInfo.provider,
                        railInfo.rail?.weight ?: 1.0,
                        railAv,
                        provider.openEndpoint(railHost, rail, railAv),
                        rail.endpointAttr.eagerSize,
                    )
            }
        } catch (e: Exception) {
            opened.forEach { runCatching { it.transport.close() } }
            throw e
        }
        val settings = domain.info.settings.overlay(info.settings)
        return LinkTransport(
                host,
                av,
                info,
                HostIdentity.id,
                opened,
                useSrq = settings[LinkParams.USE_SRQ],
                dumpStats = settings[LinkParams.DUMP_STATS],
                policy = LinkShape.policyOf(settings[LinkParams.POLICY])!!,
                stripeThreshold = settings[LinkParams.STRIPE_THRESHOLD],
                stage = stage,
                resendBytes = settings[LinkParams.RESEND_BYTES].toLong(),
            )
            .also { link -> hosts.forEach { it.link = link } }
    }

    override fun close() {
        var first: Exception? = null
        for ((_, p) in rails) try {
            p.close()
        } catch (e: Exception) {
            if (first == null) first = e
        }
        first?.let { throw it }
    }

    override fun toString(): String =
        "link domain '${info.domainName}' (${rails.joinToString { it.second.toString() }})"
}
