package braid.mpi.ompi

import braid.bootstrap.Launcher
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.doubles.shouldBeLessThan
import io.kotest.matchers.shouldBe
import java.io.File
import java.nio.file.Files
import java.time.Duration
import kotlin.time.Duration.Companion.minutes

/**
 * Once warm, the `mpi` package adds no allocation of its own to point-to-point: [FacadeHotPath] runs a 2-rank ping-pong
 * under `braid run` through blocking `send`/`recv` with `byte[]`, `int[]` and direct buffers and through
 * `iSend`/`iRecv` + `waitFor`, eager (64 B, 64 KiB) and rendezvous (256 KiB), and reports each rank's allocated bytes
 * per round (the least of three counted windows, from the JVM's per-thread counter). A round may allocate only what
 * Open MPI's API hands back, as Open MPI's own bindings do: the [mpi.Status] a `recv` returns (40 bytes) and the two
 * [mpi.Request]s of `iSend` and `iRecv` (24 bytes each). No staging record, view, braid.mpi status, lambda or request
 * array per call (before this spec, a round cost 144 bytes with direct buffers and 384 with `int[]`).
 */
class OmpiHotPathAllocationTest :
    FunSpec({
        val dir = Files.createTempDirectory("braid-ompi-alloc").toFile()
        afterSpec { dir.deleteRecursively() }

        // Two JVMs warming up four loops: minutes on a machine busy with other builds.
        test("a warm ping-pong through the mpi package allocates only the Status and Requests the API returns").config(
            timeout = 10.minutes
        ) {
            val log = File(dir, "facade-hot-path.log")
            val (code, out) =
                braid.bootstrap.job(Launcher.BRAID_RUN, 2, emptyList(), log, "braid.mpi.ompi.FacadeHotPath").use { job
                    ->
                    job.awaitExit(Duration.ofSeconds(540)) to job.output()
                }
            withClue(out) {
                code shouldBe 0
                val lines =
                    Regex("alloc (\\S+) (\\d+) ([0-9.]+) rank (\\d)").findAll(out).map { it.groupValues }.toList()
                val budget =
                    mapOf(
                        "blocking-byte[]" to 40.0,
                        "blocking-int[]" to 40.0,
                        "blocking-direct" to 40.0,
                        "nonblocking-direct" to 48.0,
                    )
                lines.size shouldBe budget.size * 3 * 2 // every mode, size and rank reported
                for ((_, mode, size, bytes, rank) in lines) withClue("$mode, $size B, rank $rank") {
                    // An object allocated every round is 16 bytes at least; less than 8 over the budget is a one-off
                    // in the window (a pool growing, the JIT's bookkeeping), not a per-call allocation.
                    bytes.toDouble() shouldBeLessThan budget.getValue(mode) + 8
                }
            }
        }
    })
