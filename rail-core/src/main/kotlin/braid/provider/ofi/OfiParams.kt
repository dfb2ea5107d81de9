package braid.provider.ofi

import braid.core.Param

/**
 * The native rail's parameters, declared once. libfabric's own variables (`FI_TCP_IFACE`, `FI_LOG_LEVEL`, …) stay
 * libfabric's: choose a domain with `ofi:PROV:DOMAIN` (`ofi:tcp:lo`) instead of its interface variables.
 */
public object OfiParams {
    /**
     * Which native provider a native rail opens, as `fi_info -p` names it (`tcp`, `tcp;ofi_rxm`, `shm`, `verbs`),
     * optionally with `:DOMAIN`; empty for every one. `ofi:PROV[:DOMAIN]` in hints and links sets it, and each Info the
     * rail offers carries the full name of its own native provider here.
     */
    @JvmField
    public val PROVIDER: Param<String> =
        Param.string(
            "ofi",
            "provider",
            "BRAID_OFI_PROVIDER",
            "",
            "the native provider (and :domain) a native rail opens, as fi_info -p names it; empty for every one",
        )

    @JvmField
    public val RECV_SIZE: Param<Int> =
        Param.size(
            "ofi",
            "recv_size",
            "BRAID_OFI_RECV_SIZE",
            64 shl 10,
            "bytes of each native receive buffer: the largest message the native rail carries",
            Param.atLeast(64, "the smallest native receive buffer"),
        )

    @JvmField
    public val RECV_COUNT: Param<Int> =
        Param.int(
            "ofi",
            "recv_count",
            "BRAID_OFI_RECV_COUNT",
            16,
            "buffers",
            "native receives kept posted per queue (untagged and tagged)",
            Param.atLeast(1, "one posted receive"),
        )

    @JvmField
    public val TX_SLOTS: Param<Int> =
        Param.int(
            "ofi",
            "tx_slots",
            "BRAID_OFI_TX_SLOTS",
            256,
            "operations",
            "native sends and RMA in flight per endpoint; past it a send answers -EAGAIN",
            Param.atLeast(1, "one operation"),
        )

    /**
     * The liveness timeout: a native send, receive-side rendezvous or RMA the native provider has not completed in this
     * long fails with ETIMEDOUT, so a killed peer ends in an error completion, never a hang (rxm reports a reset
     * connection itself; shm's queue to a dead process just stays full). 0: none.
     */
    @JvmField
    public val TX_TIMEOUT: Param<Long> =
        Param.long(
            "ofi",
            "tx_timeout",
            "BRAID_OFI_TX_TIMEOUT",
            30_000L,
            "ms",
            "a native operation not completed in this long fails with ETIMEDOUT (a dead peer); 0 for none",
            Param.atLeast(0L, "ms"),
        )

    @JvmField
    public val MR_CACHE_SIZE: Param<Int> =
        Param.int(
            "ofi",
            "mr_cache_size",
            "BRAID_OFI_MR_CACHE_SIZE",
            64,
            "registrations",
            "native registrations of local buffers the registration cache keeps (least recently used go first)",
            Param.atLeast(1, "one registration"),
        )

    /**
     * Whether deferred work goes to the native provider's own queue (`FI_QUEUE_WORK`, with native counters bound to
     * Braid's) where it has one (`sockets` in 1.17). Off: Braid's queue serves it on every provider — what an
     * application that cancels or flushes deferred work needs, since no 1.17 provider implements `FI_CANCEL_WORK`.
     */
    @JvmField
    public val NATIVE_WORK: Param<Boolean> =
        Param.bool(
            "ofi",
            "native_work",
            "BRAID_OFI_NATIVE_WORK",
            true,
            "deferred work goes to the native provider's own queue (FI_QUEUE_WORK) where it has one",
        )

    /**
     * Whether a send of at most the native provider's inject size (`tx_attr->inject_size`: 4 KiB over shm, 64 bytes
     * over tcp;ofi_rxm) goes as native `fi_inject` (`fi_tinject`, `fi_injectdata`, …), as `fi_pingpong` sends: the
     * provider copies it before returning and writes no completion, and the rail completes it in its next duty cycle.
     * That is what Braid's own rails promise of a send (its buffer is free again); a send asked for
     * FI_DELIVERY_COMPLETE or FI_TRANSMIT_COMPLETE still goes as `fi_send` and completes natively.
     */
    @JvmField
    public val INJECT: Param<Boolean> =
        Param.bool(
            "ofi",
            "inject",
            "BRAID_OFI_INJECT",
            true,
            "sends of at most the native inject size go as fi_inject, completed by the rail, not the native CQ",
        )

    /**
     * The libfabric shared library to load, a name or a path; empty for the system's (`libfabric.so.1`). Read once,
     * from the process's settings, when a native rail is first asked for.
     */
    @JvmField
    public val LIBRARY: Param<String> =
        Param.string(
            "ofi",
            "library",
            "BRAID_OFI_LIBRARY",
            "",
            "the libfabric shared library to load (a name or a path); empty for the system's libfabric.so.1",
        )

    @JvmField
    public val ALL: List<Param<*>> =
        listOf(PROVIDER, RECV_SIZE, RECV_COUNT, TX_SLOTS, TX_TIMEOUT, MR_CACHE_SIZE, NATIVE_WORK, INJECT, LIBRARY)
}
