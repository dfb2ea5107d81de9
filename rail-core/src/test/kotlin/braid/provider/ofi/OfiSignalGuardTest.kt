package braid.provider.ofi

import com.sun.jna.Native
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

/**
 * The signal guard: with libfabric loaded into this JVM (and with it Debian's `libinfinipath`, whose constructor would
 * take SIGSEGV over), JIT-compiled code that relies on the JVM's own SIGSEGV handling (implicit null checks, safepoint
 * polls during collections) keeps running. Without `IPATH_NO_BACKTRACE` set before the load, this workload kills the
 * JVM ("terminated with signal 11") within its first collections ([JitWorkload] says how often).
 */
class OfiSignalGuardTest :
    FunSpec({
        test(
            "libfabric loads with IPATH_NO_BACKTRACE set natively, and compiled code that traps SIGSEGV keeps running"
        ) {
            OfiLibrary.available shouldBe true
            Getenv.getenv("IPATH_NO_BACKTRACE") shouldBe "1"
            JitWorkload.run(20) shouldBe 20L * JitWorkload.PER_ROUND
        }
    })

/** libc's `getenv`: what the native library's constructor saw, not Java's copy of the environment. */
private object Getenv {
    init {
        Native.register(Getenv::class.java, "c")
    }

    @JvmStatic external fun getenv(name: String): String?
}
