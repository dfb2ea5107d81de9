package braid.it

import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.StandardCopyOption

/**
 * Address exchange through files in a directory, as a launcher would do it: for the multi-process tests and for the
 * benchmark programs that start their own processes (the collectives' `CollBench`, `OffloadBench`, `HierBench`).
 */
public object Rendezvous {
    @JvmStatic
    public fun publish(dir: Path, name: String, address: ByteArray) {
        val tmp = dir.resolve("$name.tmp")
        Files.write(tmp, address)
        Files.move(tmp, dir.resolve("$name.addr"), StandardCopyOption.ATOMIC_MOVE)
    }

    /** The address [name] published in [dir], waiting up to [seconds] for it. */
    @JvmStatic
    @JvmOverloads
    public fun lookup(dir: Path, name: String, seconds: Long = 60): ByteArray {
        val deadline = System.nanoTime() + seconds * 1_000_000_000L
        val f = dir.resolve("$name.addr")
        while (!Files.exists(f)) {
            check(System.nanoTime() < deadline) { "the address of '$name' in $dir: not published within $seconds s" }
            Thread.sleep(5)
        }
        return Files.readAllBytes(f)
    }

    @JvmStatic public fun published(dir: Path, name: String): Boolean = Files.exists(dir.resolve("$name.addr"))

    @JvmStatic
    public fun mark(dir: Path, name: String) {
        Files.write(dir.resolve("$name.done"), ByteArray(0))
    }

    @JvmStatic public fun marked(dir: Path, name: String): Boolean = Files.exists(dir.resolve("$name.done"))
}
