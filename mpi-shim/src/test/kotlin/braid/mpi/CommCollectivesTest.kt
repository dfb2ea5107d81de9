package braid.mpi

import braid.mpi.testing.CollectiveChecks
import braid.mpi.testing.runRanks
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.shouldBe

class CommCollectivesTest :
    FunSpec({
        for (n in listOf(1, 3, 4)) {
            test(
                "every collective on a world of $n matches the reference, blocking and nonblocking, with derived types, in place and user ops"
            ) {
                runRanks(n, seconds = 120) { mpi -> CollectiveChecks.runAll(mpi.world) shouldBeGreaterThan 24 }
            }
        }

        test(
            "intercommunicator collectives between groups of 1 and 4 (rooted ones both ways, v-forms, reduce-scatters, user ops) match a reference; and collectives on the halves"
        ) {
            runRanks(5, seconds = 120) { mpi -> CollectiveChecks.runEverything(mpi.world) shouldBeGreaterThan 55 }
        }

        test(
            "communicators built on the collectives module: split by colour, dup and create agree context ids, and their collectives never meet the parent's"
        ) {
            runRanks(4) { mpi ->
                val w = mpi.world
                val odd = w.split(w.rank % 2, 0)!!
                val dup = w.dup()
                val out1 = CollectiveChecks.buf(4)
                val out2 = CollectiveChecks.buf(4)
                val out3 = CollectiveChecks.buf(4)
                // Three allreduces in flight on three communicators over overlapping ranks.
                val reqs =
                    arrayOf(
                        w.iallreduce(CollectiveChecks.intsOf(1), out1, 1, Datatype.INT, Op.SUM),
                        odd.iallreduce(CollectiveChecks.intsOf(w.rank), out2, 1, Datatype.INT, Op.SUM),
                        dup.iallreduce(CollectiveChecks.intsOf(10), out3, 1, Datatype.INT, Op.SUM),
                    )
                Request.waitAll(reqs)
                out1.getInt(0) shouldBe 4
                out2.getInt(0) shouldBe (if (w.rank % 2 == 0) 0 + 2 else 1 + 3)
                out3.getInt(0) shouldBe 40
                (odd.context != dup.context) shouldBe true
                odd.free()
                dup.free()
            }
        }

        test("a nonblocking collective cannot be cancelled: MPI_ERR_REQUEST, and it still completes") {
            runRanks(2) { mpi ->
                val r = mpi.world.ibarrier()
                val e = runCatching { r.cancel() }.exceptionOrNull() as MPIException
                e.errorClass shouldBe ErrorClass.ERR_REQUEST
                r.waitFor()
            }
        }
    })
