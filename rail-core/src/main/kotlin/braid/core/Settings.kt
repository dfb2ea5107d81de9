package braid.core

/**
 * The values of the providers' [Param]s, each resolved with where it came from. Lowest precedence first: the
 * parameter's default, the environment (its `BRAID_*` variable), then values set in a file or through this API
 * ([with]); the last one set wins.
 *
 * Settings travel with the objects they configure: [Hints.settings] go to the providers when [Braid.getInfo] asks them,
 * and every [Info] carries them ([Info.settings]) to the domain and endpoints it opens, so two domains of one process
 * may be tuned differently without touching the process environment:
 * ```
 * val s = Settings.DEFAULT.with(TcpParams.TIMEOUT_MS, 300L).with(CoreParams.JOB_KEY, "secret")
 * val info = Braid.getInfo(Hints.builder().provider("tcp").settings(s).build()).first()
 * ```
 *
 * Values are checked when they are resolved: a value that does not parse or breaks its parameter's rule is a
 * [SettingsException] naming the parameter, the value, where it came from and the fix; [problems] and [check] report
 * every broken one at once. Immutable.
 */
public class Settings
private constructor(
    private val explicit: Map<String, Explicit>,
    /** Null: this process's environment, read when a value is resolved. */
    private val environment: Map<String, String>?,
) {
    /** A value set in a file or through the API: typed ([value]) or as text to parse ([text]). */
    private class Explicit(
        val value: Any?,
        val text: String?,
        val source: ParamSource,
        val origin: String,
        val secret: Boolean,
    ) {
        override fun equals(other: Any?): Boolean =
            other is Explicit &&
                other.value == value &&
                other.text == text &&
                other.source == source &&
                other.origin == origin

        override fun hashCode(): Int = listOf(value, text, source, origin).hashCode()
    }

    /** [param]'s value; throws [SettingsException] when the value it resolves to is malformed or breaks the rule. */
    public operator fun <T : Any> get(param: Param<T>): T = resolve(param).value

    /** [param]'s value with its source; throws [SettingsException] as [get] does. */
    public fun <T : Any> resolve(param: Param<T>): Resolved<T> {
        val r = attempt(param)
        if (r is ParamProblem) throw SettingsException(listOf(r))
        @Suppress("UNCHECKED_CAST")
        return r as Resolved<T>
    }

    /** A [Resolved] or a [ParamProblem]. */
    private fun <T : Any> attempt(param: Param<T>): Any {
        val set = explicit[param.key]
        val (text, source, origin) =
            when {
                set != null -> Triple(set.text, set.source, set.origin)
                else ->
                    when (val v = environmentValue(param.env)) {
                        null -> return Resolved(param, param.default, ParamSource.DEFAULT, "default")
                        else -> Triple(v, ParamSource.ENVIRONMENT, "environment ${param.env}")
                    }
            }
        @Suppress("UNCHECKED_CAST")
        val value: T =
            (if (set != null && set.text == null) set.value as T else param.parse(text!!))
                ?: return ParamProblem(
                    param,
                    text!!,
                    source,
                    origin,
                    ParamViolation(notA(param), "write ${example(param)}, or unset it"),
                )
        param.violation(value)?.let {
            return ParamProblem(param, text ?: value.toString(), source, origin, it)
        }
        return Resolved(param, value, source, origin)
    }

    /** The environment variable [name] as this settings object sees it; blank counts as unset. */
    public fun environmentValue(name: String): String? =
        (if (environment == null) System.getenv(name) else environment[name])?.takeIf { it.isNotBlank() }

    /** These settings with [param] set to [value] through the API (over the environment and files). */
    public fun <T : Any> with(param: Param<T>, value: T): Settings =
        Settings(explicit + (param.key to Explicit(value, null, ParamSource.API, "API", param.secret)), environment)

    /**
     * These settings with [param] set to [text], parsed when resolved: from a file ([ParamSource.FILE], [origin] the
     * file and line, `local.conf:4`) or the API.
     */
    public fun withText(param: Param<*>, text: String, source: ParamSource, origin: String): Settings =
        Settings(explicit + (param.key to Explicit(null, text, source, origin, param.secret)), environment)

    /**
     * These settings reading the variables of [environment] instead of this process's (tests, and processes a launcher
     * describes).
     */
    public fun withEnvironment(environment: Map<String, String>): Settings = Settings(explicit, HashMap(environment))

    /**
     * These settings with every value [over] sets (file or API) in place of this one's. The environment stays this
     * one's unless [over] names one.
     */
    public fun overlay(over: Settings): Settings =
        if (over.explicit.isEmpty() && over.environment == null) this
        else Settings(explicit + over.explicit, over.environment ?: environment)

    /** Whether [param] is set here through a file or the API (not left to the environment or default). */
    public fun isSet(param: Param<*>): Boolean = param.key in explicit

    /** Every parameter of [params] whose value is malformed or breaks its rule; empty when all are fine. */
    public fun problems(params: Iterable<Param<*>>): List<ParamProblem> =
        params.mapNotNull { attempt(it) as? ParamProblem }

    /** This object when every parameter of [params] resolves; else a [SettingsException] listing every problem. */
    public fun check(params: Iterable<Param<*>>): Settings {
        val problems = problems(params)
        if (problems.isNotEmpty()) throw SettingsException(problems)
        return this
    }

    /** Set values by key, secrets masked; never the environment. */
    override fun toString(): String =
        explicit.entries.joinToString(", ", "Settings(", ")") { (k, e) ->
            "$k=${if (e.secret) "<set>" else e.value ?: e.text} (${e.origin})"
        }

    override fun equals(other: Any?): Boolean =
        other is Settings && other.explicit == explicit && other.environment == environment

    override fun hashCode(): Int = explicit.hashCode() * 31 + (environment?.hashCode() ?: 0)

    public companion object {
        /** Nothing set: every value from this process's environment, else its default. */
        @JvmField public val DEFAULT: Settings = Settings(emptyMap(), null)

        /**
         * Nothing set and no environment: every value its default until set through the API. What tests start from, so
         * that they pass whatever `BRAID_*` variables the caller's shell exports, and what a caller uses that passes
         * every value itself.
         */
        @JvmField public val NONE: Settings = Settings(emptyMap(), emptyMap())

        /** Nothing set, the environment [environment] instead of this process's. */
        @JvmStatic
        public fun ofEnvironment(environment: Map<String, String>): Settings = DEFAULT.withEnvironment(environment)

        private fun notA(p: Param<*>): String =
            when (p.type) {
                ParamType.INT,
                ParamType.LONG -> "is not an integer"
                ParamType.SIZE -> "is not an integer or a size"
                ParamType.BOOL -> "must be 0 or 1"
                ParamType.STRING -> "is not a string"
            }

        private fun example(p: Param<*>): String =
            when (p.type) {
                ParamType.INT,
                ParamType.LONG -> "a whole number${if (p.unit.isEmpty()) "" else " of ${p.unit}"}"
                ParamType.SIZE -> "a number of bytes such as 65536, 64k or 4 MiB"
                ParamType.BOOL -> "1 or 0"
                ParamType.STRING -> "a string"
            }
    }
}

/**
 * A parameter's value and where it came from ([source], and [origin]: `default`, `environment BRAID_SHM_RING_SIZE`,
 * `local.conf:4`, `API`).
 */
public class Resolved<T : Any>
internal constructor(
    public val param: Param<T>,
    public val value: T,
    public val source: ParamSource,
    public val origin: String,
) {
    /** The value as `braid info` prints it (sizes in KiB/MiB, secrets masked). */
    public fun render(): String = param.render(value)

    override fun toString(): String = "${param.key} = ${render()} ($origin)"
}

/**
 * A setting that cannot be used: [param], the [text] given, where it came from ([source], [origin]) and what is wrong
 * with the fix ([violation]). [message] says all of it: `environment BRAID_TCP_TIMEOUT_MS='5': tcp.timeout_ms 5 is
 * below 10 ms; set BRAID_TCP_TIMEOUT_MS ≥ 10`.
 */
public class ParamProblem
internal constructor(
    public val param: Param<*>,
    public val text: String,
    public val source: ParamSource,
    public val origin: String,
    public val violation: ParamViolation,
) {
    private val shown: String
        get() = if (param.secret) "<set>" else text

    public val message: String
        get() =
            when (source) {
                ParamSource.ENVIRONMENT ->
                    "environment ${param.env}='$shown': ${param.key} ${violation.problem}; ${violation.fixFor(param.env)}"
                ParamSource.FILE ->
                    "$origin: ${param.key} '$shown' ${violation.problem}; ${violation.fixFor(param.key)}"
                else -> "setting ${param.key} = '$shown' ($origin) ${violation.problem}; ${violation.fixFor(param.key)}"
            }

    override fun toString(): String = message
}

/** Settings that cannot be used: every [problems] entry names the parameter, the value, its source and the fix. */
public class SettingsException(public val problems: List<ParamProblem>) :
    FabricException(
        Errno.EINVAL,
        if (problems.size == 1) problems[0].message
        else "${problems.size} settings cannot be used:\n" + problems.joinToString("\n") { "  ${it.message}" },
    )
