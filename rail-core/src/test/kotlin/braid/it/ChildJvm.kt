package braid.it

import braid.testsupport.Deadline
import java.io.File
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.StandardCopyOption
import java.time.Duration
import java.util.concurrent.TimeUnit
import kotlin.system.exitProcess

/**
 * A child JVM running [main] with the test classpath; killed on close if still running.
 * [launcher] runs it (`ip netns exec NS` puts it on another host, see [NetnsHosts]); it must
 * exec the JVM, so [process] is the JVM itself.
 */
class ChildJvm(
    main: String,
    args: List<String>,
    env: Map<String, String> = emptyMap(),
    val log: File,
    jvmArgs: List<String> = listOf("-Xmx256m"),
    launcher: List<String> = emptyList(),
) : AutoCloseable {
    val process: Process = ProcessBuilder(
        launcher + listOf(
            ProcessHandle.current().info().command().orElse("java"),
            "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
        ) + jvmArgs + main + args,
    ).redirectErrorStream(true).redirectOutput(log).also { it.environment().putAll(env) }.start()

    /** Waits for exit (failing with the child's output after [seconds]) and returns the exit code. */
    fun await(seconds: Long): Int {
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
            process.destroyForcibly()
            error("child did not exit within $seconds s; its output:\n${output()}")
        }
        return process.exitValue()
    }

    /** Waits for exit (as [await]), failing unless the child exited 0 and printed OK; returns its output. */
    fun awaitOk(seconds: Long): String {
        val rc = await(seconds)
        val out = output()
        check(rc == 0) { "child exited $rc:\n$out" }
        check("OK" in out) { "child exited 0 without printing OK:\n$out" }
        return out
    }

    fun output(): String = if (log.exists()) log.readText() else ""

    override fun close() {
        if (process.isAlive) {
            process.destroyForcibly()
            process.waitFor(10, TimeUnit.SECONDS)
        }
    }
}

/**
 * The body of a child's `main`: runs [body] and exits 0, or prints FAILED with the stack trace
 * (which [ChildJvm.awaitOk] shows) and exits 1.
 */
fun childMain(body: () -> Unit): Nothing {
    try {
        body()
        System.out.flush()
        exitProcess(0)
    } catch (t: Throwable) {
        println("FAILED: $t")
        t.printStackTrace(System.out)
        System.out.flush()
        exitProcess(1)
    }
}

/** Waits for every child to exit 0 having printed OK, failing with the first that did not. */
fun List<ChildJvm>.awaitAll(seconds: Long): Unit = forEach { it.awaitOk(seconds) }

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

    fun mark(dir: Path, name: String) { Files.write(dir.resolve("$name.done"), ByteArray(0)) }

    fun marked(dir: Path, name: String): Boolean = Files.exists(dir.resolve("$name.done"))
}
