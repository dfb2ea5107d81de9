package braid.samples.bench

import braid.bootstrap.Bootstrap
import braid.mpi.Datatype
import braid.mpi.Mpi
import braid.mpi.MpiOptions
import braid.mpi.Op
import braid.mpi.Request
import braid.mpi.Status
import braid.mpi.ThreadLevel
import braid.mpi.Window

/**
 * `braid bench --layer mpi`: [MpiLoops] over `braid.mpi`. Requests are waited into no statuses and recycled, as C
 * passes `MPI_STATUSES_IGNORE`; the one-sided names run over a [Window] from `Window.allocate`.
 */
internal class MpiLayer private constructor(private val mpi: Mpi, maxBytes: Int, window: Int) :
    MpiLoops(maxBytes, window) {
    override val name: String = "mpi"
    override val transport: String = providerOf(mpi)
    private val world = mpi.world
    override val rank: Int = world.rank
    override val size: Int = world.size

    /** For allgather and alltoall: [size] blocks. */
    private val sendBlocks = direct(capacity.toLong() * size)
    private val recvBlocks = direct(capacity.toLong() * size)
    private val requests = arrayOfNulls<Request>(slots)
    private val status = Status()
    private val sumIn = direct(8)
    private val sumOut = direct(8)
    private var win: Window? = null

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

    override fun send(bytes: Int, peer: Int, tag: Int): Unit = world.send(sendBuf, bytes, Datatype.BYTE, peer, tag)

    override fun recv(bytes: Int, peer: Int, tag: Int) {
        world.recv(recvBuf, bytes, Datatype.BYTE, peer, tag, status)
    }

    override fun sendAck(peer: Int): Unit = world.send(ack, 4, Datatype.BYTE, peer, ACK)

    override fun recvAck(peer: Int) {
        world.recv(ack, 4, Datatype.BYTE, peer, ACK, status)
    }

    override fun isend(slot: Int, bytes: Int, peer: Int, tag: Int) {
        requests[slot] = world.isend(sendBuf, bytes, Datatype.BYTE, peer, tag)
    }

    override fun irecv(slot: Int, bytes: Int, peer: Int, tag: Int) {
        requests[slot] = world.irecv(recvBuf, bytes, Datatype.BYTE, peer, tag)
    }

    override fun waitAll(n: Int) {
        for (k in n until requests.size) requests[k] = null
        Request.waitAll(requests, null)
        Request.recycleAll(requests)
        requests.fill(null)
    }

    override fun collective(benchmark: Benchmark, bytes: Int) {
        val floats = bytes / 4
        when (benchmark) {
            Benchmark.ALLREDUCE -> world.allreduce(sendBuf, recvBuf, floats, Datatype.FLOAT, Op.SUM)
            Benchmark.REDUCE -> world.reduce(sendBuf, recvBuf, floats, Datatype.FLOAT, Op.SUM, 0)
            Benchmark.BCAST -> world.bcast(sendBuf, bytes, Datatype.BYTE, 0)
            Benchmark.ALLGATHER -> world.allgather(sendBuf, bytes, Datatype.BYTE, recvBlocks, bytes, Datatype.BYTE)
            Benchmark.ALLTOALL -> world.alltoall(sendBlocks, bytes, Datatype.BYTE, recvBlocks, bytes, Datatype.BYTE)
            else -> world.barrier()
        }
    }

    override fun openWindow() {
        if (win == null) win = Window.allocate(capacity.toLong(), 1, world)
    }

    override fun lockShared(target: Int): Unit = win!!.lock(Window.LOCK_SHARED, target, 0)

    override fun put(bytes: Int, target: Int): Unit =
        win!!.put(sendBuf, bytes, Datatype.BYTE, target, 0, bytes, Datatype.BYTE)

    override fun get(bytes: Int, target: Int): Unit =
        win!!.get(recvBuf, bytes, Datatype.BYTE, target, 0, bytes, Datatype.BYTE)

    override fun fetchAndAdd(target: Int): Unit = win!!.fetchAndOp(one, old, Datatype.LONG, target, 0, Op.SUM)

    override fun flush(target: Int): Unit = win!!.flush(target)

    override fun unlock(target: Int): Unit = win!!.unlock(target)

    override fun close() {
        try {
            win?.free()
        } finally {
            mpi.close()
        }
    }

    companion object {
        private const val ACK = 101

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
