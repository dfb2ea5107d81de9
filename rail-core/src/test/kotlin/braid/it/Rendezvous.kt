package braid.it

import braid.testsupport.Deadline
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.StandardCopyOption
import java.time.Duration

/** Address exchange through files in a directory, as a launcher would do it. */
object Rendezvous {
    fun publish(dir: Path, name: String, address: ByteArray) {
        val tmp = dir.resolve("$name.tmp")
        Files.write(tmp, address)
        Files.move(tmp, dir.resolve("$name.addr"), StandardCopyOption.ATOMIC_MOVE)
    }

    fun lookup(dir: Path, name: String, seconds: Long = 60): ByteArray {
        val deadline = Deadline.of("the address of '$name' in $dir", Duration.ofSeconds(seconds))
        val f = dir.resolve("$name.addr")
        while (!Files.exists(f)) {
            deadline.check()
            Thread.sleep(5)
        }
        return Files.readAllBytes(f)
    }

    fun published(dir: Path, name: String): Boolean = Files.exists(dir.resolve("$name.addr"))

    fun mark(dir: Path, name: String) {
        Files.write(dir.resolve("$name.done"), ByteArray(0))
    }

    fun marked(dir: Path, name: String): Boolean = Files.exists(dir.resolve("$name.done"))
}
