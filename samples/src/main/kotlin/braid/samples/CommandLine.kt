package braid.samples

/**
 * One option a subcommand accepts: a short form (`-I`), a long form (`--api`), or both. An option with a [valueName]
 * takes a value (`-I 100`, `-I100`, `--api raw`, `--api=raw`); one without is a flag (`-c`). Flags may be bundled as
 * getopt allows (`-cl`).
 */
internal class OptionSpec(val short: Char?, val long: String?, val valueName: String?, val help: String) {
    init {
        require(short != null || long != null) { "an option needs a short or a long name" }
    }

    /** The name [ParsedArgs] files this option under. */
    val key: String = long ?: short.toString()

    val takesValue: Boolean
        get() = valueName != null

    /** How usage shows the option: `-I <number>`, `--api <api>`, `-h, --help`. */
    val display: String = buildString {
        if (short != null) append('-').append(short)
        if (short != null && long != null) append(", ")
        if (long != null) append("--").append(long)
        if (valueName != null) append(" <").append(valueName).append('>')
    }
}

/** The result of [parseArgs]: option values by [OptionSpec.key], flags given, and positional arguments. */
internal class ParsedArgs(
    private val values: Map<String, String>,
    private val flags: Set<String>,
    val positionals: List<String>,
) {
    /** The value of [spec], the last one given if it was repeated; null if absent. */
    fun value(spec: OptionSpec): String? = values[spec.key]

    /** Whether the flag [spec] was given. */
    fun has(spec: OptionSpec): Boolean = spec.key in flags
}

/**
 * Parses [args] against [specs], getopt style: options and positional arguments may be mixed, `--` ends the options, a
 * value may be attached (`-I100`, `--api=raw`) or follow as the next argument. Throws [UsageException] for [command]
 * naming the offending option.
 */
internal fun parseArgs(command: String, args: List<String>, specs: List<OptionSpec>): ParsedArgs {
    val byShort = specs.filter { it.short != null }.associateBy { it.short!! }
    val byLong = specs.filter { it.long != null }.associateBy { it.long!! }
    val values = HashMap<String, String>()
    val flags = HashSet<String>()
    val positionals = ArrayList<String>()
    var i = 0

    fun valueFor(spec: OptionSpec, attached: String?, shown: String): String {
        if (attached != null) return attached
        if (i + 1 >= args.size) throw UsageException(command, "option '$shown' needs a value <${spec.valueName}>")
        i++
        return args[i]
    }

    while (i < args.size) {
        val arg = args[i]
        when {
            arg == "--" -> {
                positionals += args.subList(i + 1, args.size)
                i = args.size
                continue
            }
            arg.startsWith("--") -> {
                val name = arg.substring(2).substringBefore('=')
                val attached = if ('=' in arg) arg.substringAfter('=') else null
                val spec = byLong[name] ?: throw UsageException(command, "unknown option '--$name'")
                if (spec.takesValue) {
                    values[spec.key] = valueFor(spec, attached, "--$name")
                } else {
                    if (attached != null) throw UsageException(command, "option '--$name' takes no value (got '$arg')")
                    flags += spec.key
                }
            }
            arg.startsWith("-") && arg.length > 1 -> {
                var j = 1
                while (j < arg.length) {
                    val c = arg[j]
                    val spec = byShort[c] ?: throw UsageException(command, "unknown option '-$c'")
                    if (spec.takesValue) {
                        val rest = arg.substring(j + 1)
                        values[spec.key] = valueFor(spec, rest.ifEmpty { null }, "-$c")
                        break
                    }
                    flags += spec.key
                    j++
                }
            }
            else -> positionals += arg
        }
        i++
    }
    return ParsedArgs(values, flags, positionals)
}

/** The options section of a usage text: one line per spec, aligned like fi_pingpong's `-h`. */
internal fun optionsHelp(specs: List<OptionSpec>): String = buildString {
    val width = maxOf(20, specs.maxOf { it.display.length })
    for (spec in specs) {
        append(' ').append(spec.display.padEnd(width)).append(' ').append(spec.help).append('\n')
    }
}

/** Parses an integer option value in [min]..[max], or throws [UsageException] naming the option. */
internal fun intOption(command: String, option: String, value: String, min: Int, max: Int, what: String): Int {
    val n =
        value.toLongOrNull()
            ?: throw UsageException(command, "option '$option': '$value' is not $what (expected an integer)")
    if (n < min || n > max)
        throw UsageException(command, "option '$option': $value is out of range for $what ($min..$max)")
    return n.toInt()
}
