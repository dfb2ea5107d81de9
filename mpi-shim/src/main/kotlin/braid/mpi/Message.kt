package braid.mpi

import braid.core.MemoryRegion
import java.nio.ByteBuffer

/**
 * A message matched by [Comm.mprobe] or [Comm.improbe] (`MPI_Message`): reserved for this handle, so no other receive
 * can take it, and received with [mrecv] or [imrecv] exactly once. It rests on rail-core's PEEK|CLAIM: the claimed
 * message stays in the unexpected queue until the CLAIM receive collects it.
 */
public class Message
internal constructor(
    private val comm: Comm?,
    private val op: ProbeOp?,
    /** The probe's status: source, tag, and bytes (so [Status.getCount] sizes the receive). */
    public val status: Status,
) {
    private var used = false

    /** Whether this is `MPI_MESSAGE_NO_PROC` (the probe named `PROC_NULL`). */
    public val isNoProc: Boolean
        get() = op == null

    /** `MPI_Mrecv`: receives the message into [buf] as [count] elements of [type]. */
    public fun mrecv(buf: ByteBuffer, count: Int, type: Datatype): Status = imrecv(buf, count, type).waitFor()

    /** `MPI_Imrecv`. */
    public fun imrecv(buf: ByteBuffer, count: Int, type: Datatype): Request = claim { c ->
        c.checkBuffer("MPI_Mrecv", buf, count, type, receive = true)
        Region().set(buf, count, type, packNow = false) to null
    }

    /**
     * `MPI_Mrecv` into a registered region of memory of any interface (device memory included): [count] elements of
     * [type] at byte [offset]. The message lands in host memory and is copied (or unpacked, for a strided type) into
     * the region through the copy service before the receive completes.
     */
    public fun mrecv(buf: MemoryRegion, offset: Long, count: Int, type: Datatype): Status =
        imrecv(buf, offset, count, type).waitFor()

    /** `MPI_Imrecv` into a region. */
    public fun imrecv(buf: MemoryRegion, offset: Long, count: Int, type: Datatype): Request = claim { c ->
        val span = RegionSpan(buf, offset, count, type).check("MPI_Mrecv", c.mpi.ep, "receive buffer")
        Region().set(span.hostBuffer().byteBuffer(), span.bytes, Datatype.BYTE, packNow = false) to span
    }

    /**
     * Receives the claimed message once: into the host [Region] [into] makes (checking the caller's buffer), and from
     * there into its memory region, if it names one.
     */
    private inline fun claim(into: (Comm) -> Pair<Region, RegionSpan?>): Request {
        val c = comm
        if (op == null || c == null) {
            used = true
            return DoneRequest(c?.mpi ?: error("no process"), c, Status.PROC_NULL)
        }
        return c.guard {
            if (used) throw MPIException.of(ErrorClass.ERR_REQUEST, "MPI_Mrecv", "this message was already received")
            val (region, landing) = into(c)
            used = true
            op.receive(region, landing)
            op
        }
    }

    public companion object {
        /** `MPI_MESSAGE_NO_PROC`'s status. */
        @JvmSynthetic internal fun noProc(comm: Comm): Message = Message(comm, null, Status.PROC_NULL)
    }
}
