package braid.bootstrap

import braid.core.Settings
import braid.core.SettingsException
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.StandardCopyOption
import java.time.Duration

/**
 * Publish and look up endpoint addresses and memory keys by name, for programs that are not MPI. Two places to keep
 * them:
 * - **the job's launcher** ([forJob], or [open] under `braid run`, `mpiexec`, `srun`, `mpirun`): names go into the
 *   launcher's key-value store; [sync] is collective (every process of the job calls it) and makes every name published
 *   before it visible to every process;
 * - **a directory** ([inDirectory], or [open] with `BRAID_ADDRESS_DIR` set) that processes started by hand on one
 *   machine agree on: a name is a file, written whole (written aside and renamed) and waited for by [lookup]; [sync]
 *   does nothing.
 *
 * ```java
 * try (AddressBook book = AddressBook.open()) {
 *     book.publish("server", endpoint.getAddress());
 *     book.publishLong("server.key", region.getKey());
 *     book.sync();
 *     byte[] peer = book.lookup("client", Duration.ofSeconds(30));
 * }
 * ```
 *
 * Names use letters, digits and `_ . : + -`, and are published once. Memory keys travel as 8 little-endian bytes
 * ([publishLong], [lookupLong]).
 */
public class AddressBook private constructor(private val store: Store) : AutoCloseable {
    /** `directory` or `job:KIND` (the bootstrap's [Bootstrap.kind]). */
    public val kind: String
        get() = store.kind

    /** Publishes [value] under [name]. */
    public fun publish(name: String, value: ByteArray) {
        checkName(name)
        store.publish(name, value.copyOf())
    }

    /** Publishes [value] (a memory key, an offset) under [name] as 8 little-endian bytes. */
    public fun publishLong(name: String, value: Long) {
        publish(name, ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(value).array())
    }

    /**
     * Makes the names published so far visible to the other processes: collective over the job (every process calls it,
     * like a barrier); nothing to do for a directory.
     */
    public fun sync() {
        store.sync()
    }

    /**
     * The value published under [name]: from a directory, waiting up to [timeout] for it to appear; from a job, as of
     * the last [sync] ([timeout] unused). Throws [BootstrapException] naming the name and where it was looked for when
     * there is none.
     */
    public fun lookup(name: String, timeout: Duration): ByteArray {
        checkName(name)
        return store.lookup(name, timeout)
    }

    /** [lookup] of a value published with [publishLong]. */
    public fun lookupLong(name: String, timeout: Duration): Long {
        val bytes = lookup(name, timeout)
        if (bytes.size != 8)
            throw BootstrapException("'$name' holds ${bytes.size} bytes, not the 8 of a published long")
        return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).long
    }

    /** Closes the job's bootstrap if this book opened it; a directory's files stay. */
    override fun close() {
        store.close()
    }

    override fun toString(): String = "AddressBook($kind)"

    private interface Store : AutoCloseable {
        val kind: String

        fun publish(name: String, value: ByteArray)

        fun sync()

        fun lookup(name: String, timeout: Duration): ByteArray

        override fun close()
    }

    /** Names over a [Bootstrap]: each process lists its names under an index key per sync. */
    private class JobStore(private val boot: Bootstrap, private val owned: Boolean) : Store {
        override val kind: String = "job:${boot.kind}"
        private val mine = LinkedHashSet<String>()
        private val owners = HashMap<String, Int>()
        private var epoch = 0

        @Synchronized
        override fun publish(name: String, value: ByteArray) {
            if (!mine.add(name))
                throw BootstrapException("'$name' is already published by this process (rank ${boot.rank})")
            boot.put(NAME_PREFIX + name, value)
        }

        @Synchronized
        override fun sync() {
            // Launchers do not let a key be put twice: each sync's index has a key of its own.
            boot.put("$INDEX_PREFIX$epoch", mine.joinToString("\n").toByteArray(Charsets.UTF_8))
            boot.fence()
            for (r in 0 until boot.size) {
                val names = String(boot.get(r, "$INDEX_PREFIX$epoch"), Charsets.UTF_8)
                if (names.isNotEmpty()) names.split('\n').forEach { owners.putIfAbsent(it, r) }
            }
            epoch++
        }

        @Synchronized
        override fun lookup(name: String, timeout: Duration): ByteArray {
            val owner = owners[name] ?: if (name in mine) boot.rank else null
            owner
                ?: throw BootstrapException(
                    "no process of this job (${boot.kind}, ${boot.size} ranks) published '$name' before the last sync()"
                )
            return boot.get(owner, NAME_PREFIX + name)
        }

        override fun close() {
            if (owned) boot.close()
        }
    }

    /** Names as files in a directory both processes know. */
    private class DirectoryStore(private val dir: Path) : Store {
        override val kind: String
            get() = "directory"

        init {
            try {
                Files.createDirectories(dir)
            } catch (e: java.io.IOException) {
                throw BootstrapException("address directory $dir cannot be created: ${e.message}", e)
            }
        }

        override fun publish(name: String, value: ByteArray) {
            val target = dir.resolve("$name$SUFFIX")
            if (Files.exists(target))
                throw BootstrapException("'$name' is already published in $dir (remove $target to publish it again)")
            val tmp = Files.createTempFile(dir, ".$name", ".tmp")
            try {
                Files.write(tmp, value)
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE)
            } catch (e: java.io.IOException) {
                Files.deleteIfExists(tmp)
                throw BootstrapException("cannot publish '$name' in $dir: ${e.message}", e)
            }
        }

        override fun sync() {}

        override fun lookup(name: String, timeout: Duration): ByteArray {
            val file = dir.resolve("$name$SUFFIX")
            val deadline = System.nanoTime() + timeout.toNanos()
            var pause = 1L
            while (true) {
                try {
                    return Files.readAllBytes(file)
                } catch (_: java.nio.file.NoSuchFileException) {}
                if (System.nanoTime() - deadline >= 0) {
                    throw BootstrapException(
                        "nothing was published under '$name' in $dir within ${timeout.toMillis()} ms"
                    )
                }
                Thread.sleep(pause)
                pause = minOf(pause * 2, 50)
            }
        }

        override fun close() {}
    }

    public companion object {
        private const val NAME_PREFIX = "ab.n."
        private const val INDEX_PREFIX = "ab.i."
        private const val SUFFIX = ".addr"
        private val namePattern = Regex("[A-Za-z0-9_][A-Za-z0-9_.:+-]*")

        private fun checkName(name: String) {
            if (!namePattern.matches(name) || name.length > 40) {
                throw BootstrapException(
                    "name '$name': use 1 to 40 letters, digits and _ . : + - (not starting with . : + -)"
                )
            }
        }

        /**
         * The book for this process: the launcher's store when a launcher started it, else the directory
         * `BRAID_ADDRESS_DIR` ([BootstrapParams.ADDRESS_DIR]) names, else the store of a singleton job (only this
         * process's own names).
         */
        @JvmStatic public fun open(): AddressBook = open(Settings.DEFAULT)

        /**
         * [open] under [settings]: [BootstrapParams.ADDRESS_DIR], and the launcher's variables as [Bootstrap.detect]
         * reads them.
         */
        @JvmStatic
        public fun open(settings: Settings): AddressBook {
            val selection = BootstrapSelection(settings)
            val launched = selection.kind() != "singleton"
            val dir =
                try {
                    settings[BootstrapParams.ADDRESS_DIR]
                } catch (e: SettingsException) {
                    throw BootstrapException(e.message!!, e)
                }
            if (!launched && dir.isNotEmpty()) return inDirectory(Path.of(dir))
            return AddressBook(JobStore(selection.open(), owned = true))
        }

        /** Names in [boot]'s key-value store; closing the book leaves [boot] open. */
        @JvmStatic public fun forJob(boot: Bootstrap): AddressBook = AddressBook(JobStore(boot, owned = false))

        /** Names as files in [dir] (created if missing), for processes started by hand on one machine. */
        @JvmStatic public fun inDirectory(dir: Path): AddressBook = AddressBook(DirectoryStore(dir))
    }
}
