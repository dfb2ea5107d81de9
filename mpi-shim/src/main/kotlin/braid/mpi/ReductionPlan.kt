package braid.mpi

import braid.collectives.CollectiveGroup
import braid.collectives.CollectiveRequest
import braid.collectives.Datatype as Element
import braid.collectives.ReduceOp
import braid.collectives.UserReduction
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer

/**
 * How an MPI reduction runs on the collectives module: [perElement] elements of kind [element] per MPI element,
 * combined by the built-in [builtin] or the user op [user] (exactly one is set). Picks the module's overload for
 * either; counts are in [element]s.
 */
internal class ReductionPlan(
    val element: Element,
    val perElement: Int,
    private val builtin: ReduceOp?,
    private val user: UserReduction?,
) {
    fun reduce(
        g: CollectiveGroup,
        send: DirectBuffer,
        recv: MutableDirectBuffer?,
        n: Int,
        root: Int,
        inPlace: Boolean,
    ): CollectiveRequest {
        val s = if (inPlace) null else send
        return if (builtin != null) g.startReduce(s, 0, recv, 0, n, element, builtin, root)
        else g.startReduce(s, 0, recv, 0, n, element, user!!, root)
    }

    fun allreduce(g: CollectiveGroup, send: DirectBuffer?, recv: MutableDirectBuffer, n: Int): CollectiveRequest =
        if (builtin != null) g.startAllreduce(send, 0, recv, 0, n, element, builtin)
        else g.startAllreduce(send, 0, recv, 0, n, element, user!!)

    fun reduceScatterBlock(
        g: CollectiveGroup,
        send: DirectBuffer?,
        recv: MutableDirectBuffer,
        n: Int,
    ): CollectiveRequest =
        if (builtin != null) g.startReduceScatterBlock(send, 0, recv, 0, n, element, builtin)
        else g.startReduceScatterBlock(send, 0, recv, 0, n, element, user!!)

    fun scan(
        g: CollectiveGroup,
        send: DirectBuffer?,
        recv: MutableDirectBuffer,
        n: Int,
        exclusive: Boolean,
    ): CollectiveRequest =
        when {
            exclusive && builtin != null -> g.startExscan(send, 0, recv, 0, n, element, builtin)
            exclusive -> g.startExscan(send, 0, recv, 0, n, element, user!!)
            builtin != null -> g.startScan(send, 0, recv, 0, n, element, builtin)
            else -> g.startScan(send, 0, recv, 0, n, element, user!!)
        }
}
