package braid.bootstrap

import kotlin.system.exitProcess

/** `braid run -n N COMMAND…` as a test's child JVM: the launcher `braid run` calls, then its exit code. */
object LaunchMain {
    @JvmStatic
    fun main(args: Array<String>) {
        require(args.size >= 3 && args[0] == "-n") { "usage: LaunchMain -n N COMMAND..." }
        val code = JobLauncher(args[1].toInt(), args.drop(2)).run()
        System.out.flush()
        exitProcess(code)
    }
}
