package braid.provider.shm

import braid.core.FabricException
import braid.core.Settings
import org.agrona.IoUtil
import org.agrona.concurrent.UnsafeBuffer
import java.io.IOException
import java.io.RandomAccessFile
import java.nio.MappedByteBuffer
import java.nio.channels.FileChannel
import java.nio.file.FileAlreadyExistsException
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.Paths
import java.nio.file.attribute.PosixFilePermissions
import java.util.concurrent.atomic.AtomicInteger

/**
 * Where the shm rail keeps its files, and how they are named, created, mapped and reclaimed.
 *
 * Names carry the owner's identity, `braid-<pid>-<start>-<n>`, where `<start>` is the process
 * start time in milliseconds (base 36): a pid alone can be reused, a pid with its start time
 * cannot. So liveness is read from the name, without opening the file:
 * - `<endpoint>.ep` — an endpoint's file: its header and doorbell ring; owned by the endpoint.
 * - `<receiver>~<sender>.ch` — one sender-to-receiver channel: its data ring and control ring.
 *
 * Files are created with mode 0600 and removed on close; [reclaim] removes those whose owners
 * died without closing.
 */
internal object ShmDirectory {
    const val PREFIX = "braid-"
    private val counter = AtomicInteger()

    /**
     * /dev/shm where it exists (tmpfs: no disk behind the rings), else the temp directory;
     * [ShmParams.DIR] (`BRAID_SHM_DIR`) overrides it for the whole process, as peers find each
     * other's files here.
     */
    val root: Path by lazy {
        val configured = Settings.DEFAULT[ShmParams.DIR].ifEmpty { null }
        val dir = when {
            configured != null -> Paths.get(configured)
            Files.isDirectory(Paths.get("/dev/shm")) && Files.isWritable(Paths.get("/dev/shm")) -> Paths.get("/dev/shm")
            else -> Paths.get(System.getProperty("java.io.tmpdir"), "braid-shm")
        }
        Files.createDirectories(dir)
        dir
    }

    val self: ProcessHandle = ProcessHandle.current()
    val selfStart: Long = startMillis(self)

    /** A fresh endpoint name owned by this process. */
    fun newEndpointName(): String =
        "$PREFIX${self.pid()}-${java.lang.Long.toString(selfStart, 36)}-${counter.incrementAndGet()}"

    fun endpointFile(name: String): Path = root.resolve("$name.ep")

    fun channelFile(receiver: String, sender: String): Path = root.resolve("$receiver~$sender.ch")

    /** Whether the process that owns [name] (an endpoint name) is still running (not a zombie). */
    fun ownerAlive(name: String): Boolean = owner(name)?.let { PeerProcess.watch(it)?.use { p -> p.alive() } } ?: false

    /**
     * The running process that owns [name], or null if it is gone: the pid in the name, checked
     * against the start time in the name, so a reused pid is not mistaken for the owner.
     */
    fun owner(name: String): ProcessHandle? {
        val parts = name.removePrefix(PREFIX).split('-')
        if (parts.size < 3) return null
        val pid = parts[0].toLongOrNull() ?: return null
        val start = parts[1].toLongOrNull(36) ?: return null
        if (pid == self.pid()) return if (start == selfStart) self else null
        val handle = ProcessHandle.of(pid).orElse(null) ?: return null
        return if (handle.isAlive && startMillis(handle) == start) handle else null
    }

    /** The pid in an endpoint name, for messages. */
    fun pidOf(name: String): String = name.removePrefix(PREFIX).substringBefore('-')

    private fun startMillis(handle: ProcessHandle): Long =
        handle.info().startInstant().map { it.toEpochMilli() / 10 * 10 }.orElse(0L)

    /**
     * Removes files left by processes that died: an endpoint file whose owner is gone, and a
     * channel file whose receiver and sender are both gone. Returns how many were removed.
     */
    fun reclaim(): Int {
        var removed = 0
        val files = try {
            Files.newDirectoryStream(root, "$PREFIX*").use { it.toList() }
        } catch (e: IOException) {
            return 0
        }
        for (f in files) {
            val n = f.fileName.toString()
            val stale = when {
                n.endsWith(".ep") -> !ownerAlive(n.removeSuffix(".ep"))
                n.endsWith(".ch") -> n.removeSuffix(".ch").split('~').let { it.size != 2 || (!ownerAlive(it[0]) && !ownerAlive(it[1])) }
                else -> false
            }
            if (stale && runCatching { Files.deleteIfExists(f) }.getOrDefault(false)) removed++
        }
        return removed
    }

    /** Creates [path] with mode 0600 (failing if it exists), sizes it to [length] and maps it. */
    fun createAndMap(path: Path, length: Int): MappedFile {
        try {
            Files.createFile(path, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))
        } catch (e: FileAlreadyExistsException) {
            throw FabricException.io("shm: $path already exists; another endpoint has this name", e)
        } catch (e: UnsupportedOperationException) {
            Files.createFile(path) // not a POSIX file system: permissions are the directory's
        }
        RandomAccessFile(path.toFile(), "rw").use { it.setLength(length.toLong()) }
        return map(path)
    }

    /** Maps an existing file, or returns null if it is gone. */
    fun mapExisting(path: Path): MappedFile? = try {
        map(path)
    } catch (e: java.nio.file.NoSuchFileException) {
        null
    } catch (e: java.io.FileNotFoundException) {
        null
    }

    private fun map(path: Path): MappedFile =
        FileChannel.open(path, java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE).use { ch ->
            val mapped = ch.map(FileChannel.MapMode.READ_WRITE, 0, ch.size())
            MappedFile(path, mapped, UnsafeBuffer(mapped))
        }
}

/** A mapped file and an Agrona view over all of it. */
internal class MappedFile(val path: Path, private val mapped: MappedByteBuffer, val buffer: UnsafeBuffer) {
    private var unmapped = false

    fun delete() {
        runCatching { Files.deleteIfExists(path) }
    }

    fun unmap() {
        if (unmapped) return
        unmapped = true
        IoUtil.unmap(mapped)
    }
}
