package braid.provider.tcp

import braid.core.Caps
import braid.core.CoreParams
import braid.core.Domain
import braid.core.EndpointAttr
import braid.core.EndpointType
import braid.core.FabricException
import braid.core.Hints
import braid.core.Info
import braid.core.Param
import braid.core.RailLimit
import braid.core.RxAttr
import braid.core.Settings
import braid.core.TxAttr
import braid.provider.DomainProvider
import braid.provider.HostIdentity
import braid.provider.PeerAddress
import braid.provider.Provider
import braid.provider.RailAv
import braid.provider.RailHost
import braid.provider.Transport
import java.net.Inet4Address
import java.net.Inet6Address
import java.net.InetAddress
import java.net.InetSocketAddress
import java.net.NetworkInterface

/**
 * The tcp rail: processes on any hosts, over non-blocking NIO sockets, one connection per pair of endpoints, opened on
 * first use. Small messages travel whole (eager); larger ones wait for their receive (rendezvous) and then stream
 * straight into it. See [TcpTransport].
 *
 * [infos] offers one entry per usable network interface, like `fi_info -p tcp`: its domain is the interface's name
 * ("eth0", "lo"), its fabric the interface's network ("192.0.2.0/24"). The first entry is the interface
 * [TcpParams.ADDR] (an address, optionally `:port`, or `[v6]:port`) belongs to, else [TcpParams.IFACE], else the first
 * non-loopback interface that is up; loopback comes last. An endpoint listens on its domain's interface address (or on
 * [TcpParams.ADDR], port included — a fixed port serves one endpoint), port 0 otherwise.
 *
 * Tuning: the parameters of [TcpParams] and the job key [CoreParams.JOB_KEY], resolved from the hints' [Settings] when
 * [infos] is called and from the Info's when an endpoint opens ([TcpSettings]).
 */
internal object TcpProvider : Provider {
    override val name: String = "tcp"

    const val INJECT_SIZE = 4096

    override val parameters: List<Param<*>>
        get() = TcpParams.ALL

    override fun limitParameter(limit: RailLimit): Param<Int> =
        when (limit) {
            RailLimit.EAGER_SIZE -> TcpParams.EAGER_SIZE
            RailLimit.RING_CAPACITY -> TcpParams.BUFFER_SIZE
        }

    override val canBePeer: Boolean
        get() = true

    override fun infos(): List<Info> = infos(Hints())

    override fun hostIdOf(address: ByteArray): Long? =
        try {
            TcpAddressDescriptor.parse(address).hostId
        } catch (e: FabricException) {
            null
        }

    override fun infos(hints: Hints): List<Info> {
        val settings = hints.settings.check(TcpParams.ALL + CoreParams.ALL)
        val eager = settings[TcpParams.EAGER_SIZE]
        return interfaces(settings).map { nic ->
            Info(
                provider = name,
                fabricName = nic.network,
                domainName = nic.name,
                caps =
                    Caps.MSG or
                        Caps.TAGGED or
                        Caps.SEND or
                        Caps.RECV or
                        Caps.RMA_ALL or
                        Caps.HMEM or // device memory staged through bounce buffers (HmemStaging)
                        Caps.TRIGGER or
                        Caps.SOURCE or
                        Caps.DIRECTED_RECV or
                        Caps.LOCAL_COMM or
                        Caps.REMOTE_COMM,
                mode = 0,
                endpointType = EndpointType.RDM,
                domainAttr = CoreParams.domainAttr(settings),
                endpointAttr =
                    EndpointAttr(protocol = "BRAID_TCP", maxMsgSize = Int.MAX_VALUE.toLong(), eagerSize = eager),
                txAttr = TxAttr(injectSize = minOf(INJECT_SIZE, eager)),
                rxAttr = RxAttr(unexpectedLimit = settings[CoreParams.UNEXPECTED_LIMIT]),
                settings = hints.settings,
            )
        }
    }

    override fun openDomain(domain: Domain, info: Info): DomainProvider =
        TcpDomain(domain, bindAddress(info.domainName, info.settings))

    /** One usable interface: its name, the address endpoints listen on, its network in CIDR form. */
    class Nic(val name: String, val bind: InetSocketAddress, val network: String)

    /** The usable interfaces, the preferred one first (see the class comment). */
    fun interfaces(settings: Settings = Settings.DEFAULT): List<Nic> {
        val explicit = explicitAddress(settings.resolve(TcpParams.ADDR).value.trim())
        val wanted = settings[TcpParams.IFACE].trim().takeIf { it.isNotEmpty() }
        val all =
            NetworkInterface.networkInterfaces()
                .use { s -> s.toList() }
                .filter { runCatching { it.isUp }.getOrDefault(false) }
                .sortedBy { it.index }
                .mapNotNull { nic ->
                    preferredAddress(nic)?.let { Nic(nic.name, InetSocketAddress(it.first, 0), it.second) }
                }
        if (all.isEmpty() && explicit == null)
            throw FabricException.noData("tcp: no network interface is up with an address")
        val first: Nic =
            when {
                explicit != null -> {
                    val nic =
                        NetworkInterface.getByInetAddress(explicit.address)
                            ?: throw FabricException.invalid(
                                "tcp.addr (BRAID_TCP_ADDR): ${explicit.address.hostAddress} is not an address of this host (interfaces: ${all.joinToString { "${it.name} ${it.bind.address.hostAddress}" }})"
                            )
                    Nic(
                        nic.name,
                        explicit,
                        all.firstOrNull { it.name == nic.name }?.network ?: explicit.address.hostAddress,
                    )
                }
                wanted != null ->
                    all.firstOrNull { it.name == wanted }
                        ?: throw FabricException.invalid(
                            "tcp.iface (BRAID_TCP_IFACE) = '$wanted': no interface of that name is up with an address (known: ${all.joinToString { it.name }})"
                        )
                else -> all.firstOrNull { !isLoopback(it) } ?: all.first()
            }
        val rest = all.filter { it.name != first.name }.sortedBy { isLoopback(it) }
        return listOf(first) + rest
    }

    private fun bindAddress(domainName: String, settings: Settings): InetSocketAddress {
        val nics = interfaces(settings)
        return nics.firstOrNull { it.name == domainName }?.bind
            ?: throw FabricException.invalid(
                "tcp domain '$domainName': no interface of that name is up with an address (known: ${nics.joinToString { it.name }})"
            )
    }

    private fun isLoopback(nic: Nic): Boolean = nic.bind.address.isLoopbackAddress

    /** IPv4 first, then a global IPv6 address, then a link-local one; with the network it is on. */
    private fun preferredAddress(nic: NetworkInterface): Pair<InetAddress, String>? {
        val addresses = nic.interfaceAddresses.filter { it.address != null }
        val pick =
            addresses.firstOrNull { it.address is Inet4Address }
                ?: addresses.firstOrNull { it.address is Inet6Address && !it.address.isLinkLocalAddress }
                ?: addresses.firstOrNull { it.address is Inet6Address }
                ?: return null
        return pick.address to network(pick.address, pick.networkPrefixLength.toInt())
    }

    private fun network(ip: InetAddress, prefix: Int): String {
        val bytes = ip.address
        for (i in bytes.indices) {
            val keep = (prefix - i * 8).coerceIn(0, 8)
            bytes[i] = (bytes[i].toInt() and (0xff shl (8 - keep))).toByte()
        }
        val net = InetAddress.getByAddress(bytes).hostAddress.substringBefore('%')
        return "$net/$prefix"
    }

    /** [TcpParams.ADDR] ([v], trimmed): `host`, `host:port`, `[v6]` or `[v6]:port`. */
    private fun explicitAddress(v: String): InetSocketAddress? {
        if (v.isEmpty()) return null
        fun bad(why: String): Nothing =
            throw FabricException.invalid(
                "tcp.addr (BRAID_TCP_ADDR) = '$v': $why; write an address, optionally with :port (IPv6 in brackets: [::1]:7000)"
            )
        val (host, port) =
            when {
                v.startsWith("[") -> {
                    val end = v.indexOf(']').takeIf { it > 0 } ?: bad("no closing ']'")
                    val rest = v.substring(end + 1)
                    v.substring(1, end) to (if (rest.isEmpty()) "0" else rest.removePrefix(":"))
                }
                v.count { it == ':' } == 1 -> v.substringBefore(':') to v.substringAfter(':')
                else -> v to "0"
            }
        val p = port.toIntOrNull()?.takeIf { it in 0..65535 } ?: bad("port '$port' is not 0..65535")
        val ip = runCatching { InetAddress.getByName(host) }.getOrElse { bad("cannot resolve '$host' (${it.message})") }
        if (ip.isAnyLocalAddress) bad("the wildcard address cannot be advertised to peers")
        return InetSocketAddress(ip, p)
    }
}

internal class TcpDomain(private val domain: Domain, private val bind: InetSocketAddress) : DomainProvider {
    override fun parseAddress(raw: ByteArray): PeerAddress = TcpAddressDescriptor.parse(raw)

    override fun openEndpoint(host: RailHost, info: Info, av: RailAv): Transport {
        // The endpoint's rail Info's own settings over its domain's (a link's rail over the link).
        val settings = TcpSettings.of(domain.info.settings.overlay(info.settings))
        return TcpTransport(host, info, av, bind, HostIdentity.id, settings)
    }

    override fun close() {}

    override fun toString(): String = "tcp domain '${domain.name}' on $bind"
}
