package braid.it

import braid.testsupport.ChildProcess
import io.kotest.core.annotation.EnabledCondition
import io.kotest.core.spec.Spec
import java.io.File
import java.nio.channels.FileChannel
import java.nio.file.Paths
import java.nio.file.StandardOpenOption
import java.util.concurrent.TimeUnit
import kotlin.reflect.KClass

/**
 * [count] hosts on this machine: network namespaces, each joined by a veth pair to a bridge in the root namespace, with
 * an address in a private /24 and a host identity of its own (`BRAID_HOST_ID`), so tcp crosses a real link between
 * network stacks and shm refuses to reach from one host to another (/dev/shm itself is shared). The bridge has an
 * address on the same network ([rootIface], [rootAddress]), so the test's own process is a host too.
 *
 * With [nics] > 1 every host has that many "NICs": veth `braid0`, `braid1`, … ([Host.ifaces]), NIC k of every host on
 * its own bridge and its own /24, so a link's rails `tcp:braid0+tcp:braid1` take separate paths; [unplug] cuts one,
 * [limit] rate-limits one (`tc … tbf`, both directions).
 *
 * Names carry this process's pid, so parallel runs do not clash, and what a dead run left behind is removed when the
 * next one starts. Everything (children started with [start] included) is removed on [close], or by a shutdown hook if
 * the JVM exits first. Needs root and iproute2; specs that use it are annotated `@EnabledIf(NetnsUsable::class)`.
 */
class NetnsHosts @JvmOverloads constructor(count: Int, val nics: Int = 1) : Hosts {
    /** One host: its namespace, its interface there, its IPv4 address, and its `BRAID_HOST_ID`. */
    class Host(
        val namespace: String,
        val iface: String,
        val address: String,
        internal val rootEnd: String,
        /** Every NIC's interface (the first is [iface]) and address, and its veth end on the bridge. */
        val ifaces: List<String> = listOf(iface),
        val addresses: List<String> = listOf(address),
        internal val rootEnds: List<String> = listOf(rootEnd),
    ) {
        val hostId: String
            get() = "netns:$namespace"

        override fun toString(): String = "host $namespace ($iface $address)"
    }

    val hosts: List<Host>
    /** The bridge: the root namespace's interface on the hosts' network. */
    val rootIface: String = "${LINK_PREFIX}b$PID"
    override val iface: String
        get() = rootIface

    val rootAddress: String
    /** The bridges of NICs 1.. (NIC 0's is [rootIface]). */
    private val bridges = ArrayList<String>()
    private val namespaces = ArrayList<String>()
    private val rootEnds = ArrayList<String>()
    private val children = ArrayList<ChildProcess>()
    private val hook = Thread({ cleanup() }, "netns-cleanup")
    private var closed = false

    init {
        require(count in 1..200) { "NetnsHosts: $count hosts; give 1..200" }
        require(nics in 1..3) { "NetnsHosts: $nics NICs per host; give 1..3" }
        unusable?.let { why ->
            val demand = if (required) " This run requires them (BRAID_REQUIRE_NETNS=1 or CI is set)." else ""
            error("network namespaces are unusable here: $why.$demand Run as root with iproute2 installed.")
        }
        Runtime.getRuntime().addShutdownHook(hook)
        try {
            val nets = locked {
                sweepStale()
                val taken = HashSet<String>()
                List(nics) { k ->
                    val net = freeSubnet(taken).also { taken += it }
                    val bridge = if (k == 0) rootIface else "${LINK_PREFIX}b$PID-n$k"
                    ip("link", "add", "name", bridge, "type", "bridge", "forward_delay", "0")
                    rootEnds += bridge
                    if (k > 0) bridges += bridge
                    ip("addr", "add", "$net.254/24", "dev", bridge)
                    ip("link", "set", bridge, "up")
                    net
                }
            }
            rootAddress = "${nets[0]}.254"
            hosts =
                List(count) { i ->
                    val ns = "$NS_PREFIX$PID-$i"
                    ip("netns", "add", ns)
                    namespaces += ns
                    ip("-n", ns, "link", "set", "lo", "up")
                    val ends =
                        List(nics) { k ->
                            val rootEnd = if (k == 0) "${LINK_PREFIX}v$PID-$i" else "${LINK_PREFIX}v$PID-${i}n$k"
                            val iface = nicName(k)
                            ip("link", "add", "name", rootEnd, "type", "veth", "peer", "name", iface, "netns", ns)
                            rootEnds += rootEnd
                            ip("link", "set", rootEnd, "master", if (k == 0) rootIface else bridges[k - 1], "up")
                            ip("-n", ns, "addr", "add", "${nets[k]}.${i + 1}/24", "dev", iface)
                            ip("-n", ns, "link", "set", iface, "up")
                            rootEnd
                        }
                    Host(
                        ns,
                        IFACE,
                        "${nets[0]}.${i + 1}",
                        ends[0],
                        List(nics) { nicName(it) },
                        List(nics) { "${nets[it]}.${i + 1}" },
                        ends,
                    )
                }
        } catch (t: Throwable) {
            close()
            throw t
        }
    }

    /**
     * Starts a JVM running [main] on [host], with `BRAID_HOST_ID` and `BRAID_TCP_IFACE` set for it (on top of [env]);
     * it is killed on [close] if still running.
     */
    fun start(
        host: Host,
        main: String,
        args: List<String>,
        log: File,
        env: Map<String, String> = emptyMap(),
        jvmArgs: List<String> = listOf("-Xmx256m"),
    ): ChildProcess {
        val all = env + mapOf("BRAID_HOST_ID" to host.hostId, "BRAID_TCP_IFACE" to host.iface)
        return ChildProcess.jvm(main, args)
            .env(all)
            .output(log)
            .jvmArgs(jvmArgs)
            .launcher(listOf(IP!!, "netns", "exec", host.namespace))
            .start()
            .also { children += it }
    }

    override fun start(
        host: Int,
        main: String,
        args: List<String>,
        log: File,
        env: Map<String, String>,
        jvmArgs: List<String>,
    ): ChildProcess = start(hosts[host], main, args, log, env, jvmArgs)

    /** Cuts [host]'s cable: its veth end on the bridge goes down, so packets are lost, not refused. */
    fun unplug(host: Host) {
        ip("link", "set", host.rootEnd, "down")
    }

    fun plug(host: Host) {
        ip("link", "set", host.rootEnd, "up")
    }

    /** Cuts [host]'s NIC [nic] only: its veth end on that NIC's bridge goes down. */
    fun unplug(host: Host, nic: Int) {
        ip("link", "set", host.rootEnds[nic], "down")
    }

    fun plug(host: Host, nic: Int) {
        ip("link", "set", host.rootEnds[nic], "up")
    }

    /**
     * Resets [host]'s tcp connections to [peer]'s NIC [nic] (`ss -K`, in [host]'s namespace): the kernel aborts them
     * and sends the other end a reset, as a crashed NIC driver or a middlebox would.
     */
    fun resetConnections(host: Host, nic: Int, peer: Host) {
        val ss = File(IP ?: "ip").resolveSibling("ss").takeIf { it.canExecute() }?.path ?: "ss"
        ip("netns", "exec", host.namespace, ss, "-K", "dst", peer.addresses[nic])
    }

    /**
     * Limits [host]'s NIC [nic] to [mbit] Mbit/s in both directions (`tc qdisc … tbf` on the host's end and on the
     * bridge's; this kernel runs tbf on veth, not netem).
     */
    fun limit(host: Host, nic: Int, mbit: Int) {
        val tbf = listOf("root", "tbf", "rate", "${mbit}mbit", "burst", "${maxOf(16, mbit / 4)}kb", "latency", "50ms")
        tc(listOf("-n", host.namespace, "qdisc", "replace", "dev", host.ifaces[nic]) + tbf)
        tc(listOf("qdisc", "replace", "dev", host.rootEnds[nic]) + tbf)
    }

    override fun close() {
        if (closed) return
        closed = true
        cleanup()
        runCatching { Runtime.getRuntime().removeShutdownHook(hook) }
    }

    @Synchronized
    private fun cleanup() {
        children.forEach { runCatching { it.close() } }
        children.clear()
        // Deleting one end of a veth pair deletes both.
        for (link in rootEnds.reversed()) ip("link", "del", link, check = false)
        rootEnds.clear()
        for (ns in namespaces) ip("netns", "del", ns, check = false)
        namespaces.clear()
    }

    companion object {
        /** The interface each host has, in its own namespace. */
        const val IFACE: String = "braid0"

        /** NIC [k]'s interface in every host: `braid0`, `braid1`, … */
        fun nicName(k: Int): String = "braid$k"

        /** Runs `tc ARGS…` (iproute2's), failing with its output. */
        private fun tc(args: List<String>) {
            val tc = File(IP ?: "ip").resolveSibling("tc").takeIf { it.canExecute() }?.path ?: "tc"
            val p = ProcessBuilder(listOf(tc) + args).redirectErrorStream(true).start()
            val out = p.inputStream.readBytes().decodeToString().trim()
            check(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0) {
                "'tc ${args.joinToString(" ")}' failed: $out"
            }
        }

        private const val NS_PREFIX = "braid-"
        private const val LINK_PREFIX = "brd"
        private val PID = ProcessHandle.current().pid()
        private val lockFile = Paths.get("/tmp/braid-netns.lock")

        /** The `ip` command, or null if iproute2 is not installed. */
        private val IP: String? =
            ((System.getenv("PATH") ?: "").split(':') + listOf("/usr/sbin", "/sbin", "/usr/bin", "/bin"))
                .filter { it.isNotEmpty() }
                .map { File(it, "ip") }
                .firstOrNull { it.canExecute() }
                ?.path

        /** Whether this run must have network namespaces (CI): then a spec fails instead of being skipped. */
        val required: Boolean =
            System.getenv("BRAID_REQUIRE_NETNS") == "1" || System.getenv("CI").let { it == "1" || it == "true" }

        /** Why network namespaces cannot be used here, or null if they can (found by trying). */
        val unusable: String? by lazy { probe() }

        private fun probe(): String? {
            if (IP == null) return "no 'ip' command (iproute2) on PATH or in /usr/sbin, /sbin"
            val ns = "$NS_PREFIX$PID-probe"
            return try {
                ip("netns", "add", ns)
                try {
                    ip("-n", ns, "link", "add", "name", "probe0", "type", "veth", "peer", "name", "probe1")
                    ip("netns", "exec", ns, "true")
                } finally {
                    ip("netns", "del", ns, check = false)
                }
                null
            } catch (e: IllegalStateException) {
                "${e.message} (running as uid ${uid()})"
            }
        }

        private fun uid(): String =
            runCatching {
                    File("/proc/self/status").readLines().first { it.startsWith("Uid:") }.split(Regex("\\s+"))[1]
                }
                .getOrDefault("?")

        /** Runs `ip ARGS…`; returns its output, failing with it unless [check] is false. */
        private fun ip(vararg args: String, check: Boolean = true): String {
            val cmd = listOf(IP ?: "ip") + args
            val p = ProcessBuilder(cmd).redirectErrorStream(true).start()
            val out = p.inputStream.readBytes().decodeToString().trim()
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly()
                error("'${cmd.joinToString(" ")}' did not finish in 30 s")
            }
            if (check && p.exitValue() != 0) error("'${cmd.joinToString(" ")}' failed (exit ${p.exitValue()}): $out")
            return out
        }

        /** Runs [block] holding a lock other test JVMs on this machine respect too. */
        private fun <T> locked(block: () -> T): T =
            synchronized(this) {
                FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE).use { ch ->
                    ch.lock().use {
                        return block()
                    }
                }
            }

        private fun alive(pid: String): Boolean = pid.toLongOrNull()?.let { ProcessHandle.of(it).isPresent } ?: true

        /** Removes the namespaces and links of runs whose process is gone. */
        private fun sweepStale() {
            val nsName = Regex("^$NS_PREFIX(\\d+)-\\S+")
            for (line in ip("netns", "list").lines()) {
                val m = nsName.find(line.trim()) ?: continue
                if (!alive(m.groupValues[1])) ip("netns", "del", m.value, check = false)
            }
            val linkName = Regex("^\\d+: ($LINK_PREFIX[bv](\\d+)(?:-n?\\d+)?(?:n\\d+)?)[@:]")
            for (line in ip("-o", "link", "show").lines()) {
                val m = linkName.find(line.trim()) ?: continue
                if (!alive(m.groupValues[2])) ip("link", "del", m.groupValues[1], check = false)
            }
        }

        /**
         * A 10.77.N prefix no address or route of the root namespace uses (nor one of [taken]), starting from one the
         * pid picks.
         */
        private fun freeSubnet(taken: Set<String> = emptySet()): String {
            val used =
                Regex("\\b10\\.77\\.(\\d+)\\.")
                    .findAll(ip("-4", "-o", "addr", "show") + "\n" + ip("-4", "route", "show"))
                    .map { it.groupValues[1].toInt() }
                    .toSet()
            val start = (PID % 200).toInt() + 20
            val n =
                (0 until 254).map { (start + it - 1) % 254 + 1 }.firstOrNull { it !in used && "10.77.$it" !in taken }
                    ?: error("no free 10.77.N.0/24 network: all are in use (${ip("-4", "route", "show")})")
            return "10.77.$n"
        }
    }
}

/**
 * Runs a spec only where network namespaces work, printing why it is skipped otherwise; where they are
 * [NetnsHosts.required] it always runs (and fails, saying why, if they do not work).
 */
class NetnsUsable : EnabledCondition {
    override fun enabled(kclass: KClass<out Spec>): Boolean {
        val why = NetnsHosts.unusable ?: return true
        if (NetnsHosts.required) return true
        System.err.println(
            "SKIPPED ${kclass.simpleName}: network namespaces are unusable here: $why. Run as root with iproute2 to include it."
        )
        return false
    }
}
