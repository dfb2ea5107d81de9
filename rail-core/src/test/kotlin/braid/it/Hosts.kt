package braid.it

import braid.testsupport.ChildProcess
import java.io.File

/**
 * Where the processes of a multi-process test run, so one test body runs on one host ([LocalHosts]) and across hosts
 * ([NetnsHosts]) alike.
 */
interface Hosts : AutoCloseable {
    /** The interface the test's own tcp endpoints listen on, reachable from every host. */
    val iface: String

    /** Starts a JVM running [main] on host [host] (0-based). */
    fun start(
        host: Int,
        main: String,
        args: List<String>,
        log: File,
        env: Map<String, String> = emptyMap(),
        jvmArgs: List<String> = listOf("-Xmx256m"),
    ): ChildProcess
}

/** Every "host" is this one, on loopback; children are killed on close. */
class LocalHosts : Hosts {
    override val iface: String = "lo"
    private val children = ArrayList<ChildProcess>()

    override fun start(
        host: Int,
        main: String,
        args: List<String>,
        log: File,
        env: Map<String, String>,
        jvmArgs: List<String>,
    ): ChildProcess = ChildProcess.jvm(main, args).env(env).output(log).jvmArgs(jvmArgs).start().also { children += it }

    override fun close() = children.forEach { it.close() }
}
