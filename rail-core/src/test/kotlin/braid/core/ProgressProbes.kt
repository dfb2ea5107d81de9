package braid.core

import java.lang.management.ManagementFactory
import java.util.concurrent.Executors
import kotlinx.coroutines.ExecutorCoroutineDispatcher
import kotlinx.coroutines.asCoroutineDispatcher

/** A single-thread dispatcher with a known thread, closed by [use]. */
class OneThread(name: String) : AutoCloseable {
    @Volatile lateinit var thread: Thread
    private val executor =
        Executors.newSingleThreadExecutor { r ->
            Thread(r, name).also {
                it.isDaemon = true
                thread = it
            }
        }
    val dispatcher: ExecutorCoroutineDispatcher = executor.asCoroutineDispatcher()

    init {
        executor.submit {}.get() // start the thread now, so [thread] is set
    }

    override fun close() {
        dispatcher.close()
        executor.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS)
    }
}

private val threadBean = ManagementFactory.getThreadMXBean()

/** CPU time [t] used, in nanoseconds. */
fun cpuNanos(t: Thread): Long = threadBean.getThreadCpuTime(t.id)

/** The domain's count of pending suspend/future operations, read under its lock. */
val Domain.pendingOps: Int
    get() = synchronized(lock) { hub.pendingCount }

/** Coroutines suspended in operations of this domain. */
val Domain.suspendedOps: Int
    get() = hub.suspendedWaiters

/** Posted receives in [ep]'s SRX, read under the domain lock. */
val Endpoint.postedReceives: Int
    get() = synchronized(domain.lock) { srx.postedCount }

/** Unexpected messages in [ep]'s SRX, read under the domain lock. */
val Endpoint.unexpectedMessages: Int
    get() = synchronized(domain.lock) { srx.unexpectedCount }
