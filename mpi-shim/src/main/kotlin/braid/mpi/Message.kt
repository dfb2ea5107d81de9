package braid.mpi

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
    public fun imrecv(buf: ByteBuffer, count: Int, type: Datatype): Request {
        val c = comm
        if (op == null || c == null) {
            used = true
            return DoneRequest(c?.mpi ?: error("no process"), c, Status.PROC_NULL)
        }
        return c.guard {
            if (used) throw MPIException.of(ErrorClass.ERR_REQUEST, "MPI_Mrecv", "this message was already received")
            c.checkBuffer("MPI_Mrecv", buf, count, type, receive = true)
            used = true
            op.receive(Region().set(buf, count, type, packNow = false))
            op
        }
    }

    public companion object {
        /** `MPI_MESSAGE_NO_PROC`'s status. */
        @JvmSynthetic internal fun noProc(comm: Comm): Message = Message(comm, null, Status.PROC_NULL)
    }
}
