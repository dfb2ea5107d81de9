package braid.samples

import braid.testsupport.ChildProcess
import braid.testsupport.Deadline
import java.io.File
import java.net.InetAddress
import java.net.ServerSocket
import java.nio.file.Files
import java.nio.file.attribute.PosixFilePermissions
import java.security.SecureRandom
import java.time.Duration

/**
 * A one-node Slurm of its own, for tests: `munged`, `slurmctld` and `slurmd` from Debian's packages started as this
 * test's child processes (no systemd), with their key, sockets, config, state, spool, logs and pid files under one
 * temporary directory and ports picked free on loopback, so it disturbs nothing installed and two of them can run side
 * by side. The node is `braid0` on 127.0.0.1 with this JVM's processor count; [srun] runs a JVM under `srun`. [close]
 * stops the daemons and removes the directory.
 *
 * The recipe is `shared/research/anchors.md` §3.5: `proctrack/linuxproc`, `task/none`, no accounting, a `cgroup.conf`
 * that ignores systemd (22.05 cannot disable the cgroup plugin). It runs as root (`SlurmUser=root`).
 */
class OneNodeSlurm private constructor(val dir: File) : AutoCloseable {
    private val daemons = ArrayList<ChildProcess>()
    private val conf = File(dir, "slurm.conf")
    private val log = File(dir, "log")

    /** The variables every Slurm command of this cluster needs. */
    val environment: Map<String, String> = mapOf("SLURM_CONF" to conf.path)

    private fun start() {
        val munge = File(dir, "munge").apply { mkdirs() }
        val key = File(munge, "munge.key")
        key.writeBytes(ByteArray(1024).also { SecureRandom().nextBytes(it) })
        Files.setPosixFilePermissions(key.toPath(), PosixFilePermissions.fromString("rw-------"))
        val socket = File(munge, "munge.socket")
        log.mkdirs()
        daemons +=
            daemon(
                "munged",
                listOf(
                    MUNGED,
                    "--foreground",
                    "--force", // as root, in a directory of our own
                    "--socket=$socket",
                    "--key-file=$key",
                    "--log-file=${File(log, "munged.log")}",
                    "--pid-file=${File(munge, "munged.pid")}",
                    "--seed-file=${File(munge, "munged.seed")}",
                ),
            )
        Deadline.await("munged to create its socket $socket", Duration.ofSeconds(30)) {
            socket.exists() || !daemons.last().isAlive
        }
        check(daemons.last().isAlive) { "munged ended at once:\n${daemons.last().tail()}" }

        val state = File(dir, "state").apply { mkdirs() }
        val spool = File(dir, "spool").apply { mkdirs() }
        val cpus = Runtime.getRuntime().availableProcessors()
        val (ctldPort, slurmdPort) = freePorts()
        conf.writeText(
            """
            ClusterName=braid
            SlurmctldHost=localhost
            SlurmctldPort=$ctldPort
            SlurmdPort=$slurmdPort
            SlurmUser=root
            SlurmdUser=root
            AuthType=auth/munge
            CredType=cred/munge
            AuthInfo=socket=$socket
            ProctrackType=proctrack/linuxproc
            TaskPlugin=task/none
            JobAcctGatherType=jobacct_gather/none
            SelectType=select/cons_tres
            SchedulerType=sched/builtin
            MpiDefault=none
            ReturnToService=2
            StateSaveLocation=$state
            SlurmdSpoolDir=$spool
            SlurmctldPidFile=${File(dir, "slurmctld.pid")}
            SlurmdPidFile=${File(dir, "slurmd.pid")}
            SlurmctldLogFile=${File(log, "slurmctld.log")}
            SlurmdLogFile=${File(log, "slurmd.log")}
            NodeName=$NODE NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
            PartitionName=braid Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
            """
                .trimIndent() + "\n"
        )
        File(dir, "cgroup.conf").writeText("CgroupPlugin=autodetect\nIgnoreSystemd=yes\n")
        daemons += daemon("slurmctld", listOf(SLURMCTLD, "-D", "-f", conf.path))
        daemons += daemon("slurmd", listOf(SLURMD, "-D", "-N", NODE, "-f", conf.path))
        Deadline.await(
            "node $NODE of the Slurm in $dir to be idle (sinfo); logs: $log",
            Duration.ofSeconds(60),
            { nodeState() },
            { it == "idle" || daemons.any { d -> !d.isAlive } },
        )
        daemons
            .firstOrNull { !it.isAlive }
            ?.let { error("${it.name()} ended while the cluster started:\n${it.tail()}\n${logs()}") }
    }

    /** `sinfo`'s state of the node (`idle`, `down`, …), or what went wrong asking. */
    private fun nodeState(): String =
        command(listOf("sinfo", "-h", "-N", "-o", "%t")).use { p ->
            val code = p.awaitExit(Duration.ofSeconds(30))
            if (code == 0) p.output().trim() else "sinfo exit $code: ${p.output().trim()}"
        }

    /**
     * A JVM running [main] with [args] (on the test class path, [classPath] appended) under `srun` [srunArgs], output
     * to [output]. It inherits none of this JVM's `BRAID_*` settings, nor a launcher's variables.
     */
    fun srun(
        srunArgs: List<String>,
        main: String,
        args: List<String>,
        output: File,
        classPath: String? = null,
    ): ChildProcess =
        ChildProcess.jvm(main, args)
            .name("srun ${srunArgs.joinToString(" ")} $main")
            .jvmArgs("-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")
            .apply {
                if (classPath != null) classPath(System.getProperty("java.class.path") + File.pathSeparator + classPath)
            }
            .withoutEnv(::foreign)
            .env(environment)
            .launcher { listOf("srun") + srunArgs + it }
            .output(output)
            .start()

    private fun command(cmd: List<String>): ChildProcess =
        ChildProcess.command(cmd).withoutEnv(::foreign).env(environment).start()

    private fun daemon(name: String, cmd: List<String>): ChildProcess =
        ChildProcess.command(cmd)
            .name(name)
            .withoutEnv(::foreign)
            .env(environment)
            .output(File(log, "$name.out"))
            .start()

    /** Every daemon's log, for a failure's message. */
    fun logs(): String =
        log.listFiles()
            .orEmpty()
            .sortedBy { it.name }
            .joinToString("\n") { "--- ${it.name}\n${it.readText().takeLast(4000)}" }

    /** Stops the daemons (SIGTERM, then SIGKILL after 10 s) and removes the directory. */
    override fun close() {
        for (d in daemons.asReversed()) {
            d.process().destroy()
            runCatching { Deadline.await("${d.name()} to stop on SIGTERM", Duration.ofSeconds(10)) { !d.isAlive } }
            d.close()
        }
        daemons.clear()
        dir.deleteRecursively()
    }

    companion object {
        const val NODE: String = "braid0"

        /** What to install when a piece is missing (Debian; `.ci/install-launchers` does it). */
        const val INSTALL: String =
            "install Slurm and munge: run .ci/install-launchers as root " +
                "(Debian: apt-get install slurm-wlm slurmctld slurmd slurm-client munge libpmix-dev)"

        private val MUNGED: String by lazy { program("munged") }
        private val SLURMCTLD: String by lazy { program("slurmctld") }
        private val SLURMD: String by lazy { program("slurmd") }

        private fun program(name: String): String = onPath(name) ?: error("$name not found; $INSTALL")

        /** Why a one-node Slurm cannot start here (a program missing, not root), or null. */
        fun missing(): String? {
            val absent = listOf("munged", "slurmctld", "slurmd", "srun", "sinfo").filter { onPath(it) == null }
            if (absent.isNotEmpty()) return "${absent.joinToString(", ")} not found; $INSTALL"
            val pmix =
                listOf(
                    "/usr/lib/x86_64-linux-gnu/libpmix.so",
                    "/usr/lib/aarch64-linux-gnu/libpmix.so",
                    "/usr/lib/libpmix.so",
                )
            if (pmix.none { File(it).exists() })
                return "libpmix.so (unversioned) not found: Slurm's mpi/pmix plugin dlopens it; $INSTALL"
            if (System.getProperty("user.name") != "root")
                return "the one-node Slurm of the tests runs its daemons as root"
            return null
        }

        /** Starts a one-node Slurm in a new temporary directory. */
        fun start(): OneNodeSlurm {
            val dir = Files.createTempDirectory("braid-slurm").toFile()
            dir.setReadable(true, false)
            dir.setExecutable(true, false) // munged checks that its socket's directory can be searched
            val slurm = OneNodeSlurm(dir)
            try {
                slurm.start()
            } catch (t: Throwable) {
                val logs = runCatching { slurm.logs() }.getOrDefault("")
                slurm.close()
                throw AssertionError("the one-node Slurm did not start: ${t.message}\n$logs", t)
            }
            return slurm
        }

        private fun onPath(program: String): String? =
            (System.getenv("PATH").orEmpty().split(File.pathSeparator) + listOf("/usr/sbin", "/sbin"))
                .map { File(it, program) }
                .firstOrNull { it.canExecute() }
                ?.path

        /** Variables a test JVM may carry that the cluster and its jobs must not see. */
        private fun foreign(name: String): Boolean =
            name.startsWith("BRAID_") ||
                name.startsWith("SLURM_") ||
                name.startsWith("PMI") ||
                name.startsWith("OMPI_") ||
                name == "HYDI_CONTROL_FD"

        /** Two distinct ports free on loopback now. */
        private fun freePorts(): Pair<Int, Int> =
            ServerSocket(0, 1, InetAddress.getLoopbackAddress()).use { a ->
                ServerSocket(0, 1, InetAddress.getLoopbackAddress()).use { b -> a.localPort to b.localPort }
            }
    }
}
