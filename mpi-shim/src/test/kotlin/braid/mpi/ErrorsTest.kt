package braid.mpi

import braid.mpi.testing.MemoryJob
import braid.mpi.testing.ints
import braid.mpi.testing.runRanks
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.nio.ByteBuffer

class ErrorsTest :
    FunSpec({
        test("bad calls raise MPIException with the class and a message naming the argument") {
            runRanks(2) { mpi ->
                val w = mpi.world
                fun expect(cls: Int, text: String, call: () -> Unit) {
                    val e = shouldThrow<MPIException> { call() }
                    e.errorClass shouldBe cls
                    e.message shouldContain text
                    e.message shouldContain ErrorClass.name(cls)
                }
                expect(ErrorClass.ERR_RANK, "rank 7 is out of range for communicator MPI_COMM_WORLD of size 2") {
                    w.send(ints(1), 1, Datatype.INT, 7, 0)
                }
                expect(ErrorClass.ERR_RANK, "source rank -9") {
                    w.irecv(ByteBuffer.allocate(4), 1, Datatype.INT, -9, 0)
                }
                expect(ErrorClass.ERR_COUNT, "count is -1") { w.isend(ints(1), -1, Datatype.INT, 0, 0) }
                expect(ErrorClass.ERR_TAG, "tag -5") { w.isend(ints(1), 1, Datatype.INT, 0, -5) }
                expect(ErrorClass.ERR_TAG, "tag ${Mpi.TAG_UB + 1}") {
                    w.isend(ints(1), 1, Datatype.INT, 0, Mpi.TAG_UB + 1)
                }
                expect(ErrorClass.ERR_BUFFER, "needs bytes [0, 12) but the buffer holds 8") {
                    w.isend(ByteBuffer.allocate(8), 3, Datatype.INT, 0, 0)
                }
                expect(ErrorClass.ERR_BUFFER, "read-only") {
                    w.irecv(ByteBuffer.allocate(8).asReadOnlyBuffer(), 1, Datatype.INT, 0, 0)
                }
                expect(ErrorClass.ERR_TYPE, "not committed") {
                    w.isend(ByteBuffer.allocate(64), 1, Datatype.vector(2, 1, 2, Datatype.INT), 0, 0)
                }
                val d = w.dup()
                d.setErrhandler(ErrorHandler.ERRORS_RETURN)
                d.free()
                expect(ErrorClass.ERR_COMM, "communicator dup(MPI_COMM_WORLD) has been freed") {
                    d.send(ints(1), 1, Datatype.INT, 0, 0)
                }
                expect(ErrorClass.ERR_COMM, "cannot be freed") { w.free() }
                expect(ErrorClass.ERR_ARG, "not a predefined attribute") { w.getAttr(99) }
                expect(ErrorClass.ERR_REQUEST, "already active") {
                    val p = w.recvInit(ByteBuffer.allocate(4), 1, Datatype.INT, Mpi.PROC_NULL, 0)
                    p.start()
                    p.start()
                }
                // Still usable after all of that.
                w.barrier()
            }
        }

        test(
            "a user error handler sees the code first; ERRORS_ARE_FATAL aborts the job through the bootstrap with the class as exit code"
        ) {
            runRanks(1) { mpi ->
                val seen = ArrayList<Int>()
                mpi.world.setErrhandler(
                    ErrorHandler.create { comm, code, msg ->
                        seen += code
                        msg shouldContain comm.getName()
                    }
                )
                shouldThrow<MPIException> { mpi.world.send(ints(1), 1, Datatype.INT, 3, 0) }
                seen shouldBe listOf(ErrorClass.ERR_RANK)
                mpi.world.setErrhandler(ErrorHandler.ERRORS_ARE_FATAL)
                val a = shouldThrow<MemoryJob.Aborted> { mpi.world.send(ints(1), 1, Datatype.INT, 0, -1) }
                a.exitCode shouldBe ErrorClass.ERR_TAG
                a.message shouldContain "tag -1"
                mpi.world.setErrhandler(ErrorHandler.ERRORS_RETURN)
            }
        }

        test(
            "user-defined error classes and codes carry their strings; environment attributes report what the bootstrap says"
        ) {
            val cls = ErrorClass.addErrorClass()
            val code = ErrorClass.addErrorCode(cls)
            ErrorClass.addErrorString(code, "the frobnicator jammed")
            ErrorClass.classOf(code) shouldBe cls
            ErrorClass.errorString(code) shouldBe "the frobnicator jammed"
            shouldThrow<MPIException> { ErrorClass.addErrorCode(ErrorClass.ERR_RANK) }.errorClass shouldBe
                ErrorClass.ERR_ARG
            runRanks(2) { mpi ->
                mpi.world.getAttr(Comm.TAG_UB) shouldBe Mpi.TAG_UB
                mpi.world.getAttr(Comm.UNIVERSE_SIZE) shouldBe 4
                mpi.world.getAttr(Comm.APPNUM) shouldBe 3
                mpi.threadLevel shouldBe ThreadLevel.MULTIPLE
                Mpi.isInitialized() shouldBe true
                (Mpi.wtick() > 0) shouldBe true
                mpi.processorName().isNotEmpty() shouldBe true
                mpi.finalized shouldBe false
            }
        }

        test("a send to a rank whose process has ended fails naming that rank and the communicator") {
            val job = MemoryJob(2)
            val starting =
                java.util.concurrent.CompletableFuture.supplyAsync {
                    Mpi.init(job.rank(1), ThreadLevel.MULTIPLE, MpiOptions().provider("tcp"))
                }
            val zero = Mpi.init(job.rank(0), ThreadLevel.MULTIPLE, MpiOptions().provider("tcp"))
            val one = starting.get(60, java.util.concurrent.TimeUnit.SECONDS)
            zero.use {
                zero.world.setErrhandler(ErrorHandler.ERRORS_RETURN)
                one.finalizeMpi()
                val e = shouldThrow<MPIException> { zero.world.send(ints(1, 2), 2, Datatype.INT, 1, 0) }
                e.message shouldContain "rank 1 of MPI_COMM_WORLD"
            }
        }

        test("an operation the endpoint refuses names the rank and the communicator it was for") {
            runRanks(1) { mpi ->
                val op = mpi.takeSend().set(mpi.world, mpi.world.destAddr[0], 0, 0)
                op.failPost(-braid.core.Errno.ECONNREFUSED)
                val e = shouldThrow<MPIException> { op.waitFor() }
                e.message shouldContain "the endpoint refused the send to rank 0 of MPI_COMM_WORLD: ECONNREFUSED"
            }
        }
    })
