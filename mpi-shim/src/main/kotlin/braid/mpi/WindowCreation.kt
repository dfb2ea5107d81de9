package braid.mpi

import braid.core.MemoryRegion
import braid.core.MrAccess
import braid.core.shm.SharedMemoryDir
import braid.core.shm.ShmSegment
import braid.provider.HostIdentity
import java.nio.ByteBuffer
import java.nio.ByteOrder
import org.agrona.concurrent.UnsafeBuffer

/**
 * How a [Window]'s memory comes to be: the checks every creation call makes ([checkArgs]), the shared-memory segment
 * the processes of one host share ([hostPart]: their control regions, and their window memory for `MPI_Win_allocate`
 * and `MPI_Win_allocate_shared`), and a dynamic window's attachments ([WindowAttachments]).
 */
internal object WindowCreation {
    fun checkArgs(call: String, comm: Intracomm, size: Long, dispUnit: Int) {
        comm.checkUsable(call)
        if (size < 0 || size > Int.MAX_VALUE)
            throw MPIException.of(ErrorClass.ERR_SIZE, call, "size $size is outside 0..${Int.MAX_VALUE} bytes")
        if (dispUnit <= 0)
            throw MPIException.of(
                ErrorClass.ERR_DISP,
                call,
                "displacement unit $dispUnit must be > 0 (1 for bytes, the element size for arrays)",
            )
    }

    fun alignUp(v: Long): Long = (v + 63) and 63L.inv()

    /**
     * What a process of a window has in its host's segment: the segment, its own window memory there (null where the
     * memory is the caller's: `create`, dynamic windows), its control region, and where every process of the same host
     * has its memory ([dataAt]) and control region ([controlAt]) in the segment (-1: on another host, or not there).
     */
    class HostPart(
        val segment: ShmSegment,
        val buffer: ByteBuffer?,
        val control: ByteBuffer,
        val dataAt: LongArray,
        val controlAt: LongArray,
    )

    /**
     * The segment the processes of [comm] on this host share for a window: each one's memory of [size] bytes when
     * [withData] (`allocate`, `allocateShared`: parts in rank order, each from a 64-byte boundary), then each one's
     * control region. Every process maps it whole, so it reaches the memory and lock words of the others on its host by
     * loads, stores and the CPU's atomics. With [oneHost] (`allocateShared`) every process of [comm] must be on this
     * host. The lowest rank of each host creates the segment and names it in an allgather; the name is removed once
     * every process has mapped it, so nothing is left behind whatever ends the processes.
     */
    fun hostPart(call: String, comm: Intracomm, size: Long, withData: Boolean, oneHost: Boolean): HostPart {
        val n = comm.size
        val info = ByteBuffer.allocate(16).order(ByteOrder.nativeOrder()).putLong(0, HostIdentity.id).putLong(8, size)
        val all = ByteBuffer.allocate(16 * n).order(ByteOrder.nativeOrder())
        comm.allgather(info, 2, Datatype.LONG, all, 2, Datatype.LONG)
        val local = (0 until n).filter { all.getLong(it * 16) == HostIdentity.id }
        if (oneHost && local.size != n) {
            val r = (0 until n).first { it !in local }
            throw MPIException.of(
                ErrorClass.ERR_RMA_SHARED,
                call,
                "rank $r of ${comm.getName()} is on another host; split the communicator by host (COMM_TYPE_SHARED) first",
            )
        }
        val dataAt = LongArray(n) { -1 }
        val controlAt = LongArray(n) { -1 }
        var at = 0L
        if (withData)
            for (r in local) {
                dataAt[r] = at
                at += alignUp(all.getLong(r * 16 + 8))
            }
        for (r in local) {
            controlAt[r] = at
            at += WindowControl.length(n)
        }
        val length = maxOf(at, 8)
        val dir = SharedMemoryDir.of(comm.mpi.settings)
        fun pathOf(id: Long) = dir.resolve("braid-win-${java.lang.Long.toHexString(id)}.seg")
        val me = comm.rank
        val leader = local[0]
        var seg: ShmSegment? = null
        val id = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder())
        if (me == leader) {
            val name = java.util.concurrent.ThreadLocalRandom.current().nextLong() and Long.MAX_VALUE
            seg = ShmSegment.create(pathOf(name), length)
            id.putLong(0, name)
        }
        val ids = ByteBuffer.allocate(8 * n).order(ByteOrder.nativeOrder())
        comm.allgather(id, 1, Datatype.LONG, ids, 1, Datatype.LONG)
        if (me != leader) {
            val path = pathOf(ids.getLong(leader * 8))
            seg =
                ShmSegment.open(path, length)
                    ?: throw MPIException.of(
                        ErrorClass.ERR_RMA_SHARED,
                        call,
                        "the segment $path rank $leader made cannot be opened here",
                    )
        }
        comm.barrier()
        seg!!.delete()
        val whole = seg.buffer.byteBuffer()!!
        fun slice(from: Long, len: Long): ByteBuffer {
            val b = whole.duplicate().clear()
            b.position(from.toInt()).limit((from + len).toInt())
            return b.slice().order(ByteOrder.nativeOrder())
        }
        val buffer = if (withData) slice(dataAt[me], maxOf(size, 0)) else null
        return HostPart(seg, buffer, slice(controlAt[me], WindowControl.length(n).toLong()), dataAt, controlAt)
    }
}

/**
 * A dynamic window's attached memory here: each attachment registered with the rail, and the attach table in this
 * process's control region ([WindowControl.ATTACH]) that peers read (entries first, then the count with release order,
 * so a reader that sees the count sees the entries).
 */
internal class WindowAttachments(private val win: Window, private val controlView: UnsafeBuffer) {
    private class Attached(val buffer: ByteBuffer, val address: Long, val length: Long, val mr: MemoryRegion)

    private val attached = ArrayList<Attached>()

    fun attach(buffer: ByteBuffer, size: Long) {
        val name = win.name()
        if (win.flavor != Window.FLAVOR_DYNAMIC)
            throw MPIException.of(
                ErrorClass.ERR_RMA_FLAVOR,
                "MPI_Win_attach",
                "$name is not dynamic; attach needs createDynamic",
            )
        if (!buffer.isDirect)
            throw MPIException.of(
                ErrorClass.ERR_RMA_ATTACH,
                "MPI_Win_attach",
                "$name: the buffer is on the heap; attach a direct buffer",
            )
        if (size < 0 || size > buffer.capacity())
            throw MPIException.of(
                ErrorClass.ERR_SIZE,
                "MPI_Win_attach",
                "$name: size $size is outside 0..${buffer.capacity()} (the buffer's capacity)",
            )
        if (attached.size >= WindowControl.ATTACH_MAX)
            throw MPIException.of(
                ErrorClass.ERR_RMA_ATTACH,
                "MPI_Win_attach",
                "$name already has ${WindowControl.ATTACH_MAX} attachments; detach one first",
            )
        val addr = Window.address(buffer)
        if (attached.any { addr < it.address + it.length && it.address < addr + size })
            throw MPIException.of(
                ErrorClass.ERR_RMA_ATTACH,
                "MPI_Win_attach",
                "$name: [$addr, ${addr + size}) overlaps memory already attached",
            )
        val mr = win.mpi.domain.registerMemory(buffer.duplicate().clear().limit(size.toInt()), MrAccess.REMOTE)
        attached += Attached(buffer, addr, size, mr)
        writeTable()
    }

    fun detach(buffer: ByteBuffer) {
        val a =
            attached.firstOrNull { it.buffer === buffer || it.address == Window.address(buffer) }
                ?: throw MPIException.of(
                    ErrorClass.ERR_RMA_ATTACH,
                    "MPI_Win_detach",
                    "${win.name()}: that buffer is not attached",
                )
        attached.remove(a)
        writeTable()
        a.mr.close()
    }

    /** Releases every attachment's registration (the window is freed). */
    fun close() {
        for (a in attached) a.mr.close()
        attached.clear()
    }

    private fun writeTable() {
        attached.forEachIndexed { i, a ->
            val at = WindowControl.ATTACH + i * WindowControl.ENTRY
            controlView.putLong(at, a.address)
            controlView.putLong(at + 8, a.length)
            controlView.putLong(at + 16, a.mr.key)
        }
        controlView.putLongVolatile(WindowControl.ATTACH_COUNT, attached.size.toLong())
    }
}
