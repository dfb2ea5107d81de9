package braid.dsl

import braid.core.Braid
import com.typesafe.config.Config
import com.typesafe.config.ConfigException
import com.typesafe.config.ConfigFactory
import com.typesafe.config.ConfigParseOptions
import com.typesafe.config.ConfigRenderOptions
import com.typesafe.config.ConfigSyntax
import com.typesafe.config.ConfigValueFactory
import java.io.IOException
import java.nio.file.Files
import java.nio.file.Path
import kotlinx.serialization.ExperimentalSerializationApi
import kotlinx.serialization.SerializationException
import kotlinx.serialization.hocon.Hocon
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive

/**
 * Topology config files: JSON (`.json`) and HOCON (`.conf`, `.hocon`), both read into and written from the same
 * [TopologySpec] through kotlinx.serialization.
 *
 * The format is the spec's fields (see `samples/config/` for examples):
 * ```
 * links = [
 *   "shm+tcp:lo"                       # a link string, or a link rail by rail:
 *   { name = fast, rails = [ { name = shm, provider = shm },
 *                            { name = tcp1, provider = tcp, domain = eth0, weight = 2, limits { injectSize = "4 KiB" } },
 *                            { name = cxi0, provider = cxi, optional = true } ],
 *     limits { unexpectedLimit = 8192 } }
 * ]
 * progress { model = AUTO, idle { kind = BACKOFF } }
 * jobKey { env = MY_JOB_KEY }          # or { file = "/run/braid/key" }, or { value = "…" }
 * ```
 *
 * Byte counts may be written as sizes (`"64 KiB"`, `"4m"`; powers of 1024), enum constants in any case. A file that
 * cannot be read is a [ConfigFileException] listing every problem with its line, its path (`links[0].rails[1].weight`)
 * and a hint; unknown keys are problems, with a did-you-mean. HOCON substitutions may read the environment (`value =
 * ${?MY_KEY}`).
 */
@OptIn(ExperimentalSerializationApi::class)
public object TopologyFiles {
    /** A file format; [of] picks one by file name. */
    public enum class Format(@get:JvmSynthetic internal val syntax: ConfigSyntax) {
        JSON(ConfigSyntax.JSON),
        HOCON(ConfigSyntax.CONF);

        public companion object {
            /** JSON for `.json`, HOCON for `.conf` and `.hocon`; else a [ConfigFileException]. */
            @JvmStatic
            @Throws(ConfigFileException::class)
            public fun of(path: Path): Format {
                val name = path.fileName?.toString().orEmpty().lowercase()
                return when {
                    name.endsWith(".json") -> JSON
                    name.endsWith(".conf") || name.endsWith(".hocon") -> HOCON
                    else ->
                        throw ConfigFileException(
                            path.toString(),
                            listOf(
                                SpecProblem(
                                    "",
                                    "unknown file type '${path.fileName}'",
                                    "name it *.json (JSON) or *.conf / *.hocon (HOCON)",
                                )
                            ),
                        )
                }
            }
        }
    }

    /** Nesting deeper than this is refused before parsing (a topology nests five levels). */
    private const val MAX_DEPTH = 32

    private val json = Json {
        prettyPrint = true
        encodeDefaults = false
        explicitNulls = false
    }
    private val hocon = Hocon { encodeDefaults = false }

    /**
     * Reads [path], its format chosen by its name ([Format.of]).
     *
     * @throws ConfigFileException (unchecked) when the file cannot be read, is not JSON/HOCON, has an unknown key or a
     *   wrong value, or describes a topology that breaks a rule: its message lists every problem as `file:line: path:
     *   what; hint`, and [ConfigFileException.problems] holds them one by one. Java callers catch it by name: `catch
     *   (ConfigFileException e)`.
     */
    @JvmStatic
    @Throws(ConfigFileException::class)
    public fun read(path: Path): TopologySpec = read(path, Format.of(path))

    /** Reads [path] in [format]; fails as [read] does, with a [ConfigFileException]. */
    @JvmStatic
    @Throws(ConfigFileException::class)
    public fun read(path: Path, format: Format): TopologySpec {
        val text =
            try {
                Files.readString(path)
            } catch (e: IOException) {
                throw ConfigFileException(
                    path.toString(),
                    listOf(
                        SpecProblem(
                            "",
                            "cannot read the file: ${e.javaClass.simpleName}: ${e.message}",
                            "check the path and its permissions",
                        )
                    ),
                    e,
                )
            }
        return parse(text, format, path.toString())
    }

    /** Reads [text] in [format]; [origin] names it in errors (a file name, `<stdin>`). */
    @JvmStatic
    @JvmOverloads
    @Throws(ConfigFileException::class)
    public fun parse(text: String, format: Format, origin: String = "<text>"): TopologySpec {
        fun fail(problems: List<SpecProblem>, cause: Throwable? = null): Nothing =
            throw ConfigFileException(origin, problems, cause)
        if (text.isBlank()) fail(listOf(SpecProblem("", "the file is empty", "write {} for the default topology")))
        depthProblem(text)?.let { fail(listOf(it)) }
        val config =
            try {
                ConfigFactory.parseString(
                        text,
                        ConfigParseOptions.defaults()
                            .setSyntax(format.syntax)
                            .setOriginDescription(origin)
                            .setAllowMissing(false),
                    )
                    .resolve()
            } catch (e: ConfigException) {
                fail(
                    listOf(
                        SpecProblem(
                            "",
                            syntaxMessage(e, origin),
                            if (format == Format.JSON) "the file must be JSON: one object { … }"
                            else "the file must be HOCON (or JSON)",
                            lineOf(e),
                        )
                    ),
                    e,
                )
            }
        val tree = ConfigTree(LinkSpec.serializer().descriptor)
        val plain = tree.check(config.root(), TopologySpec.serializer().descriptor)
        // One round: type and key problems, and rails naming a provider this build lacks, together.
        val providers = providerProblems(plain, tree)
        if (tree.problems.isNotEmpty()) fail(tree.problems + providers)
        val spec =
            try {
                when (format) {
                    Format.JSON -> json.decodeFromJsonElement(TopologySpec.serializer(), toJson(plain))
                    Format.HOCON -> hocon.decodeFromConfig(TopologySpec.serializer(), toConfig(plain))
                }
            } catch (e: SpecException) {
                fail(
                    (e.problems.map { it.copy(line = tree.lineOf(it.path)) } + providers).sortedBy {
                        it.line ?: Int.MAX_VALUE
                    },
                    e,
                )
            } catch (e: SerializationException) {
                fail(
                    listOf(
                        SpecProblem(
                            "",
                            "cannot decode the topology: ${e.message}",
                            "check the file against samples/config/",
                        )
                    ),
                    e,
                )
            } catch (e: ConfigException) {
                fail(
                    listOf(
                        SpecProblem(
                            "",
                            "cannot decode the topology: ${e.message}",
                            "check the file against samples/config/",
                            lineOf(e),
                        )
                    ),
                    e,
                )
            }
        if (providers.isNotEmpty()) fail(providers)
        return spec
    }

    /**
     * Providers of libfabric (`fi_provider(7)`) that a topology may name for hosts or builds that have them: a required
     * rail naming one this build lacks only makes its link unopenable here (links are alternatives), so it is not a
     * misspelling.
     */
    private val LIBFABRIC_PROVIDERS =
        setOf(
            "cxi",
            "efa",
            "lnx",
            "lpp",
            "net",
            "opx",
            "psm2",
            "psm3",
            "rxd",
            "rxm",
            "shm",
            "sockets",
            "tcp",
            "ucx",
            "udp",
            "usnic",
            "verbs",
        )

    /**
     * A required rail whose provider neither this build nor libfabric knows (`provider = tpc`): a problem at its path
     * and line with a did-you-mean, as a misspelt key gets. An optional rail may name any provider (it is left out
     * where absent).
     */
    private fun providerProblems(plain: Any?, tree: ConfigTree): List<SpecProblem> {
        val known = Braid.providerNames().filter { it != LINK }
        val out = ArrayList<SpecProblem>()
        val links = (plain as? Map<*, *>)?.get("links") as? List<*> ?: return out
        links.forEachIndexed { i, link ->
            val rails = (link as? Map<*, *>)?.get("rails") as? List<*> ?: return@forEachIndexed
            rails.forEachIndexed { j, rail ->
                val r = rail as? Map<*, *> ?: return@forEachIndexed
                val provider =
                    (if (r.containsKey("provider")) r["provider"] else r["name"]) as? String ?: return@forEachIndexed
                val path = "links[$i].rails[$j].provider"
                if (provider in known || provider in LIBFABRIC_PROVIDERS || provider == LINK || r["optional"] == true)
                    return@forEachIndexed
                if (tree.problems.any { it.path == path }) return@forEachIndexed
                out +=
                    SpecProblem(
                        path,
                        "rail '${r["name"]}': no provider '$provider' (neither this build nor libfabric has one of that name)",
                        ConfigTree.suggestion(provider, known, "providers") + "; or mark the rail optional = true",
                        tree.lineOf(path),
                    )
            }
        }
        return out
    }

    /** [spec] as text in [format]. Links that are plain link strings are written as strings. */
    @JvmStatic
    public fun encode(spec: TopologySpec, format: Format): String =
        when (format) {
            Format.JSON ->
                json
                    .encodeToString(TopologySpec.serializer(), spec)
                    .let { compactJson(json.parseToJsonElement(it)) }
                    .let { json.encodeToString(JsonElement.serializer(), it) } + "\n"
            Format.HOCON ->
                compactHocon(hocon.encodeToConfig(TopologySpec.serializer(), spec), spec)
                    .root()
                    .render(
                        ConfigRenderOptions.defaults()
                            .setOriginComments(false)
                            .setComments(false)
                            .setJson(false)
                            .setFormatted(true)
                    )
        }

    /**
     * Writes [spec] to [path] in the format its name says; a [ConfigFileException] names a path that cannot be written.
     */
    @JvmStatic
    @Throws(ConfigFileException::class)
    public fun write(spec: TopologySpec, path: Path) {
        val text = encode(spec, Format.of(path))
        try {
            Files.writeString(path, text)
        } catch (e: IOException) {
            throw ConfigFileException(
                path.toString(),
                listOf(
                    SpecProblem(
                        "",
                        "cannot write the file: ${e.javaClass.simpleName}: ${e.message}",
                        "check the path and its permissions",
                    )
                ),
                e,
            )
        }
    }

    // ## Writing ##

    /** Whether [link] is exactly what its link string parses to, so it can be written as that string. */
    private fun isPlain(link: LinkSpec): Boolean = runCatching { LinkStrings.parseOne(link.name) }.getOrNull() == link

    private fun compactJson(root: JsonElement): JsonElement {
        val obj = root as? JsonObject ?: return root
        val links = obj["links"] as? JsonArray ?: return root
        val compact =
            links.map { l ->
                val decoded = runCatching { json.decodeFromJsonElement(LinkSpec.serializer(), l) }.getOrNull()
                if (decoded != null && isPlain(decoded)) JsonPrimitive(decoded.name) else l
            }
        return JsonObject(obj + ("links" to JsonArray(compact)))
    }

    private fun compactHocon(config: Config, spec: TopologySpec): Config {
        if (!config.hasPath("links")) return config
        val list = config.getList("links")
        val compact =
            list.mapIndexed { i, v ->
                if (isPlain(spec.links[i])) ConfigValueFactory.fromAnyRef(spec.links[i].name) else v
            }
        return config.withValue("links", ConfigValueFactory.fromIterable(compact))
    }

    // ## Reading ##

    private fun toJson(v: Any?): JsonElement =
        when (v) {
            null -> JsonNull
            is Map<*, *> -> JsonObject(v.entries.associate { (k, e) -> k as String to toJson(e) })
            is List<*> -> JsonArray(v.map { toJson(it) })
            is String -> JsonPrimitive(v)
            is Boolean -> JsonPrimitive(v)
            is Number -> JsonPrimitive(v)
            else -> error("unexpected ${v.javaClass}")
        }

    @Suppress("UNCHECKED_CAST")
    private fun toConfig(v: Any?): Config = ConfigValueFactory.fromMap(v as Map<String, *>).toConfig()

    private fun lineOf(e: ConfigException): Int? = e.origin()?.lineNumber()?.takeIf { it > 0 }

    /** Lightbend's message without the origin prefix it starts with. */
    private fun syntaxMessage(e: ConfigException, origin: String): String {
        val m = e.message ?: e.javaClass.simpleName
        val line = lineOf(e)
        return listOfNotNull(line?.let { "$origin: $it: " }, "$origin: ").fold(m) { acc, p -> acc.removePrefix(p) }
    }

    /** A problem if [text] nests brackets deeper than [MAX_DEPTH] (outside strings and comments). */
    private fun depthProblem(text: String): SpecProblem? {
        var depth = 0
        var line = 1
        var i = 0
        while (i < text.length) {
            when (val c = text[i]) {
                '\n' -> line++
                '"' -> {
                    i++
                    while (i < text.length && text[i] != '"' && text[i] != '\n') {
                        if (text[i] == '\\') i++
                        i++
                    }
                }
                '#' -> while (i + 1 < text.length && text[i + 1] != '\n') i++
                '/' ->
                    if (i + 1 < text.length && text[i + 1] == '/')
                        while (i + 1 < text.length && text[i + 1] != '\n') i++
                '{',
                '[' ->
                    if (++depth > MAX_DEPTH)
                        return SpecProblem(
                            "",
                            "nesting deeper than $MAX_DEPTH levels at '$c'",
                            "a topology nests a few levels; check the brackets",
                            line,
                        )
                '}',
                ']' -> depth--
            }
            i++
        }
        return null
    }
}
