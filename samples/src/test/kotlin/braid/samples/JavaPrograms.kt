package braid.samples

import braid.testsupport.ChildProcess
import java.io.File
import java.time.Duration

/** The source tree's root, from a samples test (Maven runs them in `samples/`). */
val SOURCE_ROOT: File = File("..").canonicalFile

/** `samples/target/braid.jar`, which `mvn package` builds before the `*IT` specs run. */
val BRAID_JAR: File = File(SOURCE_ROOT, "samples/target/braid.jar")

/**
 * The README's MPI quick start, `RingAllreduce.java`, written into [dir] as the README takes it: mpi-shim's test source
 * without its package line. Returns the file.
 */
fun readmeRingAllreduce(dir: File): File =
    withoutPackage("mpi-shim/src/test/java/braid/mpi/javaapi/example/RingAllreduce.java", dir)

/**
 * The README's program for people moving from Open MPI's Java bindings, `Ring.java` (written against package `mpi`, as
 * docs/mpi.md shows it), written into [dir] as the README takes it. Returns the file.
 */
fun readmeOmpiRing(dir: File): File = withoutPackage("mpi-shim/src/test/java/braid/mpi/ompi/example/Ring.java", dir)

/** The test source at [path] (from the source root) without its package line and the blank line after it, in [dir]. */
private fun withoutPackage(path: String, dir: File): File {
    val source = File(SOURCE_ROOT, path)
    dir.mkdirs()
    return File(dir, source.name).apply { writeText(source.readLines().drop(2).joinToString("\n", postfix = "\n")) }
}

/**
 * Runs `bin/mpijavac ARGS…` to its end (60 s at most) with none of this JVM's `BRAID_*` settings; returns its exit
 * status and output.
 */
fun mpijavac(vararg args: String): Pair<Int, String> =
    ChildProcess.command(listOf(File(SOURCE_ROOT, "bin/mpijavac").path) + args)
        .name("mpijavac")
        .withoutEnv { it.startsWith("BRAID_") }
        .start()
        .use { p -> p.awaitExit(Duration.ofSeconds(120)) to p.output() }
