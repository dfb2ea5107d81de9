package braid.bootstrap

/**
 * PMI-2 as Slurm's `srun --mpi=pmi2` speaks it, and Hydra too (its proxy answers a client that asks for version 2): one
 * PMI-1 line `cmd=init pmi_version=2 pmi_subversion=0`, then [Pmi2Frame]s: `fullinit` (rank, size, appnum),
 * `job-getid`, `kvs-put`, `kvs-fence`, `kvs-get`, `abort`, `finalize`. Over the inherited `PMI_FD` (Slurm has no port
 * mode for tasks) or `PMI_PORT`.
 *
 * PMI-2's `abort` carries a message but no exit code. Under Slurm ([abortFrame]) this rank sends it and exits with the
 * code itself, which the launcher reports for it. Hydra 4.0.2's server does not know PMI-2's `abort` ("Unrecognized PMI
 * command", and the job ends with 255; a bare exit ends it with the 9 of the ranks Hydra then kills), but its proxy
 * takes PMI-1's `cmd=abort exitcode=N` line on the same connection and ends the job with N: that is sent there.
 */
internal class Pmi2Bootstrap(
    private val stream: PmiStream,
    pmiRank: Int,
    jobId: String?,
    private val abortFrame: Boolean,
) : KvBootstrap() {
    override val kind: String
        get() = "pmi2"

    override val rank: Int
    override val size: Int
    override val appnum: Int
    override val universeSize: Int
    // PMI2_MAX_VALLEN 1024, kept as PMI-1's 1023 since Hydra serves both from one store.
    override val maxValueChars: Int = 1023
    override val maxKeyLength: Int = 64
    private val jobid: String

    init {
        try {
            stream.write(PmiLine.of("cmd" to "init", "pmi_version" to 2, "pmi_subversion" to 0).encode())
            val hello = PmiLine.parse(stream.readLine())
            if (hello.command != "response_to_init" || hello.rc != 0 || hello["pmi_version"] != "2") {
                throw BootstrapException("PMI-2 ($stream): the launcher does not speak PMI-2: $hello")
            }
            val init =
                if (jobId != null) {
                    call(
                        Pmi2Frame.of(
                            "cmd" to "fullinit",
                            "pmijobid" to jobId,
                            "pmirank" to pmiRank,
                            "threaded" to "FALSE",
                        )
                    )
                } else {
                    call(Pmi2Frame.of("cmd" to "fullinit", "pmirank" to pmiRank, "threaded" to "FALSE"))
                }
            checkRc(init, "fullinit")
            rank = init.require("rank").toInt()
            size = init.require("size").toInt()
            appnum = init["appnum"]?.toIntOrNull() ?: 0
            universeSize = size
            jobid = call(Pmi2Frame.of("cmd" to "job-getid")).also { checkRc(it, "job-getid") }.require("jobid")
        } catch (t: Throwable) {
            stream.close()
            throw t
        }
    }

    private fun call(request: Pmi2Frame): Pmi2Frame {
        stream.write(request.encode())
        val reply = Pmi2Frame.read(stream)
        if (reply.command != request.command + "-response") {
            throw BootstrapException("PMI-2 ($stream): expected '${request.command}-response', got: $reply")
        }
        return reply
    }

    private fun checkRc(reply: Pmi2Frame, what: String) {
        if (reply.rc != 0) throw BootstrapException("PMI-2: the launcher refused $what: ${reply["errmsg"] ?: reply}")
    }

    override fun putRaw(key: String, value: String) {
        checkRc(call(Pmi2Frame.of("cmd" to "kvs-put", "key" to key, "value" to value)), "kvs-put of key '$key'")
    }

    override fun getRaw(key: String): String? {
        val r = call(Pmi2Frame.of("cmd" to "kvs-get", "jobid" to "", "srcid" to -1, "key" to key))
        return if (r.rc == 0 && r["found"] == "TRUE") r.require("value") else null
    }

    @Synchronized
    override fun fence() {
        checkOpen()
        checkRc(call(Pmi2Frame.of("cmd" to "kvs-fence")), "kvs-fence")
    }

    override fun abort(exitCode: Int, message: String): Nothing {
        AbortNotice.print(rank, exitCode, message)
        if (!abortFrame) {
            // Hydra: PMI-1's abort line, which its proxy accepts on a PMI-2 connection too.
            stream.write(PmiLine.of("cmd" to "abort", "exitcode" to exitCode).encode())
            awaitKill(exitCode)
        }
        // The message travels as a frame value: keep it free of the frame's separators.
        val text = "exit code $exitCode: $message".replace(';', ',').replace('=', ':').take(900)
        stream.write(Pmi2Frame.of("cmd" to "abort", "isworld" to "TRUE", "msg" to text).encode())
        // PMI-2's abort carries no exit code: exiting with it is how the launcher learns it.
        Runtime.getRuntime().halt(exitCode)
        throw IllegalStateException("unreachable")
    }

    override fun finish() {
        try {
            checkRc(call(Pmi2Frame.of("cmd" to "finalize")), "finalize")
        } finally {
            stream.close()
        }
    }
}
