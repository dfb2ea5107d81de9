package braid.dsl

import com.typesafe.config.ConfigList
import com.typesafe.config.ConfigObject
import com.typesafe.config.ConfigValue
import com.typesafe.config.ConfigValueType
import kotlinx.serialization.ExperimentalSerializationApi
import kotlinx.serialization.descriptors.PolymorphicKind
import kotlinx.serialization.descriptors.PrimitiveKind
import kotlinx.serialization.descriptors.SerialDescriptor
import kotlinx.serialization.descriptors.SerialKind
import kotlinx.serialization.descriptors.StructureKind

/**
 * Checks a parsed config tree against the spec's serial descriptor before it is decoded, so that every file error — in
 * JSON or HOCON alike — names its path and line: unknown keys (with a did-you-mean), missing keys, values of the wrong
 * type, integers out of range. On the way it normalises what files may write more freely than the decoders read: a link
 * given as a string (`"shm+tcp:lo"`), a byte count given as a size (`"64 KiB"`), an enum constant in any case.
 *
 * The result is a plain tree (maps, lists, strings, numbers, booleans, nulls) that both decoders take, and [lines]: the
 * file line of every path seen.
 */
@OptIn(ExperimentalSerializationApi::class)
internal class ConfigTree(private val linkDescriptor: SerialDescriptor) {
    val problems = ArrayList<SpecProblem>()
    val lines = HashMap<String, Int>()

    fun check(root: ConfigValue, descriptor: SerialDescriptor): Any? = value(root, descriptor, "", byteCount = false)

    /** The line of [path], or of its nearest ancestor that the file spells. */
    fun lineOf(path: String): Int? {
        var p = path
        while (true) {
            lines[p]?.let {
                return it
            }
            if (p.isEmpty()) return null
            p = parent(p)
        }
    }

    private fun problem(path: String, v: ConfigValue?, message: String, hint: String?): Any? {
        problems += SpecProblem(path, message, hint, v?.origin()?.lineNumber()?.takeIf { it > 0 })
        return null
    }

    private fun value(v: ConfigValue, d: SerialDescriptor, path: String, byteCount: Boolean): Any? {
        v.origin()?.lineNumber()?.takeIf { it > 0 }?.let { lines[path] = it }
        if (v.valueType() == ConfigValueType.NULL) {
            return if (d.isNullable) null
            else problem(path, v, "${at(path)} is null", "give it a value (${expected(d)}) or leave the key out")
        }
        return when (val kind = d.kind) {
            StructureKind.CLASS ->
                if (d.serialName == linkDescriptor.serialName && v.valueType() == ConfigValueType.STRING) {
                    linkString(v, path)
                } else {
                    obj(v, d, path)
                }
            StructureKind.LIST -> list(v, d, path)
            SerialKind.ENUM -> enumConstant(v, d, path)
            is PrimitiveKind -> primitive(v, kind, path, byteCount)
            StructureKind.MAP -> map(v, d, path)
            is PolymorphicKind,
            StructureKind.OBJECT,
            SerialKind.CONTEXTUAL ->
                problem(path, v, "${at(path)}: this version cannot read ${d.serialName} from a file", null)
        }
    }

    private fun obj(v: ConfigValue, d: SerialDescriptor, path: String): Any? {
        if (v !is ConfigObject) return wrongType(v, path, "an object { … }")
        val names = (0 until d.elementsCount).map { d.getElementName(it) }
        val out = LinkedHashMap<String, Any?>()
        for (key in v.keys.sortedWith(compareBy({ v[it]?.origin()?.lineNumber() ?: 0 }, { it }))) {
            val child = v[key]!!
            val i = d.getElementIndex(key)
            val childPath = if (path.isEmpty()) key else "$path.$key"
            if (i < 0) {
                problem(childPath, child, "unknown key '$key'", suggestion(key, names, "keys here"))
                continue
            }
            val byteCount = d.getElementAnnotations(i).any { it is ByteCount }
            out[key] = value(child, d.getElementDescriptor(i), childPath, byteCount)
        }
        for (i in 0 until d.elementsCount) {
            if (!d.isElementOptional(i) && d.getElementName(i) !in v.keys) {
                problem(
                    if (path.isEmpty()) d.getElementName(i) else "$path.${d.getElementName(i)}",
                    v,
                    "missing key '${d.getElementName(i)}'",
                    "add it (${expected(d.getElementDescriptor(i))})",
                )
            }
        }
        return out
    }

    /** A map with string keys (the spec's `settings`): scalar values are read as their text. */
    private fun map(v: ConfigValue, d: SerialDescriptor, path: String): Any? {
        if (v !is ConfigObject) return wrongType(v, path, "an object { … }")
        val element = d.getElementDescriptor(1)
        val out = LinkedHashMap<String, Any?>()
        for ((key, child) in v) {
            val childPath = if (path.isEmpty()) key else "$path.$key"
            val scalar =
                child.valueType() in setOf(ConfigValueType.NUMBER, ConfigValueType.BOOLEAN, ConfigValueType.STRING)
            out[key] =
                if (element.kind == PrimitiveKind.STRING && scalar) {
                    child.origin()?.lineNumber()?.takeIf { it > 0 }?.let { lines[childPath] = it }
                    child.unwrapped().toString()
                } else {
                    value(child, element, childPath, byteCount = false)
                }
        }
        return out
    }

    private fun list(v: ConfigValue, d: SerialDescriptor, path: String): Any? {
        if (v !is ConfigList) return wrongType(v, path, "a list [ … ]")
        val element = d.getElementDescriptor(0)
        return v.mapIndexed { i, e -> value(e, element, "$path[$i]", byteCount = false) }
    }

    /** A link written as a link string: expanded to its structured form. */
    private fun linkString(v: ConfigValue, path: String): Any? {
        val link =
            try {
                LinkStrings.parseOne(v.unwrapped() as String, path)
            } catch (e: SpecException) {
                e.problems.forEach { problem(path, v, it.message, it.hint) }
                return null
            }
        return mapOf(
            "name" to link.name,
            "rails" to link.rails.map { r -> mapOf("name" to r.name, "provider" to r.provider, "domain" to r.domain) },
        )
    }

    private fun enumConstant(v: ConfigValue, d: SerialDescriptor, path: String): Any? {
        val names = (0 until d.elementsCount).map { d.getElementName(it) }
        if (v.valueType() != ConfigValueType.STRING) return wrongType(v, path, "one of ${names.joinToString()}")
        val s = v.unwrapped() as String
        return names.firstOrNull { it.equals(s, ignoreCase = true) }
            ?: problem(
                path,
                v,
                "${at(path)}: '$s' is not one of ${names.joinToString()}",
                suggestion(s, names, "values"),
            )
    }

    private fun primitive(v: ConfigValue, kind: PrimitiveKind, path: String, byteCount: Boolean): Any? {
        val type = v.valueType()
        val raw = v.unwrapped()
        return when (kind) {
            PrimitiveKind.STRING ->
                if (type == ConfigValueType.STRING) raw else wrongType(v, path, "a string", "quote it: \"$raw\"")
            PrimitiveKind.BOOLEAN -> if (type == ConfigValueType.BOOLEAN) raw else wrongType(v, path, "true or false")
            PrimitiveKind.DOUBLE,
            PrimitiveKind.FLOAT ->
                if (type == ConfigValueType.NUMBER) (raw as Number).toDouble() else wrongType(v, path, "a number")
            PrimitiveKind.INT,
            PrimitiveKind.LONG,
            PrimitiveKind.SHORT,
            PrimitiveKind.BYTE -> {
                val max = if (kind == PrimitiveKind.LONG) Long.MAX_VALUE else Int.MAX_VALUE.toLong()
                val min = if (kind == PrimitiveKind.LONG) Long.MIN_VALUE else Int.MIN_VALUE.toLong()
                val n: Long? =
                    when {
                        type == ConfigValueType.NUMBER -> integral(raw as Number)
                        type == ConfigValueType.STRING && byteCount -> braid.core.ByteSize.parse(raw as String)
                        else ->
                            return wrongType(
                                v,
                                path,
                                if (byteCount) "a number of bytes (4096, or \"4 KiB\")" else "an integer",
                            )
                    }
                when {
                    n == null ->
                        problem(
                            path,
                            v,
                            "${at(path)}: $raw is not ${if (byteCount) "a number of bytes" else "an integer"}",
                            if (byteCount)
                                "write an integer, or a size such as \"64 KiB\" or \"4m\" (units are powers of 1024)"
                            else "write an integer",
                        )
                    n !in min..max -> problem(path, v, "${at(path)}: $raw is out of range", "use a value in $min..$max")
                    kind == PrimitiveKind.LONG -> n
                    else -> n.toInt()
                }
            }
            PrimitiveKind.CHAR -> wrongType(v, path, "a character")
        }
    }

    private fun integral(n: Number): Long? =
        when (n) {
            is Int,
            is Long,
            is Short,
            is Byte -> n.toLong()
            else -> n.toDouble().takeIf { it == Math.rint(it) && kotlin.math.abs(it) < 9.2e18 }?.toLong()
        }

    private fun wrongType(v: ConfigValue, path: String, expected: String, hint: String? = null): Any? {
        val found =
            when (v.valueType()) {
                ConfigValueType.OBJECT -> "an object"
                ConfigValueType.LIST -> "a list"
                ConfigValueType.STRING -> "the string \"${v.unwrapped()}\""
                else -> "${v.valueType().name.lowercase()} ${v.unwrapped()}"
            }
        return problem(path, v, "${at(path)}: expected $expected, found $found", hint)
    }

    private fun expected(d: SerialDescriptor): String =
        when (d.kind) {
            StructureKind.CLASS -> "an object"
            StructureKind.LIST -> "a list"
            SerialKind.ENUM -> "one of ${(0 until d.elementsCount).joinToString { d.getElementName(it) }}"
            PrimitiveKind.STRING -> "a string"
            PrimitiveKind.BOOLEAN -> "true or false"
            else -> "a number"
        }

    private fun at(path: String) = if (path.isEmpty()) "the file" else "'${path.substringAfterLast('.')}'"

    internal companion object {
        /** Words an operator may reach for, and the key that means it. */
        private val SYNONYMS =
            mapOf(
                "interface" to "domain",
                "iface" to "domain",
                "nic" to "domain",
                "device" to "domain",
                "key" to "jobKey",
                "job_key" to "jobKey",
                "secret" to "jobKey",
                "prov" to "provider",
                "type" to "provider",
                "inject" to "injectSize",
                "eager" to "eagerSize",
                "ring" to "ringCapacity",
                "ringSize" to "ringCapacity",
                "bufferSize" to "ringCapacity",
                "unexpected" to "unexpectedLimit",
                "link" to "links",
                "rail" to "rails",
                "idleStrategy" to "idle",
            )

        /** "did you mean 'x'?" for the closest of [names], or the list of keys allowed here. */
        fun suggestion(key: String, names: List<String>, what: String): String {
            val synonym =
                SYNONYMS[key]?.takeIf { it in names }
                    ?: SYNONYMS.entries
                        .firstOrNull { it.key.equals(key, ignoreCase = true) && it.value in names }
                        ?.value
            val best =
                synonym
                    ?: names
                        .minByOrNull { distance(key.lowercase(), it.lowercase()) }
                        ?.takeIf { distance(key.lowercase(), it.lowercase()) <= maxOf(2, it.length / 3) }
            val allowed = "$what: ${names.joinToString()}"
            return if (best != null) "did you mean '$best'? ($allowed)" else allowed
        }

        /** Levenshtein distance. */
        fun distance(a: String, b: String): Int {
            var prev = IntArray(b.length + 1) { it }
            for (i in 1..a.length) {
                val cur = IntArray(b.length + 1)
                cur[0] = i
                for (j in 1..b.length) {
                    cur[j] = minOf(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + if (a[i - 1] == b[j - 1]) 0 else 1)
                }
                prev = cur
            }
            return prev[b.length]
        }

        /** `links[0].rails[1]` → `links[0]`; `links[0]` → `links`; `links` → "". */
        fun parent(path: String): String {
            val cut = maxOf(path.lastIndexOf('.'), path.lastIndexOf('['))
            return if (cut < 0) "" else path.substring(0, cut)
        }
    }
}
