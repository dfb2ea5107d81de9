package braid.samples

import braid.core.FabricException
import braid.core.Settings
import braid.dsl.EnvironmentLayer
import braid.dsl.LimitsSpec
import braid.dsl.Topology
import braid.dsl.TopologySpec
import braid.dsl.topology
import java.io.PrintStream
import java.nio.file.Files
import java.nio.file.Paths

/**
 * `braid info --config FILE`: the topology a file describes, resolved on this host — the file read, the environment
 * layer applied — with every rail this host can and cannot open, and why. The link `braid pingpong --config FILE` would
 * open is marked `(chosen)`; `-v` adds its Info in full. A link paired with a collective offload provider shows the
 * pairing under it. Fails (status 1) when no link can be opened here.
 */
internal object TopologyInfo {
    /** Prints the topology [file] describes; [environment], when given, stands in for this process's variables. */
    fun run(file: String, verbose: Boolean, out: PrintStream, environment: Map<String, String>? = null) {
        val env = environment?.let { Settings.ofEnvironment(it) } ?: Settings.DEFAULT
        val spec = topology {
            file(file)
            this.environment = environment
        }
        out.println("topology: $file")
        val layer = EnvironmentLayer.variables().filter { env.environmentValue(it) != null }
        if (layer.isNotEmpty()) {
            val shown =
                layer.joinToString(" ") { v ->
                    "$v=" + if (v == EnvironmentLayer.JOB_KEY) "<set>" else env.environmentValue(v)
                }
            out.println("environment: $shown")
        }
        val idle = spec.progress.idle.toPolicy()
        out.println("progress: ${spec.progress.model}, idle $idle")
        out.println("job key: ${jobKey(spec, env)}")
        val surveys = Topology.survey(spec)
        val chosen = surveys.firstOrNull { it.openable }
        for (s in surveys) {
            val link = s.link
            val stripe =
                if (link.policy != braid.dsl.RailPolicy.STRIPE) ""
                else {
                    val p = braid.provider.link.LinkParams.STRIPE_THRESHOLD
                    val text = link.settings[p.provider]?.get(p.name)
                    " (striping threshold ${p.render(text?.let { p.parse(it) } ?: p.default)})"
                }
            out.print("link '${link.name}' (${link.linkString}), policy ${link.policy}$stripe: ")
            out.println(
                if (s.openable) "can open" + (if (s === chosen) " (chosen)" else "") else "cannot open: ${s.problem}"
            )
            s.rails.forEach { out.println("    rail ${it.describe()}") }
            if (link.limits != LimitsSpec()) out.println("    link limits: ${limits(link.limits)}")
            spec.offloadFor(link.name)?.let { out.println("    ${it.describe()}") }
        }
        if (chosen == null) throw FabricException.noData("no link of $file can be opened on this host (see above)")
        val resolved = Topology.resolve(spec, chosen.link.name)
        out.println(
            "opens as: provider ${resolved.info.provider}, domain ${resolved.info.domainName}" +
                ", inject ${resolved.info.txAttr.injectSize}, eager ${resolved.info.endpointAttr.eagerSize}, unexpected limit ${resolved.info.rxAttr.unexpectedLimit}"
        )
        if (verbose) {
            out.println("---")
            out.println(resolved.info.describe())
        }
    }

    private fun limits(l: LimitsSpec): String =
        listOfNotNull(
                l.injectSize?.let { "injectSize $it" },
                l.eagerSize?.let { "eagerSize $it" },
                l.ringCapacity?.let { "ringCapacity $it" },
                l.unexpectedLimit?.let { "unexpectedLimit $it" },
            )
            .joinToString(", ")

    /** Where the key comes from and whether it can be read now; never the key. */
    private fun jobKey(spec: TopologySpec, env: Settings): String {
        val k = spec.jobKey ?: return "the rails' default (BRAID_JOB_KEY, else empty)"
        return when {
            k.value != null -> "a literal value in the topology"
            k.env != null -> {
                val set = env.environmentValue(k.env!!) != null
                "environment variable ${k.env} (${if (set) "set" else "NOT SET: opening will fail"})"
            }
            else -> {
                val f = Paths.get(k.file!!)
                "file ${k.file} (${if (Files.isReadable(f)) "readable" else "NOT READABLE: opening will fail"})"
            }
        }
    }
}
