package braid.core

/**
 * Braid's own parameters, shared by every provider (the providers declare theirs beside them: `ShmParams`, `TcpParams`,
 * `LinkParams`). `braid info -e` lists them all.
 */
public object CoreParams {
    /**
     * The job's shared secret (any string). Rails that authenticate their peers (tcp) prove on every connection that
     * both hold the same key; a peer with another key is refused and logged. Unset everywhere means the empty key,
     * which also matches only itself. Never printed.
     */
    @JvmField
    public val JOB_KEY: Param<String> =
        Param.string(
            "core",
            "job_key",
            "BRAID_JOB_KEY",
            "",
            "the job's shared secret: peers holding another key are refused (tcp); never printed",
            secret = true,
        )

    /**
     * This process's host identity; rails reach each other through shared memory only when it is equal. Empty:
     * hostname + boot id.
     */
    @JvmField
    public val HOST_ID: Param<String> =
        Param.string(
            "core",
            "host_id",
            "BRAID_HOST_ID",
            "",
            "this process's host identity (empty: hostname + boot id); shm links only processes with equal ones",
        )

    /**
     * The default bound of a receive context's unexpected messages ([RxAttr.unexpectedLimit]); past it senders are
     * pushed back.
     */
    @JvmField
    public val UNEXPECTED_LIMIT: Param<Int> =
        Param.int(
            "core",
            "unexpected_limit",
            "BRAID_UNEXPECTED_LIMIT",
            1 shl 20,
            "messages",
            "how many messages may wait unexpected before senders are pushed back (RxAttr.unexpectedLimit); nothing is dropped",
            ParamRule { v -> if (v < 1) ParamViolation("is below 1 message", "set {name} ≥ 1") else null },
        )

    /**
     * The bound on bytes of unexpected messages an endpoint holds, over all its rails; past it senders are pushed back.
     * 0 means the default: an eighth of the heap, at most 64 MiB.
     */
    @JvmField
    public val UNEXPECTED_BYTES: Param<Long> =
        Param.long(
            "core",
            "unexpected_bytes",
            "BRAID_UNEXPECTED_BYTES",
            0L,
            "bytes",
            "how many bytes of unexpected messages an endpoint holds before senders are pushed back (0: an eighth of the heap, at most 64 MiB); nothing is dropped",
            ParamRule { v -> if (v < 0) ParamViolation("is negative", "set {name} ≥ 0 (0 for the default)") else null },
        )

    /**
     * The part of the unexpected bounds (percent of [UNEXPECTED_BYTES] and of [UNEXPECTED_LIMIT]) each rail of a link
     * keeps for itself: neither the credit another rail has promised its senders nor the messages it holds can take it.
     * So a link's shm rail always has room for same-host messages however many tcp senders were granted credit, and tcp
     * always has credit to grant however many same-host messages wait. An endpoint with one rail has no floor.
     */
    @JvmField
    public val UNEXPECTED_RAIL_FLOOR: Param<Int> =
        Param.int(
            "core",
            "unexpected_rail_floor",
            "BRAID_UNEXPECTED_RAIL_FLOOR",
            10,
            "percent",
            "the part of the unexpected bounds each rail of a link keeps for itself, whatever the other rails hold or promise their senders",
            ParamRule { v ->
                if (v < 0 || v > 50)
                    ParamViolation(
                        "is not 0..50 percent",
                        "set {name} between 0 and 50 (each rail of a link keeps that much of the bounds)",
                    )
                else null
            },
        )

    /** The progress model of domains whose hints leave it unspecified ([DomainAttr.progress]). */
    @JvmField
    public val PROGRESS: Param<String> =
        Param.string(
            "core",
            "progress",
            "BRAID_PROGRESS",
            ProgressModel.MANUAL.name,
            "how domains make progress unless the hints say: MANUAL (reading a CQ or counter drives it) or AUTO (a progress thread)",
            oneOf(ProgressModel.MANUAL.name, ProgressModel.AUTO.name),
        )

    /** The idle strategy's kind of new domains ([DomainAttr.idle]). */
    @JvmField
    public val IDLE: Param<String> =
        Param.string(
            "core",
            "idle",
            "BRAID_IDLE",
            IdleKind.BACKOFF.name,
            "what waiting costs: SPIN, YIELD, or BACKOFF (spin, yield, then park up to core.idle_max_park_ns)",
            oneOf(*IdleKind.values().map { it.name }.toTypedArray()),
        )

    /**
     * The longest park of the BACKOFF idle strategy ([IdlePolicy.maxParkNanos]; below 1 ms it slows the suspend API,
     * see there).
     */
    @JvmField
    public val IDLE_MAX_PARK_NS: Param<Long> =
        Param.long(
            "core",
            "idle_max_park_ns",
            "BRAID_IDLE_MAX_PARK_NS",
            1_000_000,
            "ns",
            "the longest park under BACKOFF: how late work from another process may be seen while idle (below 1 ms the suspend API waits whole milliseconds)",
            Param.atLeast(1_000L, "ns"),
        )

    /**
     * Whether endpoints are published as JMX MBeans under `io.braid` (`braid.core.telemetry.Telemetry`) while they are
     * enabled. The beans read the endpoint's statistics view on demand; nothing is counted for them on the data path.
     */
    @JvmField
    public val TELEMETRY: Param<Boolean> =
        Param.bool(
            "core",
            "telemetry",
            "BRAID_TELEMETRY",
            true,
            "publish each endpoint and rail as JMX MBeans under io.braid (jconsole, jcmd)",
        )

    /**
     * The bounce chunk of a device-memory send (`HmemStaging`): a larger one is staged this many bytes at a time while
     * its earlier chunks stream, through one pooled chunk-size buffer, so the copy out of the device overlaps the
     * transfer and a message of any length needs no bounce buffer its size.
     */
    @JvmField
    public val HMEM_CHUNK: Param<Int> =
        Param.size(
            "core",
            "hmem_chunk",
            "BRAID_HMEM_CHUNK",
            1 shl 20,
            "bytes of device memory a large device send stages at a time through one pooled bounce chunk, streaming the " +
                "previous chunk meanwhile; smaller sends are staged whole",
            Param.atLeast(4096),
        )

    /** Every core parameter. */
    @JvmField
    public val ALL: List<Param<*>> =
        listOf(
            JOB_KEY,
            HOST_ID,
            UNEXPECTED_LIMIT,
            UNEXPECTED_BYTES,
            UNEXPECTED_RAIL_FLOOR,
            PROGRESS,
            IDLE,
            IDLE_MAX_PARK_NS,
            TELEMETRY,
            HMEM_CHUNK,
        )

    /**
     * The domain attributes a provider offers under [settings]: [PROGRESS], [IDLE] and [IDLE_MAX_PARK_NS] applied to
     * the defaults. (Hints that name a progress model override it.)
     */
    @JvmStatic
    public fun domainAttr(settings: Settings): DomainAttr {
        val maxPark = settings[IDLE_MAX_PARK_NS]
        return DomainAttr(
            progress = ProgressModel.valueOf(settings[PROGRESS].trim().uppercase()),
            idle = IdlePolicy(IdleKind.valueOf(settings[IDLE].trim().uppercase()), maxPark),
        )
    }

    private fun oneOf(vararg names: String): ParamRule<String> = ParamRule { v ->
        if (names.any { it.equals(v.trim(), ignoreCase = true) }) null
        else ParamViolation("is not one of ${names.joinToString()}", "set {name} to one of ${names.joinToString()}")
    }
}
