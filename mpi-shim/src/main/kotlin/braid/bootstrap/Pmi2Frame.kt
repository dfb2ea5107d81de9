package braid.bootstrap

/**
 * One PMI-2 wire message (MPICH `simple2pmi.c`, Slurm's `mpi/pmi2` plugin, Hydra's `pmip_pmi_v2.c`):
 * ```
 *  0      6
 * +------+----------------------------------------------+
 * |LENGTH| cmd=NAME;key=value;key=value;                |
 * +------+----------------------------------------------+
 * LENGTH: the body's length in bytes, 6 ASCII decimal digits padded with spaces
 *         (clients pad on the right, Hydra pads its replies on the left)
 * body:   key=value pairs each ending in ';', cmd first; a ';' inside a value is doubled
 *         (Hydra 4.0.2 does not undo the doubling: Braid's values never contain ';')
 * ```
 *
 * The longest message is 64 KiB (`PMII_MAX_COMMAND_LEN`).
 */
internal class Pmi2Frame(val fields: Map<String, String>) {
    val command: String
        get() = fields["cmd"] ?: ""

    operator fun get(key: String): String? = fields[key]

    fun require(key: String): String =
        fields[key] ?: throw BootstrapException("the launcher's PMI-2 '$command' reply has no '$key': $this")

    /** `rc` as a number; a missing rc is a failure. */
    val rc: Int
        get() = fields["rc"]?.toIntOrNull() ?: -1

    fun encode(): String {
        val body = fields.entries.joinToString("") { "${it.key}=${it.value.replace(";", ";;")};" }
        val length = body.toByteArray(Charsets.UTF_8).size
        if (length > MAX_COMMAND)
            throw BootstrapException("PMI-2 message of $length bytes exceeds the protocol's $MAX_COMMAND")
        return length.toString().padEnd(LENGTH_DIGITS) + body
    }

    override fun toString(): String = fields.entries.joinToString(";", postfix = ";") { "${it.key}=${it.value}" }

    companion object {
        const val LENGTH_DIGITS: Int = 6
        const val MAX_COMMAND: Int = 64 * 1024

        fun of(vararg fields: Pair<String, Any>): Pmi2Frame =
            Pmi2Frame(linkedMapOf(*fields.map { it.first to it.second.toString() }.toTypedArray()))

        /** Reads one frame from [stream]. */
        fun read(stream: PmiStream): Pmi2Frame {
            val header = stream.readExactly(LENGTH_DIGITS)
            val length = header.trim().toIntOrNull()
            if (length == null || length < 0 || length > MAX_COMMAND) {
                throw BootstrapException("PMI-2 ($stream): bad frame length '$header' from the launcher")
            }
            return parse(stream.readExactly(length))
        }

        /** Parses a frame body: `key=value;` pairs, `;;` inside a value standing for `;`. */
        fun parse(body: String): Pmi2Frame {
            val fields = LinkedHashMap<String, String>()
            var i = 0
            while (i < body.length) {
                val eq = body.indexOf('=', i)
                if (eq < 0) break
                val key = body.substring(i, eq)
                val value = StringBuilder()
                var j = eq + 1
                while (j < body.length) {
                    val c = body[j]
                    if (c == ';') {
                        if (j + 1 < body.length && body[j + 1] == ';') {
                            value.append(';')
                            j += 2
                            continue
                        }
                        break
                    }
                    value.append(c)
                    j++
                }
                fields[key] = value.toString()
                i = j + 1
            }
            return Pmi2Frame(fields)
        }
    }
}
