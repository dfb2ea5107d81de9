package braid.dsl.it

import braid.testsupport.ChildProcess
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.file.Files
import java.nio.file.Path
import java.time.Duration

/** Two processes open the link a config file describes and exchange messages over it. */
class TopologyMultiProcessIT :
    FunSpec({
        /** A child JVM running [TopologyPeerMain] as [role] with the test class path; output to ROLE.log in [dir]. */
        fun peer(role: String, dir: Path, config: Path, env: Map<String, String>): ChildProcess =
            ChildProcess.jvm(TopologyPeerMain::class.java.name, role, "$dir", "$config")
                .name("peer $role")
                .jvmArgs("-Xmx256m", "-XX:MaxDirectMemorySize=256m")
                .withoutEnv {
                    it.startsWith("BRAID_")
                } // the environment layer must not pick up the test runner's own settings
                .env(env)
                .output(dir.resolve("$role.log"))
                .start()

        fun run(
            configText: String,
            name: String,
            env: (role: String, dir: Path) -> Map<String, String> = { _, _ -> emptyMap() },
        ): List<Pair<Int, String>> {
            val dir = Files.createTempDirectory("braid-topology-it")
            Files.writeString(dir.resolve("key"), "the job's key\n")
            val config = dir.resolve(name).also { Files.writeString(it, configText.replace("DIR", "$dir")) }
            val peers = listOf("first", "second").map { peer(it, dir, config, env(it, dir)) }
            try {
                return peers.map { it.awaitExit(Duration.ofSeconds(180)) to it.output() }
            } finally {
                peers.forEach { it.close() }
            }
        }

        test(
            "a HOCON file describing shm+tcp:lo: the two processes on this host exchange 2 × 140 checked messages, all over shm"
        ) {
            val results =
                run(
                    """
                    links = [ { name = local, rails = [ { name = shm, provider = shm, limits { eagerSize = 8 KiB } },
                                                        { name = net, provider = tcp, domain = lo } ],
                                limits { unexpectedLimit = 256 } } ]
                    jobKey { file = "DIR/key" }
                    """
                        .trimIndent(),
                    "topology.conf",
                )
            for ((status, out) in results) withClue(out) {
                status shouldBe 0
                out shouldContain "opened shm+tcp:lo: shm, tcp:lo"
                // Rails are counted under their identity, the topology's rail name (issue 26).
                out shouldContain "rails: shm=140/140 net=0/0"
                out shouldContain "OK"
            }
        }

        test(
            "a JSON file describing a tcp-only link: the messages cross tcp, authenticated by the job key the file names"
        ) {
            val results =
                run(
                    """{ "links": ["tcp:lo"], "jobKey": { "file": "DIR/key" }, "progress": { "model": "AUTO", "idle": { "kind": "YIELD" } } }""",
                    "topology.json",
                )
            for ((status, out) in results) withClue(out) {
                status shouldBe 0
                out shouldContain "rails: tcp=140/140"
            }
        }

        test(
            "the environment layer applies in each process: BRAID_LINKS overrides the file, and different job keys are refused"
        ) {
            val config = """{ "links": ["shm+tcp:lo"], "jobKey": { "env": "MY_KEY" } }"""
            val ok = run(config, "t.json") { _, _ -> mapOf("BRAID_LINKS" to "tcp:lo", "MY_KEY" to "same") }
            for ((status, out) in ok) withClue(out) {
                status shouldBe 0
                out shouldContain "rails: tcp=140/140"
            }
            val refused =
                run(config, "t.json") { role, _ -> mapOf("BRAID_LINKS" to "tcp:lo", "MY_KEY" to "key of $role") }
            val (status, out) = refused.first { it.second.contains("send 0 failed") }
            withClue(out) {
                status shouldBe 1
                out shouldContain "EACCES"
            }
        }
    })
