package braid.dsl

import braid.core.Errno

/**
 * The dsl's exception family: a topology that cannot be built ([SpecException]) or a config file that cannot be read
 * ([ConfigFileException]). [code] is an [Errno] value, [problems] every problem found (not just the first), each naming
 * the link or rail, the value and the fix. Failures while opening a valid topology on this host are rail-core's
 * [braid.core.FabricException].
 */
public sealed class TopologyException(
    public val code: Int,
    public val problems: List<SpecProblem>,
    message: String,
    cause: Throwable? = null,
) : RuntimeException(message, cause)

/**
 * One thing wrong with a topology: where ([path] in the spec, as a config file spells it: `links[0].rails[1].weight`;
 * [line] in the file when known), what ([message], naming the link or rail and the value) and the fix ([hint]).
 */
public data class SpecProblem(val path: String, val message: String, val hint: String? = null, val line: Int? = null) {
    override fun toString(): String = buildString {
        append(path.ifEmpty { "(top level)" }).append(": ").append(message)
        if (hint != null) append("; ").append(hint)
    }
}

/** A topology that breaks one or more rules; thrown by `build()` and whenever a [TopologySpec] is made. */
public class SpecException(problems: List<SpecProblem>) :
    TopologyException(
        Errno.EINVAL,
        problems,
        if (problems.size == 1) "invalid topology: ${problems[0]}"
        else "invalid topology, ${problems.size} problems:\n" + problems.joinToString("\n") { "  $it" },
    )

/**
 * A config file that cannot be read into a [TopologySpec]: not JSON/HOCON, an unknown key, a value of the wrong type,
 * or a topology that breaks a rule. The message has one line per problem, in the `file:line: path: what; hint` form
 * compilers use.
 */
public class ConfigFileException(
    /** The file's name as given (or a description for text that came from elsewhere). */
    public val file: String,
    problems: List<SpecProblem>,
    cause: Throwable? = null,
) :
    TopologyException(
        Errno.EINVAL,
        problems,
        "cannot read topology from $file:\n" +
            problems.joinToString("\n") { p -> "  $file${if (p.line != null) ":${p.line}" else ""}: $p" },
        cause,
    )
