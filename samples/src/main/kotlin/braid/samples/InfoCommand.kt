package braid.samples

import braid.core.Braid
import braid.core.Hints
import braid.core.Info
import java.io.PrintStream

/**
 * `braid info`: what `fi_info` shows, for Braid's providers.
 *
 * - no option: each [Info] that [Braid.getInfo] returns, in fi_info's short form
 *   (`provider:`, then fabric, domain, version, type and protocol indented by four spaces);
 * - `-l`: provider names and versions, as `fi_info -l`;
 * - `-p NAME`: only provider NAME (also filters `-l`);
 * - `-v`: each Info in full ([Info.describe]), each preceded by `---` as `fi_info -v` does;
 * - `--config FILE`: the topology FILE describes, resolved on this host ([TopologyInfo]).
 *
 * When nothing matches, [Braid.getInfo] throws [braid.core.FabricException]; `braid` prints its
 * message and exits with status 1.
 */
internal object InfoCommand {
    const val COMMAND: String = "info"

    private val LIST = OptionSpec('l', "list", null, "list available providers")
    private val PROVIDER = OptionSpec('p', "provider", "provider", "only this provider")
    private val VERBOSE = OptionSpec('v', "verbose", null, "verbose output: every attribute")
    private val CONFIG = OptionSpec(null, "config", "file", "the topology a file (.json, .conf) describes, resolved on this host: which rails can be opened and why not")
    private val HELP = OptionSpec('h', "help", null, "display this help output")
    private val SPECS = listOf(LIST, PROVIDER, VERBOSE, CONFIG, HELP)

    fun usage(): String = buildString {
        append("Usage: braid info [OPTIONS]\n")
        append("\nThe fabric interfaces Braid offers on this machine, as fi_info shows libfabric's.\n")
        append("\nOptions:\n")
        append(optionsHelp(SPECS))
    }

    /** Runs `braid info [args]`; returns the exit status (failures are thrown). */
    fun run(args: List<String>, out: PrintStream): Int {
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
            if (provider != null || parsed.has(LIST)) throw UsageException(COMMAND, "option '--config' takes no -p or -l")
            TopologyInfo.run(file, parsed.has(VERBOSE), out)
            return 0
        }
        if (parsed.has(LIST)) {
            val names = if (provider == null) Braid.providerNames() else Braid.getInfo(Hints(provider = provider)).map { it.provider }.distinct()
            for (name in names) {
                out.println("$name:")
                out.println("    version: ${Braid.VERSION}")
            }
            return 0
        }
        val infos = Braid.getInfo(Hints(provider = provider))
        for (info in infos) {
            if (parsed.has(VERBOSE)) {
                out.println("---")
                out.println(info.describe())
            } else {
                out.print(shortForm(info))
            }
        }
        return 0
    }

    /** fi_info's default form of one entry. */
    fun shortForm(info: Info): String = buildString {
        append("provider: ").append(info.provider).append('\n')
        append("    fabric: ").append(info.fabricName).append('\n')
        append("    domain: ").append(info.domainName).append('\n')
        append("    version: ").append(Braid.VERSION).append('\n')
        append("    type: FI_EP_").append(info.endpointType).append('\n')
        append("    protocol: ").append(info.endpointAttr.protocol).append('\n')
    }
}
