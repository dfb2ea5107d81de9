package braid.provider.link

import braid.core.Param
import braid.core.ParamRule
import braid.core.ParamViolation

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

    /**
     * How a link spreads traffic over its network rails ([LinkShape.POLICIES]): `PER_PEER` pins each peer to one rail,
     * spreading the peers by the rails' weights; `LOCALITY` allows one network rail only (LNX's shape). The two agree
     * on a link with one network rail.
     */
    @JvmField
    public val POLICY: Param<String> =
        Param.string(
            "link",
            "policy",
            "BRAID_LINK_POLICY",
            LinkShape.PER_PEER,
            "how a link spreads traffic over several network rails: PER_PEER (each peer pinned to one rail, peers spread by weight), ROUND_ROBIN (each message to the next rail by weight), STRIPE (ROUND_ROBIN, and messages above the striping threshold split over the rails by weight) or LOCALITY (one network rail only)",
            ParamRule { v ->
                if (LinkShape.policyOf(v) != null) null
                else
                    ParamViolation(
                        "is not a policy (${LinkShape.POLICIES.joinToString()})",
                        "set {name} to one of those, e.g. PER_PEER",
                    )
            },
        )

    /**
     * Under [LinkShape.STRIPE], the size in bytes above which a message is split over the network rails; at least the
     * rails' eager size (a smaller value is refused when the domain opens, [LinkShape.thresholdProblem]).
     */
    @JvmField
    public val STRIPE_THRESHOLD: Param<Int> =
        Param.size(
            "link",
            "stripe_threshold",
            "BRAID_LINK_STRIPE_THRESHOLD",
            256 * 1024,
            "under policy STRIPE, messages larger than this many bytes are split over the network rails by weight (at least the eager size)",
        )

    /**
     * The bytes of copies a link endpoint keeps of the eager messages it sent over several network rails until their
     * receivers acknowledge them, to send them again on a surviving rail when the rail that carried them dies (see
     * docs/link.md, failover); a send past it waits (`-EAGAIN`) for acknowledgements. 0: keep none, and a rail that
     * dies costs the messages it had in flight.
     */
    @JvmField
    public val RESEND_BYTES: Param<Int> =
        Param.size(
            "link",
            "resend_bytes",
            "BRAID_LINK_RESEND_BYTES",
            8 shl 20,
            "bytes of sent eager messages a link with several network rails keeps until acknowledged, to resend " +
                "them on a surviving rail when theirs dies (0: none, a dying rail loses what it had in flight)",
        )

    @JvmField
    public val ALL: List<Param<*>> =
        listOf(LINKS, DISABLE_SHM, USE_SRQ, DUMP_STATS, POLICY, STRIPE_THRESHOLD, RESEND_BYTES)
}
