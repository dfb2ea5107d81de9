package braid.samples

import braid.core.ModuleParams
import braid.core.Param

/**
 * The parameters of the `braid` command and the sample programs; `braid info -e` lists them with the rest. [JAVA_OPTS]
 * is read by `bin/braid`, the shell script, before any JVM starts: it is declared here so that it is listed and
 * documented with the others, and nothing in Java reads it.
 */
public class CommandParams : ModuleParams {
    override fun parameters(): List<Param<*>> = ALL

    public companion object {
        /** `BRAID_JAVA_OPTS`: the JVM options `bin/braid` starts the command with (read by the script only). */
        @JvmField
        public val JAVA_OPTS: Param<String> =
            Param.string(
                "braid",
                "java_opts",
                "BRAID_JAVA_OPTS",
                "",
                "read by bin/braid (the shell script), not by Java: the JVM options it starts braid.jar with, e.g. -Xmx2g " +
                    "(empty: the JVM's defaults; for `braid run`, -Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1)",
            )

        /** `BRAID_PROVIDER`: the provider [HelloJob] opens. */
        @JvmField
        public val HELLO_PROVIDER: Param<String> =
            Param.string("braid", "hello_provider", "BRAID_PROVIDER", "shm", "the provider the HelloJob sample opens")

        /** `BRAID_STARTUP_T0`: the launch time `bench/startup.sh` gives [HelloJob], in epoch milliseconds; 0: none. */
        @JvmField
        public val STARTUP_T0: Param<Long> =
            Param.long(
                "braid",
                "startup_t0",
                "BRAID_STARTUP_T0",
                0L,
                "ms",
                "set by bench/startup.sh: the launch time in epoch milliseconds; HelloJob then prints each rank's startup time " +
                    "(0: not timed)",
                Param.atLeast(0L, "ms"),
            )

        /** Every parameter of the command and the samples. */
        @JvmField public val ALL: List<Param<*>> = listOf(JAVA_OPTS, HELLO_PROVIDER, STARTUP_T0)
    }
}
