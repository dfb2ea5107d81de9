package braid.samples

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith

/** `braid` in this JVM: dispatch, `info`, and the exit status and message of every kind of error. */
class BraidCommandTest :
    FunSpec({
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

        test(
            "unknown commands and options, bad values and unavailable APIs are usage errors: status 2, message, usage"
        ) {
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
                )
                .forEach { (args, message) ->
                    val r = braid(*args)
                    r.status shouldBe 2
                    r.err shouldContain message
                    r.err shouldContain "Usage:"
                    r.err shouldContain "braid"
                }
            braid().status shouldBe 2
        }

        test("--help prints usage on stdout with status 0") {
            listOf(arrayOf("--help"), arrayOf("info", "-h"), arrayOf("pingpong", "-h"), arrayOf("demo", "--help"))
                .forEach { args ->
                    val r = braid(*args)
                    r.status shouldBe 0
                    r.out shouldContain "Usage:"
                }
        }

        test("info --config shows the policy of a link of several network rails and each rail's weight") {
            val r = braid("info", "--config", "config/two-rails.conf")
            withClue(r.err) { r.status shouldBe 0 }
            r.out shouldContain "link 'two-rails' (shm+tcp:lo+tcp:eth0), policy PER_PEER: "
            r.out shouldContain "    rail near (tcp:lo), weight 2: can open, domain lo"
            r.out shouldContain "    rail far (tcp:eth0), optional, weight 1: "
        }

        test("info --config prints the resolved topology: each link and rail, what this host can open and why not") {
            val r = braid("info", "--config", "config/optional-rail.conf")
            withClue(r.err) { r.status shouldBe 0 }
            r.out shouldContain "topology: config/optional-rail.conf\n"
            r.out shouldContain "link 'fast' (shm+cxi:cxi0), policy LOCALITY: can open (chosen)\n"
            r.out shouldContain "    rail shm (shm): can open, domain shm, inject "
            r.out shouldContain
                "    rail cxi0 (cxi:cxi0), optional: cannot open: no provider 'cxi' in this build (present: shm, tcp, ofi)\n"
            r.out shouldContain "opens as: provider link, domain shm,"
            val fallback = braid("info", "--config", "config/fallback.conf", "-v")
            fallback.status shouldBe 0
            fallback.out shouldContain
                "link 'shm+cxi:cxi0' (shm+cxi:cxi0), policy LOCALITY: cannot open: rail 'cxi' (cxi:cxi0) is not on this host"
            fallback.out shouldContain "link 'shm+tcp:lo' (shm+tcp:lo), policy LOCALITY: can open (chosen)"
            fallback.out shouldContain "---\nfi_info:\n"
            fallback.out shouldContain "    link_rail:"
        }

        test(
            "info --config with a broken file fails with the file, line, path and hint; with no openable link, with why"
        ) {
            val dir = java.nio.file.Files.createTempDirectory("braid-info")
            val bad =
                dir.resolve("bad.conf").also {
                    java.nio.file.Files.writeString(
                        it,
                        "links = [\n  { name = x, rails = [ { name = a, provider = tcp, wieght = 1 } ] }\n]\n",
                    )
                }
            val r = braid("info", "--config", "$bad")
            r.status shouldBe 1
            r.err shouldContain "$bad:2: links[0].rails[0].wieght: unknown key 'wieght'; did you mean 'weight'?"
            val none =
                dir.resolve("none.json").also {
                    java.nio.file.Files.writeString(it, "{\"links\": [\"shm+tcp:nope0\"]}")
                }
            val n = braid("info", "--config", "$none")
            n.status shouldBe 1
            n.out shouldContain
                "cannot open: rail 'tcp' (tcp:nope0) is not on this host: provider 'tcp' has no domain 'nope0' here"
            n.err shouldContain "no link of $none can be opened on this host"
            braid("info", "--config", "$none", "-p", "shm").status shouldBe 2
            braid("pingpong", "--config", "$none", "-p", "shm").let {
                it.status shouldBe 2
                it.err shouldContain "'-p' and '--config'"
            }
        }
    })
