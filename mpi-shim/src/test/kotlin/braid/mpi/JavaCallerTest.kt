package braid.mpi

import braid.mpi.javaapi.JavaCaller
import braid.mpi.testing.runRanks
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.util.concurrent.ConcurrentHashMap

class JavaCallerTest :
    FunSpec({
        test("a Java program uses communicators, datatypes, probes, persistent requests, ops and errors") {
            val out = ConcurrentHashMap<Int, String>()
            runRanks(2) { mpi -> out[mpi.world.rank] = JavaCaller.run(mpi) }
            out[1] shouldBe "got 3 from 0: 0,2,4;split size 1 rank 0;sum 11,22;MPI_ERR_RANK;tag_ub ${Mpi.TAG_UB}"
            out[0] shouldBe "split size 1 rank 0;sum 11,22;MPI_ERR_RANK;tag_ub ${Mpi.TAG_UB}"
        }
    })
