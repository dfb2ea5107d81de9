package braid.provider.ofi

import com.sun.jna.NativeLibrary
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

/** The libffi path of the hot native calls ([OfiCall]) against functions whose answers are known. */
class OfiCallTest :
    FunSpec({
        test("an OfiCall returns what the function returns, for 64-bit and 32-bit arguments and returns") {
            OfiLibrary.require()
            val version = NativeLibrary.getInstance("libfabric.so.1").getFunction("fi_version")
            OfiCall(com.sun.jna.Pointer.nativeValue(version), "I").use {
                it.call() shouldBe OfiLibrary.version.toLong()
            }
            val libc = NativeLibrary.getInstance("c")
            OfiCall(com.sun.jna.Pointer.nativeValue(libc.getFunction("llabs")), "LL").use {
                it.arg(0, -5_000_000_000L).call() shouldBe 5_000_000_000L
                it.arg(0, 7).call() shouldBe 7L // the slots are reused call after call
            }
            OfiCall(com.sun.jna.Pointer.nativeValue(libc.getFunction("abs")), "II").use {
                it.arg(0, -42).call() shouldBe 42L
                it.arg(0, 0x1_0000_0005L).call() shouldBe 5L // an int argument takes the low 32 bits
            }
            // Many arguments, some on the stack: snprintf would need varargs; a 14-argument call is made by the
            // native rail's fi_compare_atomic, which OfiRmaContractTest exercises.
        }
    })
