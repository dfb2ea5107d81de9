package braid.bootstrap

/**
 * PMI-1 as MPICH's Hydra (`mpiexec.mpich`) and Slurm's pmi2 plugin serve it, and as `braid run` serves it: a line
 * protocol ([PmiLine]) over the inherited socket `PMI_FD` or a TCP connection to `PMI_PORT` (Hydra's `-pmi-port`, and
 * `braid run`).
 *
 * In port mode the launcher first learns who is calling (`cmd=initack pmiid=ID`) and answers with the rank and size; in
 * descriptor mode they come from `PMI_RANK`/`PMI_SIZE`. Then: `init` (version 1.1), `get_maxes` (the value limit
 * [KvCodec] splits under), `get_appnum`, `get_universe_size`, `get_my_kvsname`; `put`/`get` on that key space,
 * `barrier_in`/`barrier_out` for [fence], `abort`, `finalize`.
 */
internal class Pmi1Bootstrap(
    private val stream: PmiStream,
    rank: Int?,
    size: Int?,
    pmiId: Int?,
    override val kind: String = "pmi1",
) : KvBootstrap() {
    override val rank: Int
    override val size: Int
    override val appnum: Int
    override val universeSize: Int
    override val maxValueChars: Int
    override val maxKeyLength: Int
    private val kvsname: String

    init {
        try {
            var r = rank
            var s = size
            if (pmiId != null) {
                stream.write(PmiLine.of("cmd" to "initack", "pmiid" to pmiId).encode())
                expect(reply(), "initack")
                // The launcher then sets size, rank and debug, one line each.
                repeat(3) {
                    val set = reply()
                    expect(set, "set")
                    set["size"]?.let { s = it.toInt() }
                    set["rank"]?.let { r = it.toInt() }
                }
            }
            this.rank = r ?: throw BootstrapException("PMI-1: the launcher gave no rank (PMI_RANK unset)")
            this.size = s ?: throw BootstrapException("PMI-1: the launcher gave no size (PMI_SIZE unset)")
            if (this.size < 1 || this.rank !in 0 until this.size) {
                throw BootstrapException("PMI-1: rank ${this.rank} of size ${this.size} is not a valid place in a job")
            }
            // Slurm reads the init line with one read of 64 bytes: send it in one write.
            val init = call(PmiLine.of("cmd" to "init", "pmi_version" to 1, "pmi_subversion" to 1), "response_to_init")
            if (init.rc != 0) throw BootstrapException("PMI-1: the launcher refused init: $init")
            val maxes = call(PmiLine.of("cmd" to "get_maxes"), "maxes")
            // Hydra keeps 1023 of a 1024-byte value and drops the rest without an error.
            maxValueChars = maxes.require("vallen_max").toInt() - 1
            maxKeyLength = maxes.require("keylen_max").toInt()
            appnum = call(PmiLine.of("cmd" to "get_appnum"), "appnum")["appnum"]?.toIntOrNull() ?: 0
            val universe = call(PmiLine.of("cmd" to "get_universe_size"), "universe_size")["size"]?.toIntOrNull() ?: -1
            universeSize = if (universe > 0) universe else this.size
            kvsname = call(PmiLine.of("cmd" to "get_my_kvsname"), "my_kvsname").require("kvsname")
        } catch (t: Throwable) {
            stream.close()
            throw t
        }
    }

    private fun reply(): PmiLine = PmiLine.parse(stream.readLine())

    private fun expect(line: PmiLine, command: String) {
        if (line.command != command) {
            throw BootstrapException("PMI-1 ($stream): expected '$command' from the launcher, got: $line")
        }
    }

    private fun call(request: PmiLine, replyCommand: String): PmiLine {
        stream.write(request.encode())
        return reply().also { expect(it, replyCommand) }
    }

    override fun putRaw(key: String, value: String) {
        val r = call(PmiLine.of("cmd" to "put", "kvsname" to kvsname, "key" to key, "value" to value), "put_result")
        if (r.rc != 0)
            throw BootstrapException("PMI-1: the launcher refused put of key '$key' (${value.length} chars): $r")
    }

    override fun getRaw(key: String): String? {
        val r = call(PmiLine.of("cmd" to "get", "kvsname" to kvsname, "key" to key), "get_result")
        return if (r.rc == 0) r.require("value") else null
    }

    @Synchronized
    override fun fence() {
        checkOpen()
        stream.write(PmiLine.of("cmd" to "barrier_in").encode())
        expect(reply(), "barrier_out")
    }

    override fun abort(exitCode: Int, message: String): Nothing {
        AbortNotice.print(rank, exitCode, message)
        stream.write(PmiLine.of("cmd" to "abort", "exitcode" to exitCode).encode())
        awaitKill(exitCode)
    }

    override fun finish() {
        try {
            call(PmiLine.of("cmd" to "finalize"), "finalize_ack")
        } finally {
            stream.close()
        }
    }
}
