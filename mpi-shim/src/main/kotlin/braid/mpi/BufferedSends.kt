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
    @Synchronized
    fun stage(src: ByteBuffer, count: Int, type: Datatype): Pair<ByteBuffer, Runnable> {
        val b =
            buffer
                ?: throw MPIException.of(
                    ErrorClass.ERR_BUFFER,
                    "MPI_Bsend",
                    "no buffer is attached; call bufferAttach first",
                )
        val bytes = (count * type.size).toInt()
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
        type.packInto(src, 0, count, b, at)
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
