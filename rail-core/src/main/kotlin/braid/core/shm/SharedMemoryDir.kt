package braid.core.shm

import braid.core.Param
import braid.core.Settings
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.Paths

/**
 * Where Braid's shared-memory files live: the shm rail's rings, the collective offload's segments, and whatever a later
 * layer maps. Every process of a job must choose the same directory, since they find each other's files there by name,
 * so it is chosen in one place.
 *
 * The choice: [DIR] (`BRAID_SHM_DIR`) when set; else /dev/shm where it exists and is writable (tmpfs: no disk behind
 * the rings); else `<java.io.tmpdir>/braid-shm`. The directory is created if it is missing.
 */
public object SharedMemoryDir {
    /** The directory of the shared-memory files (the shm rail lists it as `shm.dir`: `ShmParams.DIR`). */
    @JvmField
    public val DIR: Param<String> =
        Param.string(
            "shm",
            "dir",
            "BRAID_SHM_DIR",
            "",
            "the directory of the ring files (empty: /dev/shm where writable, else <tmpdir>/braid-shm); every process of a job must use the same",
        )

    /** The directory [settings] choose (see the class comment), created if missing. */
    @JvmStatic public fun of(settings: Settings): Path = of(settings[DIR])

    /** The directory a [configured] value of [DIR] chooses (empty: the default), created if missing. */
    @JvmStatic
    public fun of(configured: String): Path {
        val shm = Paths.get("/dev/shm")
        val dir =
            when {
                configured.isNotEmpty() -> Paths.get(configured)
                Files.isDirectory(shm) && Files.isWritable(shm) -> shm
                else -> Paths.get(System.getProperty("java.io.tmpdir"), "braid-shm")
            }
        Files.createDirectories(dir)
        return dir
    }

    /** The process-wide directory: [of] the process's own settings ([Settings.DEFAULT]), chosen once. */
    @JvmStatic public val default: Path by lazy { of(Settings.DEFAULT) }
}
