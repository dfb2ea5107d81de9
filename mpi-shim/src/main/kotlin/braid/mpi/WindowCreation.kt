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
 * How a [Window]'s memory comes to be: the checks every creation call makes ([checkArgs]), the shared-memory segment of
 * `MPI_Win_allocate_shared` ([sharedPart]), and a dynamic window's attachments ([WindowAttachments]).
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

    /** This process's part of a shared window: the segment, its offset there, and the part as a buffer. */
    class SharedPart(val segment: ShmSegment, val offset: Long, val buffer: ByteBuffer)

    /**
     * The segment every process of [comm] (one host) shares, parts in rank order: rank 0 names and creates it, the name
     * travels in a broadcast; the file is unlinked when the window is freed.
     */
    fun sharedPart(call: String, size: Long, comm: Intracomm): SharedPart {
        val n = comm.size
        val info = ByteBuffer.allocate(16).order(ByteOrder.nativeOrder()).putLong(0, HostIdentity.id).putLong(8, size)
        val all = ByteBuffer.allocate(16 * n).order(ByteOrder.nativeOrder())
        comm.allgather(info, 2, Datatype.LONG, all, 2, Datatype.LONG)
        val offsets = LongArray(n + 1)
        for (r in 0 until n) {
            if (all.getLong(r * 16) != HostIdentity.id)
                throw MPIException.of(
                    ErrorClass.ERR_RMA_SHARED,
                    call,
                    "rank $r of ${comm.getName()} is on another host; split the communicator by host (COMM_TYPE_SHARED) first",
                )
            offsets[r + 1] = offsets[r] + alignUp(all.getLong(r * 16 + 8))
        }
        val nameBuf = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder())
        val dir = SharedMemoryDir.of(comm.mpi.settings)
        var seg: ShmSegment? = null
        if (comm.rank == 0) {
            val id = java.util.concurrent.ThreadLocalRandom.current().nextLong() and Long.MAX_VALUE
            seg =
                ShmSegment.create(dir.resolve("braid-win-${java.lang.Long.toHexString(id)}.seg"), maxOf(offsets[n], 8))
            nameBuf.putLong(0, id)
        }
        comm.bcast(nameBuf, 1, Datatype.LONG, 0)
        if (comm.rank != 0) {
            val path = dir.resolve("braid-win-${java.lang.Long.toHexString(nameBuf.getLong(0))}.seg")
            seg =
                ShmSegment.open(path, maxOf(offsets[n], 8))
                    ?: throw MPIException.of(
                        ErrorClass.ERR_RMA_SHARED,
                        call,
                        "the segment $path rank 0 made cannot be opened here",
                    )
        }
        comm.barrier()
        val me = comm.rank
        val whole = seg!!.buffer.byteBuffer()!!.duplicate().clear()
        whole.position(offsets[me].toInt()).limit((offsets[me] + maxOf(size, 0)).toInt())
        return SharedPart(seg, offsets[me], whole.slice().order(ByteOrder.nativeOrder()))
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
