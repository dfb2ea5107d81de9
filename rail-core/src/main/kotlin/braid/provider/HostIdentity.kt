package braid.provider

import braid.core.CoreParams
import braid.core.Settings
import java.net.InetAddress
import java.nio.file.Files
import java.nio.file.Paths

/**
 * The identity of this host, shared by every rail: an address blob carries it, shm reaches only endpoints whose
 * identity equals this one, and a link routes a peer with this identity over shm. `BRAID_HOST_ID` overrides it (the
 * tests make processes "remote" that way); otherwise it is the hostname and the kernel's boot id, hashed (FNV-1a, 64
 * bits). Public so that a layer above (the MPI layer choosing shm or a link from its ranks' hosts) judges "same host"
 * as the rails do.
 */
public object HostIdentity {
    /** This host's identity. */
    public val id: Long by lazy {
        val explicit = Settings.DEFAULT[CoreParams.HOST_ID].ifEmpty { null }
        val identity =
            explicit
                ?: run {
                    val host = runCatching { InetAddress.getLocalHost().hostName }.getOrDefault("localhost")
                    val boot =
                        runCatching { Files.readString(Paths.get("/proc/sys/kernel/random/boot_id")).trim() }
                            .getOrDefault("")
                    "$host/$boot"
                }
        fnv64(identity)
    }

    private fun fnv64(s: String): Long {
        var h = -0x340d631b7bdddcdbL
        for (c in s) {
            h = h xor c.code.toLong()
            h *= 0x100000001b3L
        }
        return h
    }
}
