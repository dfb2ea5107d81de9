package braid.provider.shm

import braid.core.shm.ProcessIdentity
import braid.core.shm.SharedMemoryDir
import braid.core.shm.ShmSegment
import java.io.IOException
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.atomic.AtomicInteger

/**
 * How the shm rail names its files in the shared-memory directory ([SharedMemoryDir]), and how it reclaims those of
 * dead owners. Creating and mapping them is the kit's ([ShmSegment]).
 *
 * Names carry the owner's identity ([ProcessIdentity]), `braid-<pid>-<start>-<n>`, where `<start>` is the process start
 * time in milliseconds (base 36): a pid alone can be reused, a pid with its start time cannot. So liveness is read from
 * the name, without opening the file:
 * - `<endpoint>.ep` — an endpoint's file: its header and doorbell ring; owned by the endpoint.
 * - `<receiver>~<sender>.ch` — one sender-to-receiver channel: its data ring and control ring.
 *
 * Files are created with mode 0600 and removed on close; [reclaim] removes those whose owners died without closing.
 */
internal object ShmDirectory {
    const val PREFIX = "braid-"
    private val counter = AtomicInteger()

    /** The process-wide directory ([SharedMemoryDir.default]): peers find each other's files here. */
    val root: Path
        get() = SharedMemoryDir.default

    /** A fresh endpoint name owned by this process. */
    fun newEndpointName(): String {
        val self = ProcessIdentity.SELF
        return "$PREFIX${self.pid}-${java.lang.Long.toString(self.startMillis, 36)}-${counter.incrementAndGet()}"
    }

    fun endpointFile(name: String): Path = root.resolve("$name.ep")

    fun channelFile(receiver: String, sender: String): Path = root.resolve("$receiver~$sender.ch")

    /** Whether the process that owns [name] (an endpoint name) is still running (not a zombie). */
    fun ownerAlive(name: String): Boolean = identity(name)?.alive() ?: false

    /** The running process that owns [name], or null if it is gone (or a reused pid). */
    fun owner(name: String): ProcessHandle? = identity(name)?.handle()

    /** The owner [name] names: the pid and the start time in it. */
    fun identity(name: String): ProcessIdentity? {
        val parts = name.removePrefix(PREFIX).split('-')
        if (parts.size < 3) return null
        val pid = parts[0].toLongOrNull() ?: return null
        val start = parts[1].toLongOrNull(36) ?: return null
        return ProcessIdentity(pid, start)
    }

    /** The pid in an endpoint name, for messages. */
    fun pidOf(name: String): String = name.removePrefix(PREFIX).substringBefore('-')

    /**
     * Removes files left by processes that died: an endpoint file whose owner is gone, and a channel file whose
     * receiver and sender are both gone. Returns how many were removed.
     */
    fun reclaim(): Int {
        var removed = 0
        val files =
            try {
                Files.newDirectoryStream(root, "$PREFIX*").use { it.toList() }
            } catch (e: IOException) {
                return 0
            }
        for (f in files) {
            val n = f.fileName.toString()
            val stale =
                when {
                    n.endsWith(".ep") -> !ownerAlive(n.removeSuffix(".ep"))
                    n.endsWith(".ch") ->
                        n.removeSuffix(".ch").split('~').let {
                            it.size != 2 || (!ownerAlive(it[0]) && !ownerAlive(it[1]))
                        }
                    else -> false
                }
            if (stale && runCatching { Files.deleteIfExists(f) }.getOrDefault(false)) removed++
        }
        return removed
    }

    /** Creates [path] (failing if it exists) and maps it: [ShmSegment.create]. */
    fun createAndMap(path: Path, length: Int): ShmSegment = ShmSegment.create(path, length.toLong())

    /** Maps an existing file, or returns null if it is gone: [ShmSegment.open]. */
    fun mapExisting(path: Path): ShmSegment? = ShmSegment.open(path)
}
