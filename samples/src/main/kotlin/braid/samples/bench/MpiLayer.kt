package braid.samples.bench

import braid.bootstrap.Bootstrap
import braid.mpi.Datatype
import braid.mpi.Mpi
import braid.mpi.MpiOptions
import braid.mpi.Op
import braid.mpi.Request
import braid.mpi.Status
import braid.mpi.ThreadLevel
import braid.samples.CommandFailure
import java.nio.ByteBuffer
import java.nio.ByteOrder
import org.HdrHistogram.Histogram

/**
 * `braid bench --layer mpi`: OSU's loops over `braid.mpi`, call for call as OSU's C makes them (`MPI_Send`/`MPI_Recv`,
 * windows of `MPI_Isend`/`MPI_Irecv` and `MPI_Waitall`, the collectives with a barrier after each call). Requests are
 * waited into no statuses and recycled, as C passes `MPI_STATUSES_IGNORE`. The one-sided names need `braid.mpi`
 * windows, which are not there yet: [Refusals] says so.
 */
internal class MpiLayer private constructor(private val mpi: Mpi, maxBytes: Int, window: Int) : BenchLayer {
    override val name: String = "mpi"
    override val transport: String = providerOf(mpi)
    private val world = mpi.world
    override val rank: Int = world.rank
    override val size: Int = world.size

    private val capacity = maxOf(maxBytes, 64)
    private val sendBuf = direct(capacity)
    private val recvBuf = direct(capacity)
    /** For allgather and alltoall: [size] blocks. */
    private val sendBlocks = direct(capacity.toLong() * size)
    private val recvBlocks = direct(capacity.toLong() * size)
    private val ack = direct(4)
    private val requests = arrayOfNulls<Request>(2 * window)
    private val status = Status()
    private val sumIn = direct(8)
    private val sumOut = direct(8)

    override fun barrier(): Unit = world.barrier()

    override fun sumToRoot(value: Double): Double {
        sumIn.putDouble(0, value)
        world.reduce(sumIn, sumOut, 1, Datatype.DOUBLE, Op.SUM, 0)
        return sumOut.getDouble(0)
    }

    override fun fromRoot(value: Double): Double {
        sumIn.putDouble(0, value)
        world.bcast(sumIn, 1, Datatype.DOUBLE, 0)
        return sumIn.getDouble(0)
    }

    override fun measure(benchmark: Benchmark, bytes: Int, plan: Plan, window: Int, histogram: Histogram): Long =
        when (benchmark.shape) {
            Shape.LATENCY -> latency(bytes, plan, histogram)
            Shape.BW -> bandwidth(bytes, plan, window, if (rank == 0) 1 else if (rank == 1) 0 else -1, rank == 0)
            Shape.MBW_MR -> {
                val pairs = size / 2
                bandwidth(bytes, plan, window, if (rank < pairs) rank + pairs else rank - pairs, rank < pairs)
            }
            Shape.BIBW -> bidirectional(bytes, plan, window)
            Shape.COLLECTIVE,
            Shape.BARRIER -> collective(benchmark, bytes, plan, histogram)
            else -> throw CommandFailure(Refusals.of(name, benchmark, size)!!)
        }

    private fun latency(bytes: Int, plan: Plan, histogram: Histogram): Long {
        if (rank > 1) return 0
        val peer = 1 - rank
        var t0 = 0L
        for (i in 0 until plan.skip + plan.iterations) {
            if (i == plan.skip) t0 = System.nanoTime()
            val start = System.nanoTime()
            if (rank == 0) {
                world.send(sendBuf, bytes, Datatype.BYTE, peer, 1)
                world.recv(recvBuf, bytes, Datatype.BYTE, peer, 1, status)
                if (i >= plan.skip) histogram.recordValue((System.nanoTime() - start) / 2)
            } else {
                world.recv(recvBuf, bytes, Datatype.BYTE, peer, 1, status)
                world.send(sendBuf, bytes, Datatype.BYTE, peer, 1)
            }
        }
        return System.nanoTime() - t0
    }

    private fun bandwidth(bytes: Int, plan: Plan, window: Int, partner: Int, sender: Boolean): Long {
        if (partner < 0) return 0
        var t0 = 0L
        for (i in 0 until plan.skip + plan.iterations) {
            if (i == plan.skip) t0 = System.nanoTime()
            if (sender) {
                for (k in 0 until window) requests[k] = world.isend(sendBuf, bytes, Datatype.BYTE, partner, 100)
                complete(window)
                world.recv(ack, 4, Datatype.BYTE, partner, 101, status)
            } else {
                for (k in 0 until window) requests[k] = world.irecv(recvBuf, bytes, Datatype.BYTE, partner, 100)
                complete(window)
                world.send(ack, 4, Datatype.BYTE, partner, 101)
            }
        }
        return if (sender) System.nanoTime() - t0 else 0
    }

    private fun bidirectional(bytes: Int, plan: Plan, window: Int): Long {
        if (rank > 1) return 0
        val peer = 1 - rank
        var t0 = 0L
        for (i in 0 until plan.skip + plan.iterations) {
            if (i == plan.skip) t0 = System.nanoTime()
            for (k in 0 until window) requests[k] = world.irecv(recvBuf, bytes, Datatype.BYTE, peer, 100)
            for (k in 0 until window) requests[window + k] = world.isend(sendBuf, bytes, Datatype.BYTE, peer, 100)
            complete(2 * window)
        }
        return System.nanoTime() - t0
    }

    /** Waits for the first [n] requests into no statuses and recycles them. */
    private fun complete(n: Int) {
        for (k in n until requests.size) requests[k] = null
        Request.waitAll(requests, null)
        Request.recycleAll(requests)
        requests.fill(null)
    }

    /** OSU's collective loop: time each call, then a barrier; every rank times. */
    private fun collective(benchmark: Benchmark, bytes: Int, plan: Plan, histogram: Histogram): Long {
        var timed = 0L
        val floats = bytes / 4
        for (i in 0 until plan.skip + plan.iterations) {
            val start = System.nanoTime()
            when (benchmark) {
                Benchmark.ALLREDUCE -> world.allreduce(sendBuf, recvBuf, floats, Datatype.FLOAT, Op.SUM)
                Benchmark.REDUCE -> world.reduce(sendBuf, recvBuf, floats, Datatype.FLOAT, Op.SUM, 0)
                Benchmark.BCAST -> world.bcast(sendBuf, bytes, Datatype.BYTE, 0)
                Benchmark.ALLGATHER -> world.allgather(sendBuf, bytes, Datatype.BYTE, recvBlocks, bytes, Datatype.BYTE)
                Benchmark.ALLTOALL -> world.alltoall(sendBlocks, bytes, Datatype.BYTE, recvBlocks, bytes, Datatype.BYTE)
                else -> world.barrier()
            }
            val t = System.nanoTime() - start
            if (i >= plan.skip) {
                timed += t
                histogram.recordValue(t)
            }
            world.barrier()
        }
        return timed
    }

    override fun close() {
        mpi.close()
    }

    companion object {
        private fun direct(bytes: Long): ByteBuffer {
            if (bytes > Int.MAX_VALUE)
                throw CommandFailure("a buffer of $bytes bytes is too large; give smaller sizes (-S)")
            return direct(bytes.toInt())
        }

        private fun direct(bytes: Int): ByteBuffer =
            try {
                ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder())
            } catch (e: OutOfMemoryError) {
                throw CommandFailure(
                    "cannot allocate a direct buffer of $bytes bytes (${e.message}); raise -XX:MaxDirectMemorySize, e.g. BRAID_JAVA_OPTS=-XX:MaxDirectMemorySize=4g",
                    e,
                )
            }

        /** The provider braid.mpi opened, from `Mpi(rank 0 of 2, shm)`. */
        private fun providerOf(mpi: Mpi): String = mpi.toString().substringAfterLast(", ").removeSuffix(")")

        /** `MPI_Init` over [boot] with [provider] (null: braid.mpi's choice); collective over the job. */
        fun open(boot: Bootstrap, provider: String?, maxBytes: Int, window: Int): MpiLayer {
            val options = MpiOptions()
            if (provider != null) options.provider(provider)
            val mpi = Mpi.init(boot, ThreadLevel.SINGLE, options)
            return try {
                MpiLayer(mpi, maxBytes, window)
            } catch (t: Throwable) {
                runCatching { mpi.close() }
                throw t
            }
        }
    }
}
