package braid.mpi.testing

import braid.core.Settings
import braid.mpi.ErrorHandler
import braid.mpi.Mpi
import braid.mpi.MpiOptions
import braid.mpi.ThreadLevel
import braid.testsupport.Deadline
import java.time.Duration
import java.util.concurrent.atomic.AtomicReferenceArray

/**
 * Runs [body] as each of [n] ranks of one [MemoryJob], one thread per rank, each rank with its own shm endpoint; fails
 * with every rank's exception, or names the ranks still running after [seconds]. The world's error handler is
 * ERRORS_RETURN, so bad calls throw. Each rank asks for [level] (below MULTIPLE, the body must keep its rank's calls on
 * its one thread). [settings] gives each rank's settings (none by default).
 */
fun runRanks(
    n: Int,
    seconds: Long = 60,
    job: MemoryJob = MemoryJob(n),
    level: ThreadLevel = ThreadLevel.MULTIPLE,
    /** Each rank's settings (by rank). */
    settings: (Int) -> Settings = { Settings.NONE },
    body: (Mpi) -> Unit,
) {
    val errors = AtomicReferenceArray<Throwable?>(n)
    val threads =
        List(n) { r ->
            Thread(
                    {
                        try {
                            // Settings.NONE: the caller's BRAID_* variables do not reach the ranks; tests set values
                            // through the API.
                            Mpi.init(job.rank(r), level, MpiOptions().settings(settings(r)).provider("shm")).use { mpi
                                ->
                                mpi.world.setErrhandler(ErrorHandler.ERRORS_RETURN)
                                body(mpi)
                            }
                        } catch (t: Throwable) {
                            errors.set(r, t)
                        }
                    },
                    "rank-$r",
                )
                .apply {
                    isDaemon = true
                    start()
                }
        }
    val deadline = Deadline.of("$n ranks to finish", Duration.ofSeconds(seconds))
    threads.forEach { it.join(maxOf(1, deadline.remainingMillis())) }
    val stuck = threads.filter { it.isAlive }
    if (stuck.isNotEmpty()) {
        val traces =
            stuck.joinToString("\n\n") { t ->
                t.name + ":\n" + t.stackTrace.take(25).joinToString("\n") { "    at $it" }
            }
        stuck.forEach { it.interrupt() }
        error("ranks still running after $seconds s: ${stuck.map { it.name }}\n$traces")
    }
    val failed = (0 until n).mapNotNull { r -> errors.get(r)?.let { r to it } }
    if (failed.isNotEmpty()) {
        val first = failed.first().second
        failed.drop(1).forEach { (_, t) -> first.addSuppressed(t) }
        throw AssertionError("ranks ${failed.map { it.first }} failed: ${first.message}", first)
    }
}

/** A heap buffer of [n] ints holding [values]. */
fun ints(vararg values: Int): java.nio.ByteBuffer =
    java.nio.ByteBuffer.allocate(values.size * 4).also { b -> values.forEachIndexed { i, v -> b.putInt(i * 4, v) } }

fun java.nio.ByteBuffer.intAt(i: Int): Int = getInt(i * 4)
