package braid.bootstrap

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

class PmiWireTest :
    FunSpec({
        test("a PMI-1 line parses into its fields, cmd first, and encodes back with its newline") {
            val line = PmiLine.parse("cmd=get_result rc=0 msg=success value=abc")
            line.command shouldBe "get_result"
            line.rc shouldBe 0
            line["value"] shouldBe "abc"
            line.encode() shouldBe "cmd=get_result rc=0 msg=success value=abc\n"
        }

        test("a PMI-2 frame is a 6-character length padded on the right, then key=value; pairs") {
            Pmi2Frame.of("cmd" to "fullinit", "pmirank" to 0, "threaded" to "FALSE").encode() shouldBe
                "38    cmd=fullinit;pmirank=0;threaded=FALSE;"
        }

        test("a PMI-2 body with a doubled ';' in a value parses to the single ';'") {
            val f = Pmi2Frame.parse("cmd=kvs-get-response;found=TRUE;value=a;;b=c;rc=0;")
            f.command shouldBe "kvs-get-response"
            f["value"] shouldBe "a;b=c"
            f.rc shouldBe 0
            f.encode() shouldBe "50    cmd=kvs-get-response;found=TRUE;value=a;;b=c;rc=0;"
        }
    })
