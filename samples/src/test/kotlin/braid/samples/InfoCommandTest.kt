package braid.samples

import braid.core.Braid
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain

/** `braid info`'s settings views (`-v`, `-e`) and fi_info's filters (`-p -d -f -t -c`). */
class InfoCommandTest :
    FunSpec({
        test("-e lists every BRAID_* variable with its current value, default and meaning") {
            val r = braid("info", "-e")
            r.status shouldBe 0
            for (p in Braid.parameters()) {
                withClue(p.env) {
                    r.out shouldContain "# ${p.env}: "
                    r.out shouldContain "${p.key}\n# ${p.help}\n#     default: ${p.render(p.default)}; current: "
                }
            }
            r.out shouldContain "# BRAID_SHM_RING_SIZE: size (bytes), shm.ring_size"
            r.out shouldContain "# BRAID_UNEXPECTED_LIMIT: int (messages), core.unexpected_limit"
            // -p keeps Braid's own variables and that provider's.
            braid("info", "-e", "-p", "tcp").out.let {
                it shouldContain "BRAID_TCP_TIMEOUT_MS"
                it shouldContain "BRAID_JOB_KEY"
                it shouldNotContain "BRAID_SHM_RING_SIZE"
            }
        }

        test("-v lists the provider's parameters with their current values and sources; a link lists its rails' too") {
            val shm = braid("info", "-v", "-p", "shm").out
            shm shouldContain "    parameters:\n"
            shm shouldContain "        shm.ring_size: "
            listOf(
                    "core.job_key: <",
                    "core.unexpected_limit: ",
                    "shm.eager_size: ",
                    "shm.dir: ",
                    "shm.cma: ",
                    "shm.pull_size: ",
                    "shm.share_size: ",
                    "shm.share_chunk: ",
                    "shm.frag_size: ",
                    "shm.liveness_ms: ",
                )
                .forEach { shm shouldContain it }
            shm shouldContain "unexpected_limit: " // the bound, in the attributes too
            val link = braid("info", "-v", "-p", "link", "-d", "shm+tcp:lo").out
            listOf(
                    "link.links: ",
                    "link.disable_shm: ",
                    "link.use_srq: ",
                    "link.dump_stats: ",
                    "shm.ring_size: ",
                    "tcp.timeout_ms: ",
                    "tcp.window: ",
                    "tcp.buffer_size: ",
                )
                .forEach { withClue(it) { link shouldContain it } }
            link shouldContain "(default)"
        }

        test(
            "-e and -v list every module's parameters, each with where its value came from; -e -p keeps core's and the provider's"
        ) {
            val modules =
                listOf(
                    "BRAID_MPI_PROVIDER",
                    "BRAID_MPI_LINK",
                    "BRAID_MPI_SPIN_POLLS",
                    "BRAID_MPI_YIELD_POLLS",
                    "BRAID_MPI_NAME_DIR",
                    "BRAID_BOOTSTRAP",
                    "BRAID_PMI_VERSION",
                    "BRAID_ADDRESS_DIR",
                    "BRAID_PMIX_LIBRARY",
                    "BRAID_COLL_ALLREDUCE",
                    "BRAID_COLL_BARRIER",
                    "BRAID_COLL_ALLREDUCE_RD_MAX",
                    "BRAID_JAVA_OPTS",
                )
            val e = braid("info", "-e").out
            modules.forEach { withClue(it) { e shouldContain "# $it: " } }
            e shouldContain "# BRAID_MPI_SPIN_POLLS: int (polls), mpi.spin_polls\n"
            e shouldContain "# read by bin/braid (the shell script), not by Java"
            e shouldContain
                "mpi.provider\n# the provider MPI_Init opens: auto (shm when every rank is on this host, else the link)"
            e shouldContain "#     default: 'auto'; current: "
            val tcp = braid("info", "-e", "-p", "tcp").out
            listOf("BRAID_MPI_PROVIDER", "BRAID_COLL_ALLREDUCE", "BRAID_SHM_RING_SIZE").forEach {
                withClue(it) { tcp shouldNotContain it }
            }
            braid("info", "-e", "-p", "nic").let {
                it.status shouldBe 2
                it.err shouldContain "no provider 'nic' (known: shm, tcp, link, ofi)"
            }
            val v = braid("info", "-v", "-p", "shm").out.substringAfterLast("---\n")
            v shouldContain "modules:\n    parameters:\n"
            listOf(
                    "mpi.provider: ",
                    "mpi.spin_polls: ",
                    "bootstrap.kind: ",
                    "bootstrap.address_dir: ",
                    "coll.allreduce: ",
                )
                .plus("braid.java_opts: ")
                .forEach { withClue(it) { v shouldContain it } }
        }

        test("fi_info's filters: -d domain, -f fabric, -t endpoint type, -c capabilities") {
            braid("info", "-p", "tcp", "-d", "lo").out.let {
                it shouldContain "domain: lo\n"
                it.split("provider: ").size shouldBe 2
            }
            val lo = braid("info", "-p", "tcp", "-d", "lo").out.substringAfter("fabric: ").substringBefore('\n')
            braid("info", "-f", lo).out shouldContain "fabric: $lo\n"
            braid("info", "-f", "no-such-fabric").let {
                it.status shouldBe 1
                it.err shouldContain "no-such-fabric"
            }
            braid("info", "-t", "FI_EP_RDM", "-p", "shm").status shouldBe 0
            braid("info", "-t", "FI_EP_MSG").let {
                it.status shouldBe 1
                it.err shouldContain "endpoint type"
            }
            braid("info", "-c", "FI_MSG|FI_TAGGED", "-p", "shm").out shouldContain "provider: shm"
            braid("info", "-c", "FI_BOGUS").let {
                it.status shouldBe 2
                it.err shouldContain "unknown capability 'FI_BOGUS'"
            }
            braid("info", "-t", "FI_EP_NOPE").let {
                it.status shouldBe 2
                it.err shouldContain "unknown endpoint type"
            }
        }

        test("info --config -v: a topology's link reports the RMA and atomics its rails carry (it is granted them)") {
            val r = braid("info", "--config", "config/local.conf", "-v")
            withClue(r.err) { r.status shouldBe 0 }
            val caps = r.out.lines().first { it.trim().startsWith("caps:") }
            caps shouldContain "FI_RMA"
            caps shouldContain "FI_ATOMIC"
        }
    })
