package braid.mpi

import braid.mpi.testing.runRanks
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.nio.ByteBuffer

class MpiOptionsTest :
    FunSpec({
        test(
            "an MPI process's shm endpoint sends up to 64 KiB eagerly, and a 64 KiB message arrives whole before its receive is posted"
        ) {
            if (System.getenv("BRAID_SHM_EAGER_SIZE") == null) {
                runRanks(2) { mpi ->
                    mpi.ep.info.endpointAttr.eagerSize shouldBe MpiOptions.DEFAULT_SHM_EAGER_SIZE
                    val w = mpi.world
                    val n = MpiOptions.DEFAULT_SHM_EAGER_SIZE
                    if (w.rank == 0) {
                        val b = ByteBuffer.allocateDirect(n)
                        for (i in 0 until n) b.put(i, (i * 7).toByte())
                        w.send(b, n, Datatype.BYTE, 1, 3) // eager: completes with no receive posted yet
                        w.send(b, 0, Datatype.BYTE, 1, 4)
                    } else {
                        w.probe(0, 4) // both messages are here before any receive
                        val b = ByteBuffer.allocateDirect(n)
                        w.recv(b, n, Datatype.BYTE, 0, 3).getCount(Datatype.BYTE) shouldBe n
                        for (i in 0 until n) if (b.get(i) != (i * 7).toByte()) error("byte $i differs")
                        w.recv(b, 0, Datatype.BYTE, 0, 4)
                    }
                }
            }
        }

        test("MpiOptions.shmEagerSize sets the shm eager limit") {
            val job = braid.mpi.testing.MemoryJob(1)
            Mpi.init(job.rank(0), options = MpiOptions().provider("shm").shmEagerSize(4096)).use { mpi ->
                mpi.ep.info.endpointAttr.eagerSize shouldBe 4096
            }
        }
    })
