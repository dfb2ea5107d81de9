package braid.mpi

import braid.core.Errno
import braid.core.FabricException
import braid.mpi.testing.CollectiveChecks
import braid.mpi.testing.runRanks
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

/** `MPI_Comm_free` and the collectives module: freeing a communicator closes its collectives group. */
class CommFreeTest :
    FunSpec({
        test(
            "MPI_Comm_free lets a nonblocking collective in flight end normally, then closes the communicator's collectives group"
        ) {
            runRanks(3) { mpi ->
                val dup = mpi.world.dup()
                val out = CollectiveChecks.buf(4)
                val req = dup.iallreduce(CollectiveChecks.intsOf(mpi.world.rank + 1), out, 1, Datatype.INT, Op.SUM)
                val group = dup.coll.group
                dup.free()
                req.waitFor()
                out.getInt(0) shouldBe 6
                group.isClosed shouldBe true
                val e = runCatching { group.startBarrier() }.exceptionOrNull() as FabricException
                e.code shouldBe Errno.EOPBADSTATE
                // The parent's group is untouched.
                val all = CollectiveChecks.buf(4)
                mpi.world.allreduce(CollectiveChecks.intsOf(1), all, 1, Datatype.INT, Op.SUM)
                all.getInt(0) shouldBe 3
            }
        }
    })
