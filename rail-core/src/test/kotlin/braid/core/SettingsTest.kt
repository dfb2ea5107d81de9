package braid.core

import braid.provider.link.LinkParams
import braid.provider.shm.ShmParams
import braid.provider.tcp.TcpParams
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain

/**
 * The settings layer: every parameter declared once, resolved with its source, validated with a message that names it,
 * its value and the fix.
 */
class SettingsTest :
    FunSpec({
        val none = Settings.ofEnvironment(emptyMap())

        test("precedence: the default, then the environment, then a file or the API, the last one set winning") {
            none.resolve(TcpParams.TIMEOUT_MS).let {
                it.value shouldBe 5000L
                it.source shouldBe ParamSource.DEFAULT
                it.origin shouldBe "default"
            }
            val env = Settings.ofEnvironment(mapOf("BRAID_TCP_TIMEOUT_MS" to "700"))
            env.resolve(TcpParams.TIMEOUT_MS).let {
                it.value shouldBe 700L
                it.source shouldBe ParamSource.ENVIRONMENT
                it.origin shouldBe "environment BRAID_TCP_TIMEOUT_MS"
            }
            val file = env.withText(TcpParams.TIMEOUT_MS, "800", ParamSource.FILE, "local.conf:4")
            file.resolve(TcpParams.TIMEOUT_MS).let {
                it.value shouldBe 800L
                it.source shouldBe ParamSource.FILE
                it.origin shouldBe "local.conf:4"
            }
            val api = file.with(TcpParams.TIMEOUT_MS, 900L)
            api.resolve(TcpParams.TIMEOUT_MS).let {
                it.value shouldBe 900L
                it.source shouldBe ParamSource.API
            }
            // A later file layer over the API value wins again: the last one set.
            api.withText(TcpParams.TIMEOUT_MS, "1000", ParamSource.FILE, "b.conf:1")[TcpParams.TIMEOUT_MS] shouldBe
                1000L
            // overlay: the values the upper one sets, over the lower one's; the rest stays.
            val lower = none.with(ShmParams.EAGER_SIZE, 2048).with(TcpParams.TIMEOUT_MS, 100L)
            val merged = lower.overlay(none.with(TcpParams.TIMEOUT_MS, 200L))
            merged[TcpParams.TIMEOUT_MS] shouldBe 200L
            merged[ShmParams.EAGER_SIZE] shouldBe 2048
            // Blank variables count as unset.
            Settings.ofEnvironment(mapOf("BRAID_SHM_DIR" to " ")).resolve(ShmParams.DIR).source shouldBe
                ParamSource.DEFAULT
        }

        test("values parse as their type: sizes as 64k or 4 MiB, flags as 1/0, yes/no, true/false, on/off") {
            Settings.ofEnvironment(mapOf("BRAID_SHM_RING_SIZE" to "64k"))[ShmParams.RING_SIZE] shouldBe 65536
            Settings.ofEnvironment(mapOf("BRAID_SHM_RING_SIZE" to "4 MiB"))[ShmParams.RING_SIZE] shouldBe (4 shl 20)
            for ((text, value) in
                listOf(
                    "1" to true,
                    "yes" to true,
                    "TRUE" to true,
                    "on" to true,
                    "0" to false,
                    "no" to false,
                    "off" to false,
                )) {
                withClue(text) {
                    Settings.ofEnvironment(mapOf("BRAID_LINK_DISABLE_SHM" to text))[LinkParams.DISABLE_SHM] shouldBe
                        value
                }
            }
        }

        data class Case(val env: String, val value: String, val param: Param<*>, val problem: String, val fix: String)

        val cases =
            listOf(
                Case(
                    "BRAID_SHM_RING_SIZE",
                    "3000",
                    ShmParams.RING_SIZE,
                    "is not a power of two ≥ 1 KiB",
                    "use a power of two such as 2 KiB",
                ),
                Case(
                    "BRAID_SHM_RING_SIZE",
                    "lots",
                    ShmParams.RING_SIZE,
                    "is not an integer or a size",
                    "write a number of bytes",
                ),
                Case(
                    "BRAID_SHM_EAGER_SIZE",
                    "-1",
                    ShmParams.EAGER_SIZE,
                    "is not an integer or a size",
                    "write a number of bytes",
                ),
                Case("BRAID_SHM_CMA", "maybe", ShmParams.CMA, "must be 0 or 1", "write 1 or 0"),
                Case(
                    "BRAID_SHM_LIVENESS_MS",
                    "0",
                    ShmParams.LIVENESS_MS,
                    "is below 1 ms",
                    "set BRAID_SHM_LIVENESS_MS ≥ 1",
                ),
                Case(
                    "BRAID_TCP_BUFFER_SIZE",
                    "1024",
                    TcpParams.BUFFER_SIZE,
                    "is below tcp's smallest connection buffer 4 KiB",
                    "set BRAID_TCP_BUFFER_SIZE ≥ 4 KiB",
                ),
                Case(
                    "BRAID_TCP_WINDOW",
                    "100",
                    TcpParams.WINDOW,
                    "is below the minimum window 64 KiB",
                    "set BRAID_TCP_WINDOW ≥ 64 KiB",
                ),
                Case(
                    "BRAID_TCP_TIMEOUT_MS",
                    "5",
                    TcpParams.TIMEOUT_MS,
                    "is below 10 ms",
                    "set BRAID_TCP_TIMEOUT_MS ≥ 10",
                ),
                Case(
                    "BRAID_TCP_TIMEOUT_MS",
                    "soon",
                    TcpParams.TIMEOUT_MS,
                    "is not an integer",
                    "write a whole number of ms",
                ),
                Case(
                    "BRAID_TCP_EAGER_SIZE",
                    "x",
                    TcpParams.EAGER_SIZE,
                    "is not an integer or a size",
                    "write a number of bytes",
                ),
                Case("BRAID_LINK_USE_SRQ", "2", LinkParams.USE_SRQ, "must be 0 or 1", "write 1 or 0"),
                Case("BRAID_LINK_DUMP_STATS", "x", LinkParams.DUMP_STATS, "must be 0 or 1", "write 1 or 0"),
                Case(
                    "BRAID_UNEXPECTED_LIMIT",
                    "0",
                    CoreParams.UNEXPECTED_LIMIT,
                    "is below 1 message",
                    "set BRAID_UNEXPECTED_LIMIT ≥ 1",
                ),
            )

        for (c in cases) {
            test("rule: ${c.env}='${c.value}' is refused naming the variable, the parameter, the value and the fix") {
                val e = shouldThrow<SettingsException> { Settings.ofEnvironment(mapOf(c.env to c.value))[c.param] }
                e.code shouldBe Errno.EINVAL
                val p = e.problems.single()
                p.param shouldBe c.param
                p.source shouldBe ParamSource.ENVIRONMENT
                e.message!! shouldContain "environment ${c.env}='${c.value}': ${c.param.key} ${c.problem}"
                e.message!! shouldContain c.fix
            }
        }

        test(
            "a value set through the API or a file is checked by the same rule, its message naming the parameter's key and origin"
        ) {
            shouldThrow<SettingsException> { none.with(ShmParams.RING_SIZE, 1000)[ShmParams.RING_SIZE] }
                .message!! shouldBe
                "setting shm.ring_size = '1000' (API) is not a power of two ≥ 1 KiB; use a power of two such as 1 KiB [EINVAL]"
            shouldThrow<SettingsException> {
                    none.withText(TcpParams.WINDOW, "1k", ParamSource.FILE, "local.conf:7")[TcpParams.WINDOW]
                }
                .message!! shouldContain
                "local.conf:7: tcp.window '1k' is below the minimum window 64 KiB; set tcp.window ≥ 64 KiB"
        }

        test("check reports every broken parameter at once, and getInfo refuses a provider whose settings are broken") {
            val bad =
                Settings.ofEnvironment(
                    mapOf(
                        "BRAID_SHM_RING_SIZE" to "1000",
                        "BRAID_SHM_LIVENESS_MS" to "-4",
                        "BRAID_SHM_EAGER_SIZE" to "8k",
                    )
                )
            bad.problems(ShmParams.ALL).map { it.param } shouldBe listOf(ShmParams.RING_SIZE, ShmParams.LIVENESS_MS)
            val e = shouldThrow<SettingsException> { bad.check(ShmParams.ALL) }
            e.problems shouldHaveSize 2
            e.message!! shouldContain "2 settings cannot be used"
            shouldThrow<SettingsException> { Braid.getInfo(Hints(provider = "shm", settings = bad)) }
                .problems shouldHaveSize 2
            // Without a provider named, shm is refused with its reasons and the others still answer (the
            // native rail too, where libfabric is installed: shm's settings are not its own).
            Braid.getInfo(Hints(settings = bad)).map { it.provider }.toSet() - "ofi" shouldBe setOf("tcp")
        }

        test(
            "settings travel from the hints into every Info and its rails; Info.with sets a parameter for a link and each rail"
        ) {
            val s = none.with(TcpParams.BUFFER_SIZE, 1 shl 16).with(ShmParams.EAGER_SIZE, 4096)
            val shm = Braid.getInfo(Hints(provider = "shm", settings = s)).single()
            shm.settings shouldBe s
            shm.endpointAttr.eagerSize shouldBe 4096
            val link =
                Braid.getInfo(Hints(provider = "link", settings = s).with(LinkParams.LINKS, "shm+tcp:lo")).single()
            link.rails.forEach { it.settings[TcpParams.BUFFER_SIZE] shouldBe (1 shl 16) }
            val tuned = link.with(ShmParams.RING_SIZE, 1 shl 14)
            (listOf(tuned) + tuned.rails).forEach { it.settings[ShmParams.RING_SIZE] shouldBe (1 shl 14) }
        }

        test(
            "progress and idle: BRAID_PROGRESS, BRAID_IDLE and BRAID_IDLE_MAX_PARK_NS set the domain attributes offered; hints still override"
        ) {
            val env =
                Settings.ofEnvironment(
                    mapOf("BRAID_PROGRESS" to "auto", "BRAID_IDLE" to "BACKOFF", "BRAID_IDLE_MAX_PARK_NS" to "2000000")
                )
            for (provider in listOf("shm", "tcp", "link")) {
                withClue(provider) {
                    val info = Braid.getInfo(Hints(provider = provider, settings = env)).first()
                    info.domainAttr.progress shouldBe ProgressModel.AUTO
                    info.domainAttr.idle.maxParkNanos shouldBe 2_000_000L
                }
            }
            Braid.getInfo(Hints(provider = "shm", progress = ProgressModel.MANUAL, settings = env))
                .single()
                .domainAttr
                .progress shouldBe ProgressModel.MANUAL
            Braid.getInfo(Hints(provider = "shm", settings = none)).single().domainAttr shouldBe DomainAttr()
            shouldThrow<SettingsException> {
                    Braid.getInfo(
                        Hints(provider = "shm", settings = Settings.ofEnvironment(mapOf("BRAID_IDLE" to "NAP")))
                    )
                }
                .message!! shouldContain
                "environment BRAID_IDLE='NAP': core.idle is not one of SPIN, YIELD, BACKOFF; set BRAID_IDLE to one of SPIN, YIELD, BACKOFF"
            shouldThrow<SettingsException> {
                    Settings.ofEnvironment(mapOf("BRAID_IDLE_MAX_PARK_NS" to "10"))[CoreParams.IDLE_MAX_PARK_NS]
                }
                .message!! shouldContain "is below 1000 ns"
        }

        test("the job key is never printed: not by Settings, Info, Hints, a problem or braid info's rendering") {
            val s = none.with(CoreParams.JOB_KEY, "s3cret")
            s.toString() shouldNotContain "s3cret"
            Hints(settings = s).toString() shouldNotContain "s3cret"
            Braid.getInfo(Hints(provider = "shm", settings = s)).single().toString() shouldNotContain "s3cret"
            s.resolve(CoreParams.JOB_KEY).render() shouldBe "<set>"
            none.resolve(CoreParams.JOB_KEY).render() shouldBe "<empty>"
        }

        test("Braid.parameters lists every parameter once: core, shm, tcp and link, each with its variable and help") {
            val all = Braid.parameters()
            all.map { it.key }.toSet() shouldHaveSize all.size
            all shouldContainAll CoreParams.ALL + ShmParams.ALL + TcpParams.ALL + LinkParams.ALL
            all.map { it.env }.toSet() shouldContainAll
                listOf(
                    "BRAID_JOB_KEY",
                    "BRAID_HOST_ID",
                    "BRAID_UNEXPECTED_LIMIT",
                    "BRAID_PROGRESS",
                    "BRAID_IDLE",
                    "BRAID_IDLE_MAX_PARK_NS",
                    "BRAID_SHM_RING_SIZE",
                    "BRAID_SHM_EAGER_SIZE",
                    "BRAID_SHM_DIR",
                    "BRAID_SHM_CMA",
                    "BRAID_SHM_PULL_SIZE",
                    "BRAID_SHM_SHARE_SIZE",
                    "BRAID_SHM_SHARE_CHUNK",
                    "BRAID_SHM_FRAG_SIZE",
                    "BRAID_SHM_LIVENESS_MS",
                    "BRAID_TCP_EAGER_SIZE",
                    "BRAID_TCP_BUFFER_SIZE",
                    "BRAID_TCP_WINDOW",
                    "BRAID_TCP_TIMEOUT_MS",
                    "BRAID_TCP_ADDR",
                    "BRAID_TCP_IFACE",
                    "BRAID_LINKS",
                    "BRAID_LINK_DISABLE_SHM",
                    "BRAID_LINK_USE_SRQ",
                    "BRAID_LINK_DUMP_STATS",
                )
            all.forEach { withClue(it.key) { it.help.isNotBlank() shouldBe true } }
        }

        test(
            "a rail's limits are asked of the registry by role, not by provider name; Settings.NONE ignores the environment"
        ) {
            Braid.limitParameter("shm", RailLimit.EAGER_SIZE) shouldBe ShmParams.EAGER_SIZE
            Braid.limitParameter("shm", RailLimit.RING_CAPACITY) shouldBe ShmParams.RING_SIZE
            Braid.limitParameter("tcp", RailLimit.EAGER_SIZE) shouldBe TcpParams.EAGER_SIZE
            Braid.limitParameter("tcp", RailLimit.RING_CAPACITY) shouldBe TcpParams.BUFFER_SIZE
            Braid.limitParameter("link", RailLimit.EAGER_SIZE) shouldBe null
            Braid.limitParameter("no-such-provider", RailLimit.EAGER_SIZE) shouldBe null
            Braid.parameter("tcp.timeout_ms") shouldBe TcpParams.TIMEOUT_MS
            Braid.parameter("tcp.no_such") shouldBe null
            Settings.NONE.environmentValue("PATH") shouldBe null
            Settings.NONE.resolve(TcpParams.IFACE).source shouldBe ParamSource.DEFAULT
        }
    })
