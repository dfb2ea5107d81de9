package braid.mpi

import braid.mpi.testing.intAt
import braid.mpi.testing.ints
import braid.mpi.testing.runRanks
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.nio.ByteBuffer

class TopologyTest :
    FunSpec({
        test(
            "createDims fills the free dimensions with a balanced, non-increasing factorisation and keeps fixed ones"
        ) {
            IntArray(2).also { CartTopology.createDims(12, it) }.toList() shouldBe listOf(4, 3)
            IntArray(3).also { CartTopology.createDims(8, it) }.toList() shouldBe listOf(2, 2, 2)
            intArrayOf(0, 3, 0).also { CartTopology.createDims(30, it) }.toList() shouldBe listOf(5, 3, 2)
            IntArray(2).also { CartTopology.createDims(7, it) }.toList() shouldBe listOf(7, 1)
            shouldThrow<MPIException> { CartTopology.createDims(10, intArrayOf(3, 0)) }.errorClass shouldBe
                ErrorClass.ERR_DIMS
        }

        test(
            "a Cartesian grid maps ranks and coordinates row-major, wraps periodic dimensions, and shifts to PROC_NULL off an edge"
        ) {
            val t = CartTopology(intArrayOf(3, 4), booleanArrayOf(true, false))
            t.coords(7).toList() shouldBe listOf(1, 3)
            t.rank(intArrayOf(1, 3)) shouldBe 7
            t.rank(intArrayOf(-1, 0)) shouldBe 8 // wraps in the periodic dimension
            shouldThrow<MPIException> { t.rank(intArrayOf(0, 4)) }.errorClass shouldBe ErrorClass.ERR_ARG
            t.shift(7, 0, 1).toList() shouldBe listOf(3, 11)
            t.shift(7, 1, 1).toList() shouldBe listOf(6, Mpi.PROC_NULL)
            t.sources(0).toList() shouldBe listOf(8, 4, Mpi.PROC_NULL, 1)
            t.sub(booleanArrayOf(false, true)).getDims().toList() shouldBe listOf(4)
        }

        test("a graph names each node's neighbors from its index and edges, and refuses edges to nodes it lacks") {
            val g = GraphTopology(intArrayOf(2, 3, 4), intArrayOf(1, 2, 0, 0))
            g.neighbors(0).toList() shouldBe listOf(1, 2)
            g.neighbors(2).toList() shouldBe listOf(0)
            shouldThrow<MPIException> { GraphTopology(intArrayOf(1), intArrayOf(5)) }.errorClass shouldBe
                ErrorClass.ERR_RANK
        }

        test("createCart, cartSub and the neighbor collectives on a periodic 2x2 grid, blocking and not") {
            runRanks(4) { mpi ->
                val w = mpi.world
                val cart = w.createCart(intArrayOf(2, 2), booleanArrayOf(true, true))!!
                val t = cart.getTopology() as CartTopology
                val recv = ByteBuffer.allocateDirect(16) // big-endian, as ints() writes
                cart.neighborAllgather(ints(w.rank), 1, Datatype.INT, recv, 1, Datatype.INT)
                val nb = t.sources(w.rank)
                for (k in 0 until 4) recv.intAt(k) shouldBe nb[k]
                // In a periodic dimension of 2 both neighbours are one process: blocks still pair by direction.
                val out = ints(w.rank * 10, w.rank * 10 + 1, w.rank * 10 + 2, w.rank * 10 + 3)
                val got = ByteBuffer.allocateDirect(16)
                cart.ineighborAlltoall(out, 1, Datatype.INT, got, 1, Datatype.INT).waitFor()
                got.intAt(0) shouldBe nb[0] * 10 + 1
                got.intAt(1) shouldBe nb[1] * 10 + 0
                got.intAt(3) shouldBe nb[3] * 10 + 2
                val row = cart.cartSub(booleanArrayOf(false, true))
                row.size shouldBe 2
                (row.getTopology() as CartTopology).getDims().toList() shouldBe listOf(2)
                cart.dup().getTopology() shouldBe t
            }
        }

        test("createDistGraph delivers each process its own in- and out-edges with their weights") {
            runRanks(3) { mpi ->
                val w = mpi.world
                val r = w.rank
                // Rank 0 names every edge of a ring; the others name none.
                val edges = if (r == 0) intArrayOf(0, 1, 2) else IntArray(0)
                val degrees = if (r == 0) intArrayOf(1, 1, 1) else IntArray(0)
                val dests = if (r == 0) intArrayOf(1, 2, 0) else IntArray(0)
                val weights = if (r == 0) intArrayOf(10, 11, 12) else IntArray(0)
                val g = w.createDistGraph(edges, degrees, dests, weights)
                val t = g.getTopology() as DistGraphTopology
                t.getSources().toList() shouldBe listOf((r + 2) % 3)
                t.getDestinations().toList() shouldBe listOf((r + 1) % 3)
                t.getSourceWeights().toList() shouldBe listOf(10 + (r + 2) % 3)
                val got = ByteBuffer.allocateDirect(4)
                g.neighborAlltoall(ints(r), 1, Datatype.INT, got, 1, Datatype.INT)
                got.intAt(0) shouldBe (r + 2) % 3
            }
        }

        test("a neighbor collective on a communicator without a topology raises ERR_TOPOLOGY") {
            runRanks(2) { mpi ->
                shouldThrow<MPIException> {
                        mpi.world.neighborAllgather(ints(1), 1, Datatype.INT, ints(0, 0), 1, Datatype.INT)
                    }
                    .errorClass shouldBe ErrorClass.ERR_TOPOLOGY
            }
        }
    })
