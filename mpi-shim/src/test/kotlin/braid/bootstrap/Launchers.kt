package braid.bootstrap

import braid.testsupport.ChildProcess
import java.io.File

/**
 * The real launchers the ITs start jobs with, and how each is invoked. A launcher not installed here disables its tests
 * with the reason printed, unless `BRAID_REQUIRE_LAUNCHERS=1` (set by `.ci/run`), which makes its absence a failure.
 */
enum class Launcher(val title: String, private val program: String?) {
    HYDRA_FD("mpiexec.mpich (PMI-1 over PMI_FD)", "mpiexec.mpich"),
    HYDRA_PORT("mpiexec.mpich -pmi-port (PMI-1 over TCP)", "mpiexec.mpich"),
    HYDRA_PMI2("mpiexec.mpich with PMI-2 frames", "mpiexec.mpich"),
    OPEN_MPI("mpirun.openmpi (PMIx)", "mpirun.openmpi"),
    BRAID_RUN("braid run", null);

    /** The launcher's command line for [ranks] copies of [command]. */
    fun commandLine(ranks: Int, command: List<String>): List<String> =
        when (this) {
            HYDRA_FD -> listOf("mpiexec.mpich", "-n", "$ranks") + command
            HYDRA_PORT -> listOf("mpiexec.mpich", "-pmi-port", "-n", "$ranks") + command
            HYDRA_PMI2 -> listOf("mpiexec.mpich", "-genv", "BRAID_PMI_VERSION", "2", "-n", "$ranks") + command
            OPEN_MPI -> listOf("mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "-np", "$ranks") + command
            BRAID_RUN ->
                ChildProcess.javaCommand(
                    "braid.bootstrap.LaunchMain",
                    listOf("-n", "$ranks") + command,
                    LAUNCHER_JVM_ARGS,
                )
        }

    /** The bootstrap kind the ranks report. */
    val kind: String
        get() =
            when (this) {
                HYDRA_FD,
                HYDRA_PORT -> "pmi1"
                HYDRA_PMI2 -> "pmi2"
                OPEN_MPI -> "pmix"
                BRAID_RUN -> "braid-run"
            }

    /** Why this launcher cannot be used here, or null when it can. */
    val missing: String?
        get() =
            program
                ?.takeIf { !onPath(it) }
                ?.let { "$it is not installed (Debian: ${if (this == OPEN_MPI) "openmpi-bin" else "mpich"})" }

    companion object {
        val required: Boolean
            get() = System.getenv("BRAID_REQUIRE_LAUNCHERS") == "1"

        fun onPath(program: String): Boolean =
            System.getenv("PATH").orEmpty().split(File.pathSeparator).any { File(it, program).canExecute() }
    }
}

/**
 * Whether a test needing [launcher] runs: yes when it is installed or `BRAID_REQUIRE_LAUNCHERS=1` (then [job] fails on
 * it), else disabled with the reason printed.
 */
fun enabledFor(launcher: Launcher): (io.kotest.core.test.TestCase) -> io.kotest.core.test.Enabled = {
    val missing = launcher.missing
    when {
        missing == null || Launcher.required -> io.kotest.core.test.Enabled.enabled
        else ->
            io.kotest.core.test.Enabled.disabled(
                    "skipped: $missing; set BRAID_REQUIRE_LAUNCHERS=1 to make this a failure"
                )
                .also { println(it.reason) }
    }
}

/**
 * A job of [ranks] JVMs running [main] under [launcher], logging to [log]; fails at once if the launcher is missing.
 */
fun job(launcher: Launcher, ranks: Int, mode: List<String>, log: File, main: String = RANK_MAIN): ChildProcess {
    launcher.missing?.let { error("${launcher.title}: $it, and BRAID_REQUIRE_LAUNCHERS=1 requires it") }
    return job({ rank -> launcher.commandLine(ranks, rank) }, mode, log, main)
}

/**
 * One job: the launcher's process ([commandLine] of the rank's command: a JVM running [main] with the arguments [mode])
 * with its output in [log]. Every rank JVM carries the child's tag ([ChildProcess.TAG_PROPERTY]), so
 * [ChildProcess.leftovers] finds any rank the launcher left running, and closing the job kills them.
 */
fun job(
    commandLine: (List<String>) -> List<String>,
    mode: List<String>,
    log: File,
    main: String = RANK_MAIN,
): ChildProcess =
    ChildProcess.jvm(main, mode)
        .name("the job of ${main.substringAfterLast('.')}")
        .jvmArgs("-Xmx192m")
        .launcher { commandLine(it) }
        .output(log)
        .start()

/** The rank program of the launcher tests. */
const val RANK_MAIN: String = "braid.bootstrap.RankMain"

/** The JVM arguments of a launcher's own JVM (`braid run`'s) and of a rank started without one. */
val LAUNCHER_JVM_ARGS: List<String> = listOf("-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")
