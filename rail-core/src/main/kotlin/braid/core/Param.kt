package braid.core

/**
 * Where a setting's value came from, lowest precedence first: a parameter's [DEFAULT], the process [ENVIRONMENT] (its
 * `BRAID_*` variable), a configuration [FILE], or the [API] ([Settings.with]).
 */
public enum class ParamSource {
    DEFAULT,
    ENVIRONMENT,
    FILE,
    API,
}

/**
 * The kind of value a [Param] holds, as `fi_param`'s `FI_PARAM_*` types; [SIZE] is a byte count that may be written
 * `64k`, `4 MiB`.
 */
public enum class ParamType {
    INT,
    LONG,
    SIZE,
    BOOL,
    STRING,
}

/**
 * One rule a parameter's value must obey: returns null when [value] is fine, else a [ParamViolation] saying what is
 * wrong and the fix.
 */
public fun interface ParamRule<T> {
    public fun check(value: T): ParamViolation?
}

/**
 * What is wrong with a value ([problem], `"is not a power of two ≥ 1 KiB"`, written to follow the value) and the [fix]
 * (`"set {name} ≥ 4 KiB"`), where `{name}` stands for however the caller names the setting: the variable
 * `BRAID_TCP_BUFFER_SIZE`, or a file's `ringCapacity`.
 */
public class ParamViolation(public val problem: String, public val fix: String) {
    /** [fix] with `{name}` replaced by [name]. */
    public fun fixFor(name: String): String = fix.replace("{name}", name)

    override fun toString(): String = "$problem; $fix"
}

/**
 * One tunable of a provider (or of Braid itself, [CoreParams]), declared once, in the spirit of libfabric's
 * `fi_param_define`: its [provider] and [name] (together the [key], `tcp.timeout_ms`), the environment variable [env]
 * that sets it, its [type], [default], [unit] and [help] text, and the rule its values obey. [Settings] resolves a
 * value with its [ParamSource]; `braid info -e` and `-v` list every parameter.
 *
 * [secret] parameters (the job key) are never printed: their value shows as `<set>` or `<empty>`.
 */
public class Param<T : Any>
private constructor(
    public val provider: String,
    public val name: String,
    public val env: String,
    public val type: ParamType,
    public val default: T,
    public val unit: String,
    public val help: String,
    public val secret: Boolean,
    private val rule: ParamRule<T>?,
) {
    /** `provider.name`: how files and [Settings.with] name this parameter. */
    public val key: String
        get() = "$provider.$name"

    /**
     * [text] as this parameter's type, or null if it is not one ([ParamType.BOOL]: 1/0, true/false, yes/no, on/off).
     */
    @Suppress("UNCHECKED_CAST")
    public fun parse(text: String): T? {
        val t = text.trim()
        val v: Any? =
            when (type) {
                ParamType.INT -> t.toIntOrNull()
                ParamType.LONG -> t.toLongOrNull()
                ParamType.SIZE -> ByteSize.parse(t)?.takeIf { it <= Int.MAX_VALUE }?.toInt()
                ParamType.BOOL ->
                    when (t.lowercase()) {
                        "1",
                        "yes",
                        "true",
                        "on" -> true
                        "0",
                        "no",
                        "false",
                        "off" -> false
                        else -> null
                    }
                ParamType.STRING -> text
            }
        return v as T?
    }

    /** What is wrong with [value] and the fix, or null when it obeys this parameter's rule. */
    public fun violation(value: T): ParamViolation? = rule?.check(value)

    /** [value] as `braid info` shows it: a size in KiB/MiB where exact, a secret masked. */
    public fun render(value: Any?): String =
        when {
            secret -> if (value == null || value == "") "<empty>" else "<set>"
            type == ParamType.SIZE && value is Int -> ByteSize.render(value)
            type == ParamType.STRING -> "'$value'"
            else -> value.toString()
        }

    override fun toString(): String = "$key ($env)"

    override fun equals(other: Any?): Boolean = other is Param<*> && other.key == key

    override fun hashCode(): Int = key.hashCode()

    public companion object {
        /** A byte count, written as a number or a size (`16k`, `4 MiB`). */
        @JvmStatic
        @JvmOverloads
        public fun size(
            provider: String,
            name: String,
            env: String,
            default: Int,
            help: String,
            rule: ParamRule<Int>? = null,
        ): Param<Int> = Param(provider, name, env, ParamType.SIZE, default, "bytes", help, false, rule)

        @JvmStatic
        @JvmOverloads
        public fun int(
            provider: String,
            name: String,
            env: String,
            default: Int,
            unit: String,
            help: String,
            rule: ParamRule<Int>? = null,
        ): Param<Int> = Param(provider, name, env, ParamType.INT, default, unit, help, false, rule)

        @JvmStatic
        @JvmOverloads
        public fun long(
            provider: String,
            name: String,
            env: String,
            default: Long,
            unit: String,
            help: String,
            rule: ParamRule<Long>? = null,
        ): Param<Long> = Param(provider, name, env, ParamType.LONG, default, unit, help, false, rule)

        @JvmStatic
        public fun bool(provider: String, name: String, env: String, default: Boolean, help: String): Param<Boolean> =
            Param(provider, name, env, ParamType.BOOL, default, "", help, false, null)

        @JvmStatic
        @JvmOverloads
        public fun string(
            provider: String,
            name: String,
            env: String,
            default: String,
            help: String,
            rule: ParamRule<String>? = null,
            secret: Boolean = false,
        ): Param<String> = Param(provider, name, env, ParamType.STRING, default, "", help, secret, rule)

        /**
         * The rule "at least [min] bytes"; [what] names the limit in the problem (`"tcp's smallest connection
         * buffer"`).
         */
        @JvmStatic
        @JvmOverloads
        public fun atLeast(min: Int, what: String = "the minimum"): ParamRule<Int> = ParamRule { v ->
            if (v < min)
                ParamViolation("is below $what ${ByteSize.render(min)}", "set {name} ≥ ${ByteSize.render(min)}")
            else null
        }

        /** The rule "at least [min] [unit]" for longs. */
        @JvmStatic
        public fun atLeast(min: Long, unit: String): ParamRule<Long> = ParamRule { v ->
            if (v < min) ParamViolation("is below $min $unit", "set {name} ≥ $min") else null
        }

        /** The rule "a power of two, at least [min]". */
        @JvmStatic
        public fun powerOfTwo(min: Int): ParamRule<Int> = ParamRule { v ->
            if (v < min || Integer.bitCount(v) != 1) {
                ParamViolation(
                    "is not a power of two ≥ ${ByteSize.render(min)}",
                    "use a power of two such as ${ByteSize.render(Integer.highestOneBit(v.coerceAtLeast(1)).coerceAtLeast(min))}",
                )
            } else {
                null
            }
        }
    }
}

/** Byte counts written as sizes: `4096`, `64k`, `"64 KiB"`, `4m`, `1g` (powers of 1024). */
public object ByteSize {
    private val SIZE = Regex("""\s*(\d{1,19})\s*([kKmMgG]?)(?:[iI]?[bB])?\s*""")

    /** [text] in bytes, or null if it is not a size. */
    @JvmStatic
    public fun parse(text: String): Long? {
        val m = SIZE.matchEntire(text) ?: return null
        val n = m.groupValues[1].toLongOrNull() ?: return null
        val shift =
            when (m.groupValues[2].lowercase()) {
                "k" -> 10
                "m" -> 20
                "g" -> 30
                else -> 0
            }
        if (n > (Long.MAX_VALUE shr shift)) return null
        return n shl shift
    }

    /** 4096 → "4 KiB", 4194304 → "4 MiB"; other values in bytes. */
    @JvmStatic
    public fun render(n: Int): String =
        when {
            n >= (1 shl 20) && n % (1 shl 20) == 0 -> "${n shr 20} MiB"
            n >= 1024 && n % 1024 == 0 -> "${n shr 10} KiB"
            else -> "$n"
        }
}
