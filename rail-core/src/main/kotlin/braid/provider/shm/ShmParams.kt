package braid.provider.shm

import braid.core.Param
import braid.core.ParamRule
import braid.core.ParamViolation
import braid.core.shm.SharedMemoryDir

/**
 * The shm rail's parameters, declared once: set them through the environment, a topology file, or
 * [braid.core.Hints.settings] / [braid.core.Info.with]. `braid info -e` lists them.
 */
public object ShmParams {
    /** The smallest ring: a power of two ≥ this. */
    public const val MIN_RING: Int = 1024

    @JvmField
    public val RING_SIZE: Param<Int> =
        Param.size(
            "shm",
            "ring_size",
            "BRAID_SHM_RING_SIZE",
            4 shl 20,
            "bytes of each sender-to-receiver ring (a power of two); a message of any size crosses a ring of any size",
            Param.powerOfTwo(MIN_RING),
        )

    @JvmField
    public val EAGER_SIZE: Param<Int> =
        Param.size(
            "shm",
            "eager_size",
            "BRAID_SHM_EAGER_SIZE",
            16 shl 10,
            "the largest message copied into the ring whole; larger ones wait for their receive (rendezvous)",
            Param.atLeast(0),
        )

    /**
     * The shared-memory directory: the kit's ([SharedMemoryDir.DIR]), which the collective offload's segments share.
     */
    @JvmField public val DIR: Param<String> = SharedMemoryDir.DIR

    @JvmField
    public val CMA: Param<Boolean> =
        Param.bool(
            "shm",
            "cma",
            "BRAID_SHM_CMA",
            true,
            "single-copy pulls of rendezvous messages of shm.pull_size or more with process_vm_readv; 0 streams every one through the ring",
        )

    @JvmField
    public val PULL_SIZE: Param<Int> =
        Param.size(
            "shm",
            "pull_size",
            "BRAID_SHM_PULL_SIZE",
            0,
            "the smallest rendezvous message a receiver pulls with one copy (process_vm_readv, where shm.cma allows it); " +
                "smaller ones stream through the bulk ring in fragments, the sender copying in while the receiver copies out " +
                "(0, the default: every rendezvous is pulled; streaming was bimodal per launch on the VM it was measured on)",
            Param.atLeast(0),
        )

    @JvmField
    public val SHARE_SIZE: Param<Int> =
        Param.size(
            "shm",
            "share_size",
            "BRAID_SHM_SHARE_SIZE",
            256 shl 10,
            "the smallest pulled message whose copy the receiver shares with its sender: both copy chunks of it at once " +
                "(process_vm_readv and process_vm_writev), about twice the speed of one copier; 0 turns sharing off",
            Param.atLeast(0),
        )

    @JvmField
    public val SHARE_CHUNK: Param<Int> =
        Param.size(
            "shm",
            "share_chunk",
            "BRAID_SHM_SHARE_CHUNK",
            256 shl 10,
            "bytes of each chunk of a shared copy (a message is cut into at least two, each a whole number of 4 KiB pages but the last)",
            Param.atLeast(4096),
        )

    @JvmField
    public val FRAG_SIZE: Param<Int> =
        Param.size(
            "shm",
            "frag_size",
            "BRAID_SHM_FRAG_SIZE",
            64 shl 10,
            "bytes of each rendezvous fragment streamed through the bulk ring (at most an eighth of shm.ring_size): " +
                "smaller ones pipeline the two copies more finely and stay in cache",
            Param.atLeast(64),
        )

    @JvmField
    public val LIVENESS_MS: Param<Long> =
        Param.long(
            "shm",
            "liveness_ms",
            "BRAID_SHM_LIVENESS_MS",
            50,
            "ms",
            "how often a waiting endpoint checks that its peers' processes still run; a death is reported within this",
            ParamRule { v -> if (v < 1) ParamViolation("is below 1 ms", "set {name} ≥ 1") else null },
        )

    @JvmField
    public val ALL: List<Param<*>> =
        listOf(RING_SIZE, EAGER_SIZE, DIR, CMA, PULL_SIZE, SHARE_SIZE, SHARE_CHUNK, FRAG_SIZE, LIVENESS_MS)
}
