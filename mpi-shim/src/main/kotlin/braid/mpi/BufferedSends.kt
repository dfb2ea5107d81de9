package braid.mpi

import java.nio.ByteBuffer
import java.util.TreeMap

/**
 * The buffer of buffered-mode sends (`MPI_Buffer_attach`/`detach`): a buffered send packs its data into a free range of
 * the attached buffer (first fit; [Mpi.BSEND_OVERHEAD] bytes beyond the data count against it, as the standard's sizing
 * rule says), completes at once, and its range is freed when the endpoint reports the copy sent.
 */
internal class BufferedSends(private val mpi: Mpi) {
    private var buffer: ByteBuffer? = null
    private val used = TreeMap<Int, Int>() // offset -> length (overhead included)
    private var pending = 0

    @Synchronized
    fun attach(b: ByteBuffer) {
        if (buffer != null)
            throw MPIException.of(
                ErrorClass.ERR_BUFFER,
                "MPI_Buffer_attach",
                "a buffer is already attached; detach it first",
            )
        buffer = b
    }

    fun detach(): ByteBuffer {
        val b =
            synchronized(this) { buffer }
                ?: throw MPIException.of(ErrorClass.ERR_BUFFER, "MPI_Buffer_detach", "no buffer is attached")
        drain()
        synchronized(this) { buffer = null }
        return b
    }

    /** Waits until every buffered send has left the buffer. */
    fun drain() {
        mpi.progressUntil { synchronized(this) { pending == 0 } }
    }

    /**
     * Copies [count] × [type] from [src] into the buffer and returns a view of the copy and a callback that frees it;
     * throws `MPI_ERR_BUFFER` naming the sizes when it does not fit.
     */
    fun stage(src: ByteBuffer, count: Int, type: Datatype): Pair<ByteBuffer, Runnable> =
        stage((count * type.size).toInt()) { b, at -> type.packInto(src, 0, count, b, at) }

    /**
     * Reserves [bytes] of the buffer, has [fill] write them (the buffer and the offset of the range), and returns a
     * view of them and a callback that frees them; a [fill] that throws frees the range. Throws `MPI_ERR_BUFFER` naming
     * the sizes when they do not fit.
     */
    @Synchronized
    fun stage(bytes: Int, fill: (ByteBuffer, Int) -> Unit): Pair<ByteBuffer, Runnable> {
        val b =
            buffer
                ?: throw MPIException.of(
                    ErrorClass.ERR_BUFFER,
                    "MPI_Bsend",
                    "no buffer is attached; call bufferAttach first",
                )
        val need = bytes + Mpi.BSEND_OVERHEAD
        var at = 0
        for ((off, len) in used) {
            if (off - at >= need) break
            at = off + len
        }
        if (at + need > b.capacity()) {
            val free = b.capacity() - used.values.sum()
            throw MPIException.of(
                ErrorClass.ERR_BUFFER,
                "MPI_Bsend",
                "$bytes bytes (+${Mpi.BSEND_OVERHEAD} overhead) do not fit the attached buffer: $free of ${b.capacity()} bytes free, none of it in one piece of $need",
            )
        }
        used[at] = need
        pending++
        try {
            fill(b, at)
        } catch (t: Throwable) {
            used.remove(at)
            pending--
            throw t
        }
        val start = at
        return b.slice(at, bytes) to
            Runnable {
                synchronized(this) {
                    used.remove(start)
                    pending--
                }
            }
    }
}

/**
 * Sends the [staged] copy of a buffered send (a view of the attached buffer and the callback that frees it) to [dest]
 * and returns the request, complete at once as `MPI_Bsend`'s is: nobody waits for the send itself, so it is not pooled
 * (nothing would give it back), and its range is freed when the endpoint is done with it.
 */
internal fun Comm.bufferedSend(staged: Pair<ByteBuffer, Runnable>, dest: Int, bits: Long, bytes: Long): Request {
    val (copy, free) = staged
    val send = SendOp(mpi).set(this, destAddr[dest], bits, 0, free)
    send.region.set(copy, copy.capacity(), Datatype.BYTE, packNow = false)
    mpi.submit(send)
    return DoneRequest(mpi, this, Status(Mpi.ANY_SOURCE, Mpi.ANY_TAG, bytes, false, ErrorClass.SUCCESS, -1))
}
