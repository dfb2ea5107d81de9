package braid.mpi

import java.util.WeakHashMap
import java.util.concurrent.atomic.AtomicInteger

/**
 * `MPI_Comm_copy_attr_function`: what a communicator's attribute becomes on its [Intracomm.dup] (or [Intercomm.dup]):
 * the value to attach to the new communicator, or null to attach nothing.
 */
public fun interface AttributeCopier {
    public fun copy(oldComm: Comm, keyval: Int, extraState: Any?, value: Any?): Any?
}

/** `MPI_Comm_delete_attr_function`: called when an attribute is deleted, replaced, or its communicator freed. */
public fun interface AttributeDeleter {
    public fun delete(comm: Comm, keyval: Int, value: Any?, extraState: Any?)
}

/**
 * User keyvals and the attributes communicators hold under them (`MPI_Comm_create_keyval`, `MPI_Comm_set_attr` …),
 * reached through [Comm.createKeyval] and the [Comm] methods. Keyvals are process-wide numbers from [FIRST_KEYVAL] up
 * (the predefined keys are below). A callback that throws an [MPIException] makes the call that ran it fail with that
 * error, the attribute left as it was.
 */
internal object Attributes {
    const val FIRST_KEYVAL = 100

    private class Keyval(val copy: AttributeCopier, val delete: AttributeDeleter, val extraState: Any?) {
        @Volatile var freed = false
    }

    private val next = AtomicInteger(FIRST_KEYVAL)
    private val keyvals = HashMap<Int, Keyval>()
    /**
     * Each communicator's attributes in the order they were set; weak, so a dropped communicator takes its own along.
     */
    private val values = WeakHashMap<Comm, LinkedHashMap<Int, Any?>>()

    @Synchronized
    fun create(copy: AttributeCopier, delete: AttributeDeleter, extraState: Any?): Int {
        val k = next.getAndIncrement()
        keyvals[k] = Keyval(copy, delete, extraState)
        return k
    }

    /** `MPI_Comm_free_keyval`: no new attribute under it; ones already set stay until deleted (as MPI says). */
    @Synchronized
    fun free(keyval: Int) {
        keyval(keyval, "MPI_Comm_free_keyval").freed = true
    }

    fun isUser(key: Int): Boolean = key >= FIRST_KEYVAL

    fun set(comm: Comm, keyval: Int, value: Any?) {
        val k =
            synchronized(this) {
                keyval(keyval, "MPI_Comm_set_attr").also {
                    if (it.freed)
                        throw MPIException.of(
                            ErrorClass.ERR_KEYVAL,
                            "MPI_Comm_set_attr",
                            "keyval $keyval has been freed",
                        )
                }
            }
        val old =
            synchronized(this) { values[comm]?.let { m -> if (m.containsKey(keyval)) Holder(m[keyval]) else null } }
        if (old != null) k.delete.delete(comm, keyval, old.value, k.extraState)
        synchronized(this) { values.getOrPut(comm) { LinkedHashMap() }[keyval] = value }
    }

    /** The value, or null with `found` false in [out]'s sense: returns a holder so a null value is told from none. */
    fun get(comm: Comm, keyval: Int): Holder? =
        synchronized(this) {
            keyval(keyval, "MPI_Comm_get_attr")
            values[comm]?.let { m -> if (m.containsKey(keyval)) Holder(m[keyval]) else null }
        }

    fun delete(comm: Comm, keyval: Int) {
        val (k, old) =
            synchronized(this) {
                val k = keyval(keyval, "MPI_Comm_delete_attr")
                val m = values[comm]
                if (m == null || !m.containsKey(keyval))
                    throw MPIException.of(
                        ErrorClass.ERR_KEYVAL,
                        "MPI_Comm_delete_attr",
                        "${comm.getName()} has no attribute under keyval $keyval",
                    )
                k to m[keyval]
            }
        k.delete.delete(comm, keyval, old, k.extraState)
        synchronized(this) { values[comm]?.remove(keyval) }
    }

    /** On a dup: each attribute's copy callback decides what [to] gets. */
    fun copyAll(from: Comm, to: Comm) {
        val entries =
            synchronized(this) { values[from]?.entries?.map { Triple(it.key, keyvals[it.key]!!, it.value) } } ?: return
        for ((key, k, v) in entries) {
            val copied = k.copy.copy(from, key, k.extraState, v) ?: continue
            synchronized(this) { values.getOrPut(to) { LinkedHashMap() }[key] = copied }
        }
    }

    /** On a free: every attribute's delete callback, in the reverse of the order they were set. */
    fun deleteAll(comm: Comm) {
        val entries =
            synchronized(this) { values[comm]?.entries?.map { Triple(it.key, keyvals[it.key]!!, it.value) } } ?: return
        for ((key, k, v) in entries.asReversed()) {
            k.delete.delete(comm, key, v, k.extraState)
            synchronized(this) { values[comm]?.remove(key) }
        }
        synchronized(this) { values.remove(comm) }
    }

    private fun keyval(keyval: Int, call: String): Keyval =
        keyvals[keyval]
            ?: throw MPIException.of(ErrorClass.ERR_KEYVAL, call, "keyval $keyval was not made by Comm.createKeyval")

    class Holder(val value: Any?)
}
