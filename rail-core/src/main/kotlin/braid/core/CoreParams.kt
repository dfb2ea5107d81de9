package braid.core

/**
 * Braid's own parameters, shared by every provider (the providers declare theirs beside them:
 * `ShmParams`, `TcpParams`, `LinkParams`). `braid info -e` lists them all.
 */
public object CoreParams {
    /**
     * The job's shared secret (any string). Rails that authenticate their peers (tcp) prove on
     * every connection that both hold the same key; a peer with another key is refused and
     * logged. Unset everywhere means the empty key, which also matches only itself. Never printed.
     */
    @JvmField
    public val JOB_KEY: Param<String> = Param.string(
        "core", "job_key", "BRAID_JOB_KEY", "",
        "the job's shared secret: peers holding another key are refused (tcp); never printed",
        secret = true,
    )

    /** This process's host identity; rails reach each other through shared memory only when it is equal. Empty: hostname + boot id. */
    @JvmField
    public val HOST_ID: Param<String> = Param.string(
        "core", "host_id", "BRAID_HOST_ID", "",
        "this process's host identity (empty: hostname + boot id); shm links only processes with equal ones",
    )

    /** The default bound of a receive context's unexpected messages ([RxAttr.unexpectedLimit]); past it senders are pushed back. */
    @JvmField
    public val UNEXPECTED_LIMIT: Param<Int> = Param.int(
        "core", "unexpected_limit", "BRAID_UNEXPECTED_LIMIT", 1 shl 20, "messages",
        "how many messages may wait unexpected before senders are pushed back (RxAttr.unexpectedLimit); nothing is dropped",
        ParamRule { v -> if (v < 1) ParamViolation("is below 1 message", "set {name} ≥ 1") else null },
    )

    /** Every core parameter. */
    @JvmField
    public val ALL: List<Param<*>> = listOf(JOB_KEY, HOST_ID, UNEXPECTED_LIMIT)
}
