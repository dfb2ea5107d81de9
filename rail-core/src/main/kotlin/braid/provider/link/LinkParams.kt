package braid.provider.link

import braid.core.Param

/**
 * The link provider's parameters (those of LNX, `fi_lnx(7)`), declared once: set them through the environment, a
 * topology file, or [braid.core.Hints.settings]. `braid info -e` lists them.
 */
public object LinkParams {
    @JvmField
    public val LINKS: Param<String> =
        Param.string(
            "link",
            "links",
            "BRAID_LINKS",
            "shm+tcp",
            "the links offered, in FI_LNX_PROV_LINKS syntax: shm+tcp, shm+tcp:eth0,lo, several separated by |",
        )

    @JvmField
    public val DISABLE_SHM: Param<Boolean> =
        Param.bool(
            "link",
            "disable_shm",
            "BRAID_LINK_DISABLE_SHM",
            false,
            "leave shm out: same-host peers go over the network rail",
        )

    @JvmField
    public val USE_SRQ: Param<Boolean> =
        Param.bool(
            "link",
            "use_srq",
            "BRAID_LINK_USE_SRQ",
            true,
            "0 promises never to post an any-source receive (such receives are refused with EINVAL)",
        )

    @JvmField
    public val DUMP_STATS: Param<Boolean> =
        Param.bool(
            "link",
            "dump_stats",
            "BRAID_LINK_DUMP_STATS",
            false,
            "print per-rail message and byte counts and queue depths to stderr when an endpoint closes",
        )

    @JvmField public val ALL: List<Param<*>> = listOf(LINKS, DISABLE_SHM, USE_SRQ, DUMP_STATS)
}
