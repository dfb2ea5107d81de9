package braid.samples

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain

/** The getopt-style parser of [parseArgs]. */
class CommandLineTest :
    FunSpec({
        val iters = OptionSpec('I', null, "number", "iterations")
        val check = OptionSpec('c', null, null, "check")
        val list = OptionSpec('l', "list", null, "list")
        val api = OptionSpec(null, "api", "api", "api")
        val specs = listOf(iters, check, list, api)

        test("values attached or separate, bundled flags, long options with =, positionals anywhere, --") {
            val p = parseArgs("x", listOf("-I100", "host", "-cl", "--api=raw", "--", "-c"), specs)
            p.value(iters) shouldBe "100"
            p.has(check) shouldBe true
            p.has(list) shouldBe true
            p.value(api) shouldBe "raw"
            p.positionals shouldBe listOf("host", "-c")

            val q = parseArgs("x", listOf("-I", "5", "--api", "raw", "--list", "-I", "7"), specs)
            q.value(iters) shouldBe "7"
            q.value(api) shouldBe "raw"
            q.has(list) shouldBe true
            q.has(check) shouldBe false
        }

        test("unknown options, missing values and values given to flags are usage errors naming the option") {
            shouldThrow<UsageException> { parseArgs("x", listOf("-z"), specs) }.message shouldContain "'-z'"
            shouldThrow<UsageException> { parseArgs("x", listOf("-cz"), specs) }.message shouldContain "'-z'"
            shouldThrow<UsageException> { parseArgs("x", listOf("--zap"), specs) }.message shouldContain "'--zap'"
            shouldThrow<UsageException> { parseArgs("x", listOf("-I"), specs) }.message shouldContain "'-I'"
            shouldThrow<UsageException> { parseArgs("x", listOf("--list=yes"), specs) }.message shouldContain "'--list'"
        }
    })
