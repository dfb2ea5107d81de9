package braid.mpi

import java.util.Base64

/**
 * The processes this one knows: world ranks first (index = world rank), then processes met through ports and
 * intercommunicators. Each has its endpoint address blob and its fabric address in this process's AV; groups name
 * processes by index here.
 */
internal class ProcessTable {
    private val blobs = ArrayList<ByteArray>()
    private val addrs = ArrayList<Long>()
    private val byKey = HashMap<String, Int>()

    @Synchronized
    fun add(blob: ByteArray, fiAddr: Long): Int {
        val key = key(blob)
        byKey[key]?.let {
            return it
        }
        blobs += blob.copyOf()
        addrs += fiAddr
        return (blobs.size - 1).also { byKey[key] = it }
    }

    /** The index of the process with address [blob], inserting it into [mpi]'s AV if new. */
    fun intern(mpi: Mpi, blob: ByteArray): Int {
        synchronized(this) {
            byKey[key(blob)]?.let {
                return it
            }
        }
        return add(blob, mpi.av.insert(blob))
    }

    @Synchronized fun blob(index: Int): ByteArray = blobs[index]

    @Synchronized fun fiAddr(index: Int): Long = addrs[index]

    private fun key(blob: ByteArray): String = Base64.getEncoder().encodeToString(blob)
}
