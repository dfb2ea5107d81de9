package braid.samples

import braid.core.Braid
import braid.core.Caps
import braid.core.EndpointType
import braid.core.Hints
import braid.core.Info
import braid.core.Param
import braid.core.Settings
import braid.provider.ofi.OfiInfos
import java.io.PrintStream

/**
 * `braid info`: what `fi_info` shows, for Braid's providers.
 * - no option: each [Info] that [Braid.getInfo] returns, in fi_info's short form (`provider:`, then fabric, domain,
 *   version, type and protocol indented by four spaces);
 * - `-l`: provider names and versions, as `fi_info -l`;
 * - `-p NAME`, `-d DOMAIN`, `-f FABRIC`, `-t EP_TYPE` (`FI_EP_RDM`), `-c CAPS` (`FI_MSG|FI_TAGGED`): only the entries
 *   that match, as `fi_info`'s filters (`-p` also filters `-l`);
 * - `-v`: each Info in full ([Info.describe]), each preceded by `---` as `fi_info -v` does, then the parameters its
 *   provider (and a link's rails) run with: current value and where it came from; last, under `modules:`, the
 *   parameters of the modules above rail-core (collectives, MPI, the bootstrap, this command);
 * - `-e`: every `BRAID_*` variable ([Braid.parameters]: core's, the providers', and the modules' above rail-core,
 *   [braid.core.ModuleParams]) with its current value and where it came from, its default and meaning, as `fi_info -e`
 *   lists libfabric's (`-p` keeps Braid's own and that provider's);
 * - `--config FILE`: the topology FILE describes, resolved on this host ([TopologyInfo]).
 *
 * When nothing matches, [Braid.getInfo] throws [braid.core.FabricException]; `braid` prints its message and exits with
 * status 1.
 */
internal object InfoCommand {
    const val COMMAND: String = "info"

    private val LIST = OptionSpec('l', "list", null, "list available providers")
    private val PROVIDER = OptionSpec('p', "provider", "provider", "only this provider")
    private val DOMAIN = OptionSpec('d', "domain", "domain", "only this domain (e.g. lo)")
    private val FABRIC = OptionSpec('f', "fabric", "fabric", "only this fabric (e.g. 127.0.0.0/8)")
    private val EP_TYPE = OptionSpec('t', "ep_type", "type", "only this endpoint type (FI_EP_RDM)")
    private val CAPS =
        OptionSpec('c', "caps", "caps", "only entries with these capabilities, '|'-separated (FI_MSG|FI_TAGGED)")
    private val ENV = OptionSpec('e', "env", null, "list every BRAID_* variable: current value, default and meaning")
    private val VERBOSE = OptionSpec('v', "verbose", null, "verbose output: every attribute and parameter")
    private val CONFIG =
        OptionSpec(
            null,
            "config",
            "file",
            "the topology a file (.json, .conf) describes, resolved on this host: which rails can be opened and why not",
        )
    private val HELP = OptionSpec('h', "help", null, "display this help output")
    private val SPECS = listOf(LIST, PROVIDER, DOMAIN, FABRIC, EP_TYPE, CAPS, ENV, VERBOSE, CONFIG, HELP)

    fun usage(): String = buildString {
        append("Usage: braid info [OPTIONS]\n")
        append("\nThe fabric interfaces Braid offers on this machine, as fi_info shows libfabric's.\n")
        append("\nOptions:\n")
        append(optionsHelp(SPECS))
    }

    /**
     * Runs `braid info [args]`; returns the exit status (failures are thrown). The settings are this process's
     * environment, or [environment]'s variables instead when it is not null.
     */
    fun run(args: List<String>, out: PrintStream, environment: Map<String, String>? = null): Int {
        val settings = environment?.let { Settings.ofEnvironment(it) } ?: Settings.DEFAULT
        val parsed = parseArgs(COMMAND, args, SPECS)
        if (parsed.has(HELP)) {
            out.print(usage())
            return 0
        }
        if (parsed.positionals.isNotEmpty()) {
            throw UsageException(COMMAND, "unexpected argument '${parsed.positionals.first()}'")
        }
        val provider = parsed.value(PROVIDER)
        parsed.value(CONFIG)?.let { file ->
            if (provider != null || parsed.has(LIST))
                throw UsageException(COMMAND, "option '--config' takes no -p or -l")
            TopologyInfo.run(file, parsed.has(VERBOSE), out, environment)
            return 0
        }
        if (parsed.has(ENV)) {
            out.print(environment(provider, settings))
            return 0
        }
        if (parsed.has(LIST)) {
            val names =
                if (provider == null) {
                    Braid.providerNames()
                } else {
                    Braid.getInfo(Hints(provider = provider, settings = settings)).map { it.provider }.distinct()
                }
            for (name in names) {
                out.println("$name:")
                out.println("    version: ${Braid.VERSION}")
            }
            return 0
        }
        val hints =
            Hints(
                caps = parsed.value(CAPS)?.let { caps(it) } ?: 0,
                endpointType = parsed.value(EP_TYPE)?.let { endpointType(it) } ?: EndpointType.RDM,
                provider = provider,
                domainName = parsed.value(DOMAIN),
                settings = settings,
            )
        val fabric = parsed.value(FABRIC)
        val infos = Braid.getInfo(hints).filter { fabric == null || it.fabricName == fabric }
        if (infos.isEmpty())
            throw braid.core.FabricException.noData(
                "getInfo: no entry on fabric '$fabric' (fabrics: ${Braid.getInfo(hints).map { it.fabricName }.distinct().joinToString()})"
            )
        for (info in infos) {
            if (parsed.has(VERBOSE) && OfiInfos.isNative(info)) {
                // fi_info -v's own text for the native entry, then Braid's view of it.
                out.println("---")
                out.print(OfiInfos.verbose(info) ?: "")
                out.println(info.describe())
                out.print(parameters(info))
            } else if (parsed.has(VERBOSE)) {
                out.println("---")
                out.println(info.describe())
                out.print(parameters(info))
            } else {
                out.print(shortForm(info))
            }
        }
        if (parsed.has(VERBOSE)) {
            out.println("---")
            out.print(moduleParameters(settings))
        }
        return 0
    }

    /** `-c FI_MSG|FI_TAGGED` as capability bits; a name that is not one is a usage error naming the known ones. */
    private fun caps(text: String): Long {
        val names =
            (0 until 64)
                .map { 1L shl it }
                .associateBy { Caps.toString(it) }
                .filterKeys { it.startsWith("FI_") && '|' !in it }
        return text
            .split('|', ',')
            .map { it.trim() }
            .filter { it.isNotEmpty() }
            .fold(0L) { acc, n ->
                val key = if (n.uppercase().startsWith("FI_")) n.uppercase() else "FI_${n.uppercase()}"
                acc or
                    (names[key]
                        ?: throw UsageException(
                            COMMAND,
                            "option '-c': unknown capability '$n' (known: ${names.keys.sorted().joinToString()})",
                        ))
            }
    }

    private fun endpointType(text: String): EndpointType {
        val name = text.trim().uppercase().removePrefix("FI_EP_")
        return EndpointType.values().firstOrNull { it.name == name }
            ?: throw UsageException(
                COMMAND,
                "option '-t': unknown endpoint type '$text' (known: ${EndpointType.values().joinToString { "FI_EP_$it" }})",
            )
    }

    /** The parameters [info]'s provider (and a link's rails) use, each with its current value and source. */
    fun parameters(info: Info): String = buildString {
        append("    parameters:\n")
        val byProvider = Braid.parameters().groupBy { it.provider }
        val providers = listOf("core", info.provider) + info.rails.map { it.provider }
        for (p in providers.distinct()) {
            val rail = info.rails.firstOrNull { it.provider == p }
            val settings = (rail?.let { info.settings.overlay(it.settings) } ?: info.settings)
            for (param in byProvider[p].orEmpty()) append("        ").append(line(param, settings)).append('\n')
        }
    }

    /**
     * The parameters of the modules above rail-core ([braid.core.ModuleParams]: collectives, `braid.mpi`, the
     * bootstrap, this command), each with its current value and source.
     */
    fun moduleParameters(settings: Settings): String = buildString {
        append("modules:\n")
        append("    parameters:\n")
        for (param in moduleParams()) append("        ").append(line(param, settings)).append('\n')
    }

    /** The parameters no provider declares, nor core: those the modules register. */
    private fun moduleParams(): List<Param<*>> {
        val providers = Braid.providerNames().toSet()
        return Braid.parameters().filter { it.provider != "core" && it.provider !in providers }
    }

    private fun line(param: Param<*>, settings: Settings): String =
        try {
            val r = settings.resolve(param)
            "${param.key}: ${r.render()} (${r.origin})"
        } catch (e: braid.core.SettingsException) {
            "${param.key}: INVALID: ${e.problems.single().message}"
        }

    /**
     * `fi_info -e`: every variable, its type, meaning, default and current value with where it came from; with
     * [provider] only Braid's own (`core`) and that provider's (a name that is no provider is a usage error naming the
     * known ones).
     */
    fun environment(provider: String?, settings: Settings): String = buildString {
        if (provider != null && provider !in Braid.providerNames()) {
            throw UsageException(
                COMMAND,
                "option '-p': no provider '$provider' (known: ${Braid.providerNames().joinToString()})",
            )
        }
        for (param in
            Braid.parameters().filter { provider == null || it.provider == "core" || it.provider == provider }) {
            append("# ").append(param.env).append(": ").append(param.type.name.lowercase())
            if (param.unit.isNotEmpty()) append(" (").append(param.unit).append(')')
            append(", ").append(param.key).append('\n')
            append("# ").append(param.help).append('\n')
            append("#     default: ")
                .append(param.render(param.default))
                .append("; current: ")
                .append(line(param, settings).substringAfter(": "))
                .append("\n\n")
        }
    }

    /** fi_info's default form of one entry. */
    fun shortForm(info: Info): String = buildString {
        append("provider: ").append(if (OfiInfos.isNative(info)) OfiInfos.name(info) else info.provider).append('\n')
        append("    fabric: ").append(info.fabricName).append('\n')
        append("    domain: ").append(info.domainName).append('\n')
        append("    version: ").append(Braid.VERSION).append('\n')
        append("    type: FI_EP_").append(info.endpointType).append('\n')
        append("    protocol: ").append(info.endpointAttr.protocol).append('\n')
    }
}
