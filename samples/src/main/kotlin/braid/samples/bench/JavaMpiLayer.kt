package braid.samples.bench

import braid.core.Settings
import braid.mpi.MpiParams
import mpi.MPI
import mpi.Request
import mpi.Win

/**
 * `braid bench --layer java-mpi`: [MpiLoops] through the `mpi` package, Open MPI's Java API over `braid.mpi`, as an
 * Open MPI Java program makes the calls: `MPI.Init` (which finds the launcher's ranks itself), `MPI.COMM_WORLD`'s
 * `send`/`recv`/`iSend`/`iRecv`, `Request.waitAll`, the collectives, and a `Win` of `Win.FLAVOR_PRIVATE`
 * (`MPI_Win_allocate`) for the one-sided names. Buffers are direct (`MPI.newByteBuffer`), as nonblocking calls need.
 * The provider is `MPI.Init`'s: `BRAID_MPI_PROVIDER` ([transport] says which was asked for).
 */
internal class JavaMpiLayer private constructor(maxBytes: Int, window: Int) : MpiLoops(maxBytes, window) {
    override val name: String = "java-mpi"
    override val transport: String = Settings.DEFAULT[MpiParams.PROVIDER].ifEmpty { "auto" }
    private val world = MPI.COMM_WORLD
    override val rank: Int = world.rank
    override val size: Int = world.size

    private val sendBlocks = direct(capacity.toLong() * size)
    private val recvBlocks = direct(capacity.toLong() * size)
    private val requests = arrayOfNulls<Request>(slots)
    /** The array `Request.waitAll` takes, of exactly the requests to wait for; one per count. */
    private val batches = HashMap<Int, Array<Request?>>()
    private val sum = direct(8)
    private var win: Win? = null

    override fun barrier(): Unit = world.barrier()

    override fun sumToRoot(value: Double): Double {
        sum.putDouble(0, value)
        world.reduce(sum, 1, MPI.DOUBLE, MPI.SUM, 0)
        return sum.getDouble(0)
    }

    override fun fromRoot(value: Double): Double {
        sum.putDouble(0, value)
        world.bcast(sum, 1, MPI.DOUBLE, 0)
        return sum.getDouble(0)
    }

    override fun send(bytes: Int, peer: Int, tag: Int): Unit = world.send(sendBuf, bytes, MPI.BYTE, peer, tag)

    override fun recv(bytes: Int, peer: Int, tag: Int) {
        world.recv(recvBuf, bytes, MPI.BYTE, peer, tag)
    }

    override fun sendAck(peer: Int): Unit = world.send(ack, 4, MPI.BYTE, peer, ACK)

    override fun recvAck(peer: Int) {
        world.recv(ack, 4, MPI.BYTE, peer, ACK)
    }

    override fun isend(slot: Int, bytes: Int, peer: Int, tag: Int) {
        requests[slot] = world.iSend(sendBuf, bytes, MPI.BYTE, peer, tag)
    }

    override fun irecv(slot: Int, bytes: Int, peer: Int, tag: Int) {
        requests[slot] = world.iRecv(recvBuf, bytes, MPI.BYTE, peer, tag)
    }

    override fun waitAll(n: Int) {
        val batch = batches.getOrPut(n) { arrayOfNulls(n) }
        System.arraycopy(requests, 0, batch, 0, n)
        Request.waitAll(batch)
        requests.fill(null)
    }

    override fun collective(benchmark: Benchmark, bytes: Int) {
        val floats = bytes / 4
        when (benchmark) {
            Benchmark.ALLREDUCE -> world.allReduce(sendBuf, recvBuf, floats, MPI.FLOAT, MPI.SUM)
            Benchmark.REDUCE -> world.reduce(sendBuf, recvBuf, floats, MPI.FLOAT, MPI.SUM, 0)
            Benchmark.BCAST -> world.bcast(sendBuf, bytes, MPI.BYTE, 0)
            Benchmark.ALLGATHER -> world.allGather(sendBuf, bytes, MPI.BYTE, recvBlocks, bytes, MPI.BYTE)
            Benchmark.ALLTOALL -> world.allToAll(sendBlocks, bytes, MPI.BYTE, recvBlocks, bytes, MPI.BYTE)
            else -> world.barrier()
        }
    }

    override fun openWindow() {
        if (win == null) win = Win(capacity, 1, MPI.INFO_NULL, world, sendBuf, Win.FLAVOR_PRIVATE)
    }

    override fun lockShared(target: Int): Unit = win!!.lock(MPI.LOCK_SHARED, target, 0)

    override fun put(bytes: Int, target: Int): Unit = win!!.put(sendBuf, bytes, MPI.BYTE, target, 0, bytes, MPI.BYTE)

    override fun get(bytes: Int, target: Int): Unit = win!!.get(recvBuf, bytes, MPI.BYTE, target, 0, bytes, MPI.BYTE)

    override fun fetchAndAdd(target: Int): Unit = win!!.fetchAndOp(one, old, MPI.LONG, target, 0, MPI.SUM)

    override fun flush(target: Int): Unit = win!!.flush(target)

    override fun unlock(target: Int): Unit = win!!.unlock(target)

    override fun close() {
        try {
            win?.free()
        } finally {
            MPI.Finalize()
        }
    }

    companion object {
        private const val ACK = 101

        /** `MPI.Init` (collective over the job: the launcher's ranks) and the buffers for sizes up to [maxBytes]. */
        fun open(maxBytes: Int, window: Int): JavaMpiLayer {
            MPI.Init(emptyArray())
            return try {
                JavaMpiLayer(maxBytes, window)
            } catch (t: Throwable) {
                runCatching { MPI.Finalize() }
                throw t
            }
        }
    }
}
