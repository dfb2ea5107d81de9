package braid.core.shm

import braid.core.FabricException
import java.io.FileNotFoundException
import java.io.RandomAccessFile
import java.nio.MappedByteBuffer
import java.nio.channels.FileChannel
import java.nio.file.FileAlreadyExistsException
import java.nio.file.Files
import java.nio.file.NoSuchFileException
import java.nio.file.Path
import java.nio.file.StandardCopyOption
import java.nio.file.StandardOpenOption
import java.nio.file.attribute.PosixFilePermissions
import org.agrona.IoUtil
import org.agrona.concurrent.UnsafeBuffer

/**
 * A file-backed shared-memory segment, mapped read-write whole, with an Agrona view over it: what the shm rail's
 * endpoint and channel files and the collective offload's segments are. The layout inside is the user's (a
 * `*Descriptor` draws each); this is creating, opening, publishing under another name, and removing.
 *
 * Files are created with mode 0600 (where the file system has POSIX permissions; elsewhere they get the directory's)
 * and never truncated while mapped. Not thread-safe.
 */
public class ShmSegment private constructor(path: Path, private val mapped: MappedByteBuffer) : AutoCloseable {
    /** Where the segment is named now ([publishAs] renames it). */
    public var path: Path = path
        private set

    /** The whole segment. */
    public val buffer: UnsafeBuffer = UnsafeBuffer(mapped)

    private var unmapped = false

    /** Bytes mapped. */
    public val length: Int
        get() = buffer.capacity()

    /** Renames the file to [target] in one step, replacing what is there, so openers never see it half written. */
    public fun publishAs(target: Path) {
        Files.move(path, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING)
        path = target
    }

    /** Removes the file's name (the mappings stay valid until each is unmapped). Never throws. */
    public fun delete() {
        runCatching { Files.deleteIfExists(path) }
    }

    /** Unmaps the segment; the buffer must not be touched after. Idempotent. */
    public fun unmap() {
        if (unmapped) return
        unmapped = true
        IoUtil.unmap(mapped)
    }

    /** [unmap]; the file stays (call [delete] to remove it). */
    override fun close(): Unit = unmap()

    override fun toString(): String = "ShmSegment($path, $length bytes)"

    public companion object {
        /**
         * Creates [path] with mode 0600, sizes it to [length] bytes and maps it. Throws [FabricException] (EIO) if the
         * file exists already, or is longer than a mapping can be.
         */
        @JvmStatic
        public fun create(path: Path, length: Long): ShmSegment {
            if (length < 0 || length > Int.MAX_VALUE) {
                throw FabricException.invalid(
                    "shared memory: segment $path of $length bytes; a segment holds 0 .. ${Int.MAX_VALUE} bytes"
                )
            }
            try {
                Files.createFile(
                    path,
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")),
                )
            } catch (e: FileAlreadyExistsException) {
                throw FabricException.io("shared memory: $path already exists; another owner has this name", e)
            } catch (e: UnsupportedOperationException) {
                Files.createFile(path) // not a POSIX file system: permissions are the directory's
            }
            RandomAccessFile(path.toFile(), "rw").use { it.setLength(length) }
            return map(path)
        }

        /**
         * Maps the existing file [path] whole, or returns null if it is missing or shorter than [minLength] bytes (not
         * yet sized by its creator).
         */
        @JvmStatic
        @JvmOverloads
        public fun open(path: Path, minLength: Long = 0): ShmSegment? = mapExisting(path, minLength, readOnly = false)

        /**
         * [open], mapped read-only: a store through its buffer faults, so only code that never writes may hold it (a
         * named address vector opened with `FI_READ`).
         */
        @JvmStatic
        @JvmOverloads
        public fun openReadOnly(path: Path, minLength: Long = 0): ShmSegment? =
            mapExisting(path, minLength, readOnly = true)

        private fun mapExisting(path: Path, minLength: Long, readOnly: Boolean): ShmSegment? =
            try {
                val options =
                    if (readOnly) arrayOf(StandardOpenOption.READ)
                    else arrayOf(StandardOpenOption.READ, StandardOpenOption.WRITE)
                FileChannel.open(path, *options).use { ch ->
                    val size = ch.size()
                    val mode = if (readOnly) FileChannel.MapMode.READ_ONLY else FileChannel.MapMode.READ_WRITE
                    if (size < minLength) null else ShmSegment(path, ch.map(mode, 0, size))
                }
            } catch (e: NoSuchFileException) {
                null
            } catch (e: FileNotFoundException) {
                null
            }

        private fun map(path: Path): ShmSegment =
            FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE).use { ch ->
                ShmSegment(path, ch.map(FileChannel.MapMode.READ_WRITE, 0, ch.size()))
            }
    }
}
