package braid.bootstrap

/**
 * One PMI-1 wire message: a line of space-separated `key=value` pairs, `cmd=` first, ending in `\n` (MPICH's
 * `simple_pmi.c`; Hydra's `pmip_pmi_v1.c` answers in the same form):
 * ```
 * > cmd=put kvsname=kvs_1 key=addr@0 value=AAECAw
 * < cmd=put_result rc=0 msg=success
 * ```
 *
 * Keys and values carry no spaces and no `=` (values Braid puts are base64url, see [KvCodec]). The client in
 * [Pmi1Bootstrap] and the server of `braid run` in [PmiServer] both use this.
 */
internal class PmiLine(val fields: Map<String, String>) {
    /** The command (`cmd=` or, for multi-line spawn, `mcmd=`); empty if the line had none. */
    val command: String
        get() = fields["cmd"] ?: fields["mcmd"] ?: ""

    operator fun get(key: String): String? = fields[key]

    /** The field [key], or a [BootstrapException] saying which reply lacked it. */
    fun require(key: String): String =
        fields[key] ?: throw BootstrapException("the launcher's '$command' reply has no '$key': ${encode().trim()}")

    /** `rc` as a number; 0 when absent (barrier_out, finalize_ack carry none). */
    val rc: Int
        get() = fields["rc"]?.toIntOrNull() ?: 0

    fun encode(): String = fields.entries.joinToString(" ", postfix = "\n") { "${it.key}=${it.value}" }

    override fun toString(): String = encode().trim()

    companion object {
        fun of(vararg fields: Pair<String, Any>): PmiLine =
            PmiLine(linkedMapOf(*fields.map { it.first to it.second.toString() }.toTypedArray()))

        /** Parses one line (without its `\n`); a token without `=` becomes a key with an empty value. */
        fun parse(line: String): PmiLine {
            val fields = LinkedHashMap<String, String>()
            for (token in line.trim().split(' ')) {
                if (token.isEmpty()) continue
                val eq = token.indexOf('=')
                if (eq < 0) fields[token] = "" else fields[token.substring(0, eq)] = token.substring(eq + 1)
            }
            return PmiLine(fields)
        }
    }
}
