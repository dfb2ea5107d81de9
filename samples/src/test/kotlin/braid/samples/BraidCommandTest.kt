package braid.samples

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import java.io.ByteArrayOutputStream
import java.io.PrintStream

/** `braid` in this JVM: dispatch, `info`, and the exit status and message of every kind of error. */
class BraidCommandTest : FunSpec({
    class Result(val status: Int, val out: String, val err: String)

    fun braid(vararg args: String): Result {
        val out = ByteArrayOutputStream()
        val err = ByteArrayOutputStream()
        val status = PrintStream(out, true).use { o -> PrintStream(err, true).use { e -> BraidCommand.run(args.toList(), o, e) } }
        return Result(status, out.toString(), err.toString())
    }

    test("info prints fi_info's short form; -l lists providers; -v describes") {
        val info = braid("info")
        info.status shouldBe 0
        info.out shouldStartWith "provider: shm\n    fabric: shm\n    domain: shm\n    version: "
        info.out shouldContain "\n    type: FI_EP_RDM\n    protocol: "
        braid("info", "-l").out shouldStartWith "shm:\n    version: "
        braid("info", "-v", "-p", "shm").out shouldStartWith "---\nfi_info:\n"
    }

    test("info -p with an unknown provider fails with getInfo's message and status 1") {
        val r = braid("info", "-p", "nope")
        r.status shouldBe 1
        r.err shouldContain "nope"
        r.out shouldBe ""
    }

    test("unknown commands and options, bad values and unavailable APIs are usage errors: status 2, message, usage") {
        listOf(
            arrayOf("bogus") to "unknown command 'bogus'",
            arrayOf("info", "-x") to "unknown option '-x'",
            arrayOf("pingpong", "-x") to "unknown option '-x'",
            arrayOf("pingpong", "-I", "many") to "'-I'",
            arrayOf("pingpong", "-S", "12q") to "'-S'",
            arrayOf("pingpong", "-m", "rma") to "'-m'",
            arrayOf("pingpong", "-e", "msg") to "'-e'",
            arrayOf("pingpong", "--api", "dsl") to "'--api'",
            arrayOf("pingpong", "host1", "host2") to "at most one server address",
            arrayOf("demo", "-B", "1") to "unknown option '-B'",
        ).forEach { (args, message) ->
            val r = braid(*args)
            r.status shouldBe 2
            r.err shouldContain message
            r.err shouldContain "Usage:"
            r.err shouldContain "braid"
        }
        braid().status shouldBe 2
    }

    test("--help prints usage on stdout with status 0") {
        listOf(arrayOf("--help"), arrayOf("info", "-h"), arrayOf("pingpong", "-h"), arrayOf("demo", "--help")).forEach { args ->
            val r = braid(*args)
            r.status shouldBe 0
            r.out shouldContain "Usage:"
        }
    }
})
