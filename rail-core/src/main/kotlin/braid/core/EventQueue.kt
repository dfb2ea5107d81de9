package braid.core

import java.util.concurrent.TimeUnit
import java.util.concurrent.locks.ReentrantLock
import kotlin.concurrent.withLock

/**
 * Kinds of event on an [EventQueue] (`fi_eq` events). JOIN_COMPLETE is `FI_JOIN_COMPLETE`: a collective group's join
 * finished (the event's context is the join's context).
 */
public enum class EventType {
    NOTIFY,
    AV_COMPLETE,
    MR_COMPLETE,
    PEER_DOWN,
    JOIN_COMPLETE,
}

/** One event read from an [EventQueue]. */
public class Event {
    @JvmField public var type: EventType = EventType.NOTIFY
    @JvmField public var context: Any? = null
    @JvmField public var data: Long = 0
    /** For [EventType.PEER_DOWN]: the peer, in words. */
    @JvmField public var message: String = ""

    override fun toString(): String = "Event($type, context=$context, data=$data, message=$message)"
}

/**
 * An event queue (`fid_eq`) for control-path events: asynchronous notices, errors that belong to no single operation,
 * and [EventType.PEER_DOWN] when a peer process is found dead (once per peer of an endpoint, whichever of a link's
 * rails finds it first). Unlike a completion queue it is off the hot path and thread-safe on its own.
 */
public class EventQueue
internal constructor(
    /**
     * The owner's queue this one was imported from ([Fabric.importEventQueue]): writes go there, reads return
     * `-ENOSYS`.
     */
    public val owner: EventQueue? = null,
    @Suppress("UNUSED_PARAMETER") hidden: JavaHidden = JavaHidden(),
) : AutoCloseable {
    private val lock = ReentrantLock()
    private val nonEmpty = lock.newCondition()
    private val events = ArrayDeque<Event>()
    private val errors = ArrayDeque<CompletionError>()

    /** Appends an event (`fi_eq_write`); applications may write their own. */
    public fun write(type: EventType, context: Any?, data: Long, message: String = ""): Unit =
        if (owner != null) owner.write(type, context, data, message)
        else
            lock.withLock {
                events.addLast(
                    Event().also {
                        it.type = type
                        it.context = context
                        it.data = data
                        it.message = message
                    }
                )
                nonEmpty.signalAll()
            }

    /** Appends an error event. */
    public fun writeErr(context: Any?, err: Int, message: String): Unit =
        if (owner != null) owner.writeErr(context, err, message)
        else
            lock.withLock {
                errors.addLast(
                    CompletionError().also {
                        it.context = context
                        it.err = err
                        it.message = message
                    }
                )
                nonEmpty.signalAll()
            }

    /** Reads one event: 1, `-EAGAIN` if none, `-EAVAIL` if an error is waiting. */
    public fun read(out: Event): Int =
        lock.withLock {
            if (owner != null) return -Errno.ENOSYS
            if (errors.isNotEmpty()) return -Errno.EAVAIL
            val e = events.removeFirstOrNull() ?: return -Errno.EAGAIN
            out.type = e.type
            out.context = e.context
            out.data = e.data
            out.message = e.message
            1
        }

    /** Reads one error event: 1 or `-EAGAIN`. */
    public fun readErr(out: CompletionError): Int =
        lock.withLock {
            if (owner != null) return -Errno.ENOSYS
            val e = errors.removeFirstOrNull() ?: return -Errno.EAGAIN
            out.context = e.context
            out.err = e.err
            out.message = e.message
            1
        }

    /** Blocking [read] (`fi_eq_sread`), parked until an event arrives or [timeoutMillis] passes. */
    public fun sread(out: Event, timeoutMillis: Long): Int =
        lock.withLock {
            if (owner != null) return -Errno.ENOSYS
            var nanos = TimeUnit.MILLISECONDS.toNanos(timeoutMillis)
            while (events.isEmpty() && errors.isEmpty()) {
                if (nanos <= 0) return -Errno.EAGAIN
                nanos = nonEmpty.awaitNanos(nanos)
            }
            read(out)
        }

    override fun close() {}
}
