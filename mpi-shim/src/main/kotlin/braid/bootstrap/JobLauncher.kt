package braid.bootstrap

import java.io.ByteArrayOutputStream
import java.io.File
import java.io.IOException
import java.io.InputStream
import java.io.PrintStream
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit

/**
 * `braid run`: starts [ranks] copies of [command] on this machine as one job, serves them a key-value store and barrier
 * ([PmiServer]: PMI-1 over loopback TCP, so [Bootstrap.detect] and MPICH-built programs both find it), forwards each
 * rank's output whole lines at a time, as `mpirun` does (untagged; with [tagOutput] each line gets a `[rank] ` prefix),
 * and ends the job when a rank aborts or exits with a non-zero code (the others are killed, their descendants too).
 * [run] returns the job's exit code: 0 when every rank exited 0; an abort's code; else the first failing rank's code
 * (128 + the signal for a killed rank).
 *
 * ```java
 * JobLauncher job = new JobLauncher(4, List.of("java", "-cp", cp, "my.Main"));
 * job.setTagOutput(true); // "[2] …" on every line, like mpirun --tag-output or mpiexec -l
 * int code = job.run();
 * ```
 *
 * Each rank gets `PMI_PORT`, `PMI_ID`, `PMI_RANK`, `PMI_SIZE`, `BRAID_RUN` (the job's name), `MPI_LOCALNRANKS`,
 * `MPI_LOCALRANKID` and [environment]; variables of a launcher that started `braid run` itself (`PMI_FD`, `PMIX_*`, …)
 * are removed so the ranks do not talk to it.
 */
public class JobLauncher
private constructor(
    /** Each rank's command (`MPI_Comm_spawn_multiple` gives ranks different ones; `braid run` one for all). */
    private val commands: List<List<String>>,
    /** Each rank's application number, `MPI_APPNUM` (the entry of `MPI_Comm_spawn_multiple` that started it). */
    private val appnums: IntArray,
    private val out: PrintStream,
    private val err: PrintStream,
    private val environment: Map<String, String>,
) {
    @JvmOverloads
    public constructor(
        ranks: Int,
        command: List<String>,
        out: PrintStream = System.out,
        err: PrintStream = System.err,
        environment: Map<String, String> = emptyMap(),
    ) : this(List(checkRanks(ranks)) { command }, IntArray(ranks), out, err, environment)

    private val ranks: Int = commands.size

    /**
     * Whether each line a rank prints is prefixed with its rank (`[2] …`), as `braid run --tag-output` (`-l`) asks; by
     * default lines pass through unchanged, byte for byte, as under `mpirun` and `mpiexec`.
     */
    public var tagOutput: Boolean = false

    init {
        if (commands.any { it.isEmpty() }) throw BootstrapException("braid run: no command to run")
    }

    private sealed interface Event {
        data class Exited(val rank: Int, val code: Int) : Event

        data class Aborted(val rank: Int, val code: Int) : Event
    }

    /** Runs the job to its end and returns its exit code. */
    public fun run(): Int {
        val events = LinkedBlockingQueue<Event>()
        val job = "braid-run-${ProcessHandle.current().pid()}-${System.nanoTime() % 1_000_000}"
        PmiServer(ranks, job, appnums) { rank, code -> events += Event.Aborted(rank, code) }
            .use { server ->
                val processes = ArrayList<Process>(ranks)
                val pumps = ArrayList<Thread>(2 * ranks)
                val hook = Thread({ processes.forEach { kill(it) } }, "braid-run-cleanup")
                Runtime.getRuntime().addShutdownHook(hook)
                try {
                    checkCommand()
                    for (r in 0 until ranks) {
                        val p =
                            try {
                                start(r, server.port, job)
                            } catch (e: IOException) {
                                throw BootstrapException(
                                    "braid run: cannot start rank $r (${commands[r].first()}): ${e.message}",
                                    e,
                                )
                            }
                        processes += p
                        pumps += pump(p.inputStream, out, r)
                        pumps += pump(p.errorStream, err, r)
                        p.onExit().thenAccept { events += Event.Exited(r, it.exitValue()) }
                    }
                    val code = await(events, processes)
                    pumps.forEach { it.join(5_000) }
                    return code
                } catch (t: Throwable) {
                    processes.forEach { kill(it) }
                    throw t
                } finally {
                    processes.forEach { kill(it) }
                    runCatching { Runtime.getRuntime().removeShutdownHook(hook) }
                    out.flush()
                    err.flush()
                }
            }
    }

    private fun start(rank: Int, port: String, job: String): Process {
        // Each rank in a session of its own, as Hydra's proxy does (setsid): the terminal's Ctrl-C
        // reaches the launcher alone, which ends the ranks; and under the kernel's autogroup
        // scheduling each rank gets a share of the CPU like any other session, not one share for all.
        val command = commands[rank]
        val pb = ProcessBuilder(if (SETSID != null) listOf(SETSID) + command else command)
        val env = pb.environment()
        env.keys.removeIf { k ->
            INHERITED_LAUNCHER_VARIABLES.any { k == it || (it.endsWith("*") && k.startsWith(it.dropLast(1))) }
        }
        env.putAll(environment)
        env["PMI_PORT"] = port
        env["PMI_ID"] = rank.toString()
        env["PMI_RANK"] = rank.toString()
        env["PMI_SIZE"] = ranks.toString()
        env["BRAID_RUN"] = job
        env["MPI_LOCALNRANKS"] = ranks.toString()
        env["MPI_LOCALRANKID"] = rank.toString()
        return pb.start().also { it.outputStream.close() }
    }

    /** Waits for the job's end and returns its exit code, killing the other ranks when one fails. */
    private fun await(events: LinkedBlockingQueue<Event>, processes: List<Process>): Int {
        var exited = 0
        while (true) {
            when (val e = events.take()) {
                is Event.Aborted -> {
                    err.println("braid run: rank ${e.rank} aborted the job with exit code ${e.code}")
                    endJob(processes)
                    return e.code
                }
                is Event.Exited -> {
                    if (e.code != 0) {
                        val how =
                            if (e.code > 128) "was killed by signal ${e.code - 128}" else "exited with code ${e.code}"
                        // An abort in flight when its rank died reports the abort's code, not the kill's.
                        events.poll(200, TimeUnit.MILLISECONDS)?.let { next ->
                            if (next is Event.Aborted) {
                                err.println("braid run: rank ${next.rank} aborted the job with exit code ${next.code}")
                                endJob(processes)
                                return next.code
                            }
                        }
                        err.println("braid run: rank ${e.rank} (pid ${processes[e.rank].pid()}) $how; ending the job")
                        endJob(processes)
                        return e.code
                    }
                    if (++exited == processes.size) return 0
                }
            }
        }
    }

    private fun endJob(processes: List<Process>) {
        processes.forEach {
            if (it.isAlive) it.descendants().forEach { d -> d.destroy() }
            it.destroy()
        }
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3)
        for (p in processes) {
            val left = deadline - System.nanoTime()
            if (left <= 0 || !p.waitFor(left, TimeUnit.NANOSECONDS)) kill(p)
        }
        processes.forEach { it.waitFor(10, TimeUnit.SECONDS) }
    }

    private fun kill(p: Process) {
        if (!p.isAlive) return
        p.descendants().forEach { it.destroyForcibly() }
        p.destroyForcibly()
    }

    /**
     * Copies [input] to [to] a whole line at a time (so ranks' lines never interleave mid-line), bytes unchanged, each
     * line prefixed `[rank] ` when [tagOutput] is set; a last line without a newline is copied as it is.
     */
    private fun pump(input: InputStream, to: PrintStream, rank: Int): Thread {
        val tag = if (tagOutput) "[$rank] ".toByteArray(Charsets.US_ASCII) else null
        return Thread(
                {
                    val lines = LineCopier(to, tag)
                    val buf = ByteArray(8192)
                    try {
                        while (true) {
                            val n = input.read(buf)
                            if (n < 0) break
                            lines.accept(buf, n)
                        }
                    } catch (_: IOException) {} finally {
                        lines.finish()
                    }
                },
                "braid-run-output-$rank",
            )
            .apply {
                isDaemon = true
                start()
            }
    }

    /** Whole lines of one rank's stream onto the shared [to], under its lock; [tag] before each line when not null. */
    private class LineCopier(private val to: PrintStream, private val tag: ByteArray?) {
        private val pending = ByteArrayOutputStream()

        fun accept(buf: ByteArray, n: Int) {
            var start = 0
            for (i in 0 until n) {
                if (buf[i] != '\n'.code.toByte()) continue
                synchronized(to) {
                    if (tag != null) to.write(tag, 0, tag.size)
                    pending.writeTo(to)
                    to.write(buf, start, i + 1 - start)
                }
                pending.reset()
                start = i + 1
            }
            pending.write(buf, start, n - start)
            if (start > 0) synchronized(to) { to.flush() }
        }

        fun finish() {
            synchronized(to) {
                if (pending.size() > 0) {
                    if (tag != null) to.write(tag, 0, tag.size)
                    pending.writeTo(to)
                }
                to.flush()
            }
        }
    }

    /**
     * Throws [BootstrapException] naming the command's program when it is neither an executable file nor on PATH, as
     * [run] does first: for a caller that must know before it waits for the ranks (`MPI_Comm_spawn`).
     */
    public fun checkCommand() {
        for (r in commands.indices) if (r == 0 || commands[r] !== commands[r - 1]) checkRunnable(r, commands[r].first())
    }

    /** Fails naming [program] (rank [rank]'s) when it is neither an executable file nor one on PATH. */
    private fun checkRunnable(rank: Int, program: String) {
        val found = if ('/' in program) File(program).let { it.isFile && it.canExecute() } else onPath(program) != null
        if (!found)
            throw BootstrapException(
                "braid run: cannot start rank $rank ($program): not an executable file or a program on PATH"
            )
    }

    internal companion object {
        /**
         * The job of `MPI_Comm_spawn_multiple`: entry `i` runs `counts[i]` ranks of `commands[i]` (program and
         * arguments), numbered on from the ranks of the entries before it, with application number `i`.
         */
        @JvmSynthetic
        fun multiple(
            commands: List<List<String>>,
            counts: IntArray,
            out: PrintStream,
            err: PrintStream,
            environment: Map<String, String>,
        ): JobLauncher {
            require(commands.size == counts.size) { "${commands.size} commands but ${counts.size} counts" }
            checkRanks(counts.sum())
            val perRank = ArrayList<List<String>>()
            val appnums = ArrayList<Int>()
            for ((i, c) in commands.withIndex()) repeat(counts[i]) {
                perRank += c
                appnums += i
            }
            return JobLauncher(perRank, appnums.toIntArray(), out, err, environment)
        }

        private fun checkRanks(ranks: Int): Int {
            if (ranks < 1) throw BootstrapException("braid run: -n $ranks; give 1 or more ranks")
            return ranks
        }

        /** [program] on the PATH the ranks inherit (read, as every variable, through [braid.core.Settings]). */
        private fun onPath(program: String): String? =
            braid.core.Settings.DEFAULT.environmentValue("PATH")
                .orEmpty()
                .split(File.pathSeparator)
                .filter { it.isNotEmpty() }
                .map { File(it, program) }
                .firstOrNull { it.isFile && it.canExecute() }
                ?.path

        /** util-linux's `setsid`, which execs the rank in a new session (keeping its pid); null if absent. */
        private val SETSID: String? = onPath("setsid")

        /** Variables of a launcher that may have started `braid run` itself; its ranks must not see them. */
        private val INHERITED_LAUNCHER_VARIABLES =
            listOf(
                "PMI_FD",
                "PMI_PORT",
                "PMI_ID",
                "PMI_RANK",
                "PMI_SIZE",
                "PMI_JOBID",
                "PMI_SPAWNED",
                "PMI2_SUN_PATH",
                "PMIX_*",
                "OMPI_*",
                "BRAID_RUN",
                "BRAID_BOOTSTRAP",
                "BRAID_PMI_VERSION",
                "BRAID_MPI_PARENT_PORT", // a spawned process's; its own ranks were not spawned
                "HYDI_CONTROL_FD",
            )
    }
}
