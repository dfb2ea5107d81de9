package braid.provider.tcp

import braid.core.Param

/**
 * The tcp rail's parameters, declared once: set them through the environment, a topology file, or
 * [braid.core.Hints.settings] / [braid.core.Info.with]. The job key is Braid's ([braid.core.CoreParams.JOB_KEY]).
 * `braid info -e` lists them.
 */
public object TcpParams {
    /** The smallest connection buffer. */
    public const val MIN_BUFFER: Int = 4096

    @JvmField
    public val EAGER_SIZE: Param<Int> =
        Param.size(
            "tcp",
            "eager_size",
            "BRAID_TCP_EAGER_SIZE",
            16 shl 10,
            "the largest message sent whole; larger ones wait for their receive (rendezvous)",
            Param.atLeast(0),
        )

    @JvmField
    public val BUFFER_SIZE: Param<Int> =
        Param.size(
            "tcp",
            "buffer_size",
            "BRAID_TCP_BUFFER_SIZE",
            256 shl 10,
            "bytes of each connection's send and receive buffers",
            Param.atLeast(MIN_BUFFER, "tcp's smallest connection buffer"),
        )

    @JvmField
    public val WINDOW: Param<Int> =
        Param.size(
            "tcp",
            "window",
            "BRAID_TCP_WINDOW",
            4 shl 20,
            "the most credit one sender gets for message heads (its share of the unexpected bounds may be less)",
            Param.atLeast(TcpFrameDescriptor.MIN_WINDOW, "the minimum window"),
        )

    @JvmField
    public val TIMEOUT_MS: Param<Long> =
        Param.long(
            "tcp",
            "timeout_ms",
            "BRAID_TCP_TIMEOUT_MS",
            5000,
            "ms",
            "how long a peer may stay silent before it is declared dead (heartbeats every quarter of it); also the connect limit",
            Param.atLeast(10L, "ms"),
        )

    @JvmField
    public val ADDR: Param<String> =
        Param.string(
            "tcp",
            "addr",
            "BRAID_TCP_ADDR",
            "",
            "the address endpoints listen on and advertise: host, host:port, [v6]:port (empty: the interface's, port 0)",
        )

    @JvmField
    public val IFACE: Param<String> =
        Param.string(
            "tcp",
            "iface",
            "BRAID_TCP_IFACE",
            "",
            "the interface offered first (empty: the first non-loopback interface that is up)",
        )

    @JvmField public val ALL: List<Param<*>> = listOf(EAGER_SIZE, BUFFER_SIZE, WINDOW, TIMEOUT_MS, ADDR, IFACE)
}
