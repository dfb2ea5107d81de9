package braid.mpi

import braid.bootstrap.Bootstrap
import braid.core.AddressVector
import braid.core.Braid
import braid.core.Caps
import braid.core.Completion
import braid.core.CompletionError
import braid.core.CompletionQueue
import braid.core.CqFormat
import braid.core.Domain
import braid.core.Endpoint
import braid.core.Errno
import braid.core.Event
import braid.core.EventQueue
import braid.core.EventType
import braid.core.Fabric
import braid.core.Hints
import braid.core.IdleKind
import braid.core.IdlePolicy
import braid.core.OpFlags
import braid.core.ParamSource
import braid.core.RailLimit
import braid.core.Settings
import braid.core.Threading
import braid.core.TrecvBatch
import braid.provider.HostIdentity
import braid.provider.link.LinkParams
import java.lang.invoke.VarHandle
import java.net.InetAddress
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.locks.ReentrantLock

/**
 * One MPI process: its endpoint, its view of the job and the environment calls (`MPI_Init` … `MPI_Finalize`). [init]
 * opens one endpoint, publishes its address through the [Bootstrap], reads every other rank's, and builds [world] and
 * [self]; every communicator is a context on that one endpoint ([MatchBitsDescriptor]).
 *
 * Several instances may live in one JVM (each its own rank, as the tests run them); the static
 * [isInitialized]/[isFinalized] describe the JVM as a whole.
 *
 * Threads: point-to-point calls, requests and progress are safe from any thread (posting and completion dispatch share
 * one lock), so [ThreadLevel.MULTIPLE] is provided when asked for. Below MULTIPLE the caller promises that no two
 * threads call at once, as MPI's thread levels say, and the point-to-point path then takes no lock of its own.
 * Communicator construction (dup, split, create, intercommunicators, ports) is serialized per process; two threads
 * building communicators at once must build them in the same order in every process, or they wait on each other.
 */
public class Mpi
private constructor(
    /** The launcher's key-value store this process started from. */
    public val bootstrap: Bootstrap,
    /** The thread level actually provided (`MPI_Query_thread`). */
    public val threadLevel: ThreadLevel,
    options: MpiOptions,
) : AutoCloseable {
    @get:JvmSynthetic internal val fabric: Fabric
    @get:JvmSynthetic internal val domain: Domain
    @get:JvmSynthetic internal val cq: CompletionQueue
    @get:JvmSynthetic internal val av: AddressVector
    @get:JvmSynthetic internal val ep: Endpoint
    private val eq: EventQueue
    private val event = Event()
    @get:JvmSynthetic internal val lock = ReentrantLock()
    /** Whether threads may call at once ([ThreadLevel.MULTIPLE]): only then is [lock] taken ([locked]). */
    @get:JvmSynthetic internal val threaded = threadLevel == ThreadLevel.MULTIPLE
    /** Fabric addresses of peers the endpoint reported dead (PEER_DOWN), with the report; under [lock]. */
    private val dead = HashMap<Long, String>()
    /** Whether [dead] has an entry: read without the lock, so a post asks nothing more while every peer lives. */
    @Volatile private var anyDead = false
    /**
     * Receives posted to the endpoint and directed at one peer (an intrusive list through [DirectedRecv]: host and
     * memory-region receives), so a peer's death can fail them; under [lock].
     */
    private var directed: DirectedRecv? = null
    /** Spent sends and receives ready for reuse (see [Request.recycle]); under [lock]. */
    private val sendPool = RequestPool<SendOp>(POOL_MAX)
    private val recvPool = RequestPool<RecvOp>(POOL_MAX)
    /**
     * Progress calls so far: the event queue is read on every [EQ_EVERY]th. Tests count rounds with it, and
     * [WindowServant] reads it without synchronisation to tell whether the application is driving progress itself (then
     * the servant stays out of the domain lock).
     */
    @get:JvmSynthetic
    internal var polls: Int = 0
        private set

    /** Serializes communicator construction in this process (context ids are agreed one at a time). */
    @get:JvmSynthetic internal val constructLock = ReentrantLock()
    private val backlog = ArrayDeque<Request>()
    /** Receives called since the last progress call, which posts them together ([postReceives]); under [lock]. */
    private val receives = ArrayDeque<RecvOp>()
    private val recvBatch = TrecvBatch(RECV_BATCH)
    /**
     * The largest send posted as an inject, which completes at its post ([SendOp.post]); -1: none. Only over shm, whose
     * rings take an inject at once or refuse it: other rails may queue an inject's copy (tcp, before its connection is
     * up), and a copy queued that way could no longer report its failure to the request.
     */
    @get:JvmSynthetic internal val injectSize: Int

    private val completions = Array(COMPLETION_BATCH) { Completion() }
    private val error = CompletionError()
    @get:JvmSynthetic internal val contexts = ContextIdPool()
    @get:JvmSynthetic internal val processes = ProcessTable()
    @get:JvmSynthetic internal val buffered = BufferedSends(this)
    @get:JvmSynthetic internal val ports = Ports(this)
    private val mainThread = Thread.currentThread()

    /** `MPI_COMM_WORLD`. */
    public val world: Intracomm

    /** `MPI_COMM_SELF`. */
    public val self: Intracomm

    @Volatile private var closed = false

    /** What this process was opened with ([MpiOptions.settings]): [MpiParams] and the providers' parameters. */
    @get:JvmSynthetic internal val settings: Settings = options.settings.check(MpiParams.ALL)

    /**
     * How this process's communicators make their collectives groups ([CommCollectives]): paired with the intra-node
     * shared-memory offload ([MpiParams.COLL_OFFLOAD]), so one host's ranks get the offloaded collectives a
     * `braid.collectives` user gets, and with blocking waits that drive braid.mpi's [progress] (MPI's progress rule).
     */
    @get:JvmSynthetic
    internal val joinOptions: braid.collectives.JoinOptions =
        braid.collectives.JoinOptions.DEFAULT.withOffload(
                if (settings[MpiParams.COLL_OFFLOAD])
                    braid.collectives.offload.ShmOffload.DEFAULT.let {
                        // A dead local rank fails a waiting collective within 10 ms (probed only while waiting).
                        it.withTimeouts(it.attachTimeoutMillis, OFFLOAD_LIVENESS_MILLIS)
                    }
                else null
            )
            .withProgress { progress() }

    init {
        val provider = if (options.provider == MpiOptions.AUTO) chooseProvider(bootstrap) else options.provider
        val found =
            options.info
                // RMA and atomics for one-sided windows, and device memory (copy overrides), where the rail has them;
                // without, where it has not.
                ?: Braid.getInfo(hints(provider, options, Caps.RMA or Caps.ATOMIC or Caps.HMEM)).firstOrNull()
                ?: Braid.getInfo(hints(provider, options, Caps.RMA or Caps.ATOMIC)).firstOrNull()
                ?: Braid.getInfo(hints(provider, options)).firstOrNull()
                ?: throw MPIException.of(
                    ErrorClass.ERR_OTHER,
                    "MPI_Init",
                    "provider '$provider' is not available here; set BRAID_MPI_PROVIDER or MpiOptions.provider to one `braid info` lists",
                )
        // Every wait of this process is the domain's one wait: it idles the way MPI implementations poll. Below
        // MULTIPLE one thread at a time calls MPI, which is FI_THREAD_DOMAIN: the domain's per-message path takes no
        // lock until a thread of Braid's own drives it (a window's servant, a futures driver: Domain.isSolo).
        val threading = if (threaded) Threading.SAFE else Threading.DOMAIN
        val info = found.withDomainAttr(found.domainAttr.withIdle(waitPolicy(settings)).withThreading(threading))
        fabric = Braid.fabric(info)
        domain = fabric.domain(info)
        cq = domain.completionQueue(CqFormat.TAGGED, options.cqSize)
        av = domain.addressVector()
        eq = fabric.eventQueue()
        ep =
            domain.endpoint().apply {
                bind(cq, OpFlags.TRANSMIT or OpFlags.RECV)
                bind(av)
                bind(eq)
                enable()
            }
        injectSize = if (ep.info.provider == "shm") ep.info.txAttr.injectSize else -1
        val n = bootstrap.size
        if (n - 1 > MatchBitsDescriptor.RANK_MAX)
            throw MPIException.of(
                ErrorClass.ERR_OTHER,
                "MPI_Init",
                "$n ranks exceed the ${MatchBitsDescriptor.RANK_MAX + 1} the match bits can name",
            )
        bootstrap.put(ADDRESS_KEY, ep.address)
        bootstrap.fence()
        for (r in 0 until n) {
            val blob = if (r == bootstrap.rank) ep.address else bootstrap.get(r, ADDRESS_KEY)
            processes.add(blob, av.insert(blob))
        }
        val me = bootstrap.rank
        world = Intracomm(this, ContextIdPool.WORLD, Group(IntArray(n) { it }, me), "MPI_COMM_WORLD")
        self = Intracomm(this, ContextIdPool.SELF, Group(intArrayOf(me), me), "MPI_COMM_SELF")
        live.incrementAndGet()
        everInitialized = true
    }

    /** This process's index in its own process table (its world rank). */
    @get:JvmSynthetic
    internal val selfProc: Int
        get() = bootstrap.rank

    /** `MPI_Finalize`: finishes pending buffered sends, closes the endpoint and leaves the bootstrap. */
    public fun finalizeMpi() {
        if (closed) return
        // As mpirun waits for the processes MPI_Comm_spawn started, a parent ends once its children have.
        for (t in synchronized(spawned) { spawned.toList() }) t.join()
        buffered.drain()
        closed = true
        ep.close()
        av.close()
        cq.close()
        domain.close()
        fabric.close()
        bootstrap.close()
        live.decrementAndGet()
    }

    /** [finalizeMpi]. */
    override fun close(): Unit = finalizeMpi()

    /**
     * Registers [length] bytes of [iface] memory (device memory: CUDA, ROCm … or an interface the application defines)
     * at [address] on [device], for the region forms of the calls ([CommRegions]); [MrAccess][braid.core.MrAccess] bits
     * in [access]. Close the region when done with it. See `docs/hmem.md`.
     */
    public fun registerMemory(
        iface: braid.core.HmemIface,
        device: Long,
        address: Long,
        length: Int,
        access: Int,
    ): braid.core.MemoryRegion = domain.registerMemory(iface, device, address, length, access)

    /**
     * Overrides [op], a copy into or out of device memory, on this process's endpoint (every communicator's traffic): 0
     * if it took, `-ENOSYS` where its rail cannot honour it ([braid.core.Endpoint.setOp]); null [fn] removes it.
     */
    public fun setOp(op: braid.core.HmemOp, fn: braid.core.HmemCopyFunction?): Int = ep.setOp(op, fn)

    /** Whether this instance has been finalized. */
    public val finalized: Boolean
        get() = closed

    /** `MPI_Is_thread_main`. */
    public fun isThreadMain(): Boolean = Thread.currentThread() === mainThread

    /** `MPI_Get_processor_name`. */
    public fun processorName(): String = runCatching { InetAddress.getLocalHost().hostName }.getOrDefault("localhost")

    /** `MPI_Abort`: ends the whole job through the launcher with [errorCode]. */
    public fun abort(errorCode: Int, message: String): Nothing = abortJob(errorCode, message)

    @JvmSynthetic internal fun abortJob(code: Int, message: String): Nothing = bootstrap.abort(code, message)

    /** `MPI_Buffer_attach`: the space buffered sends copy into. */
    public fun bufferAttach(buffer: java.nio.ByteBuffer): Unit = buffered.attach(buffer)

    /** `MPI_Buffer_detach`: waits for the buffered sends still using it, then returns it. */
    public fun bufferDetach(): java.nio.ByteBuffer = buffered.detach()

    /** `MPI_Open_port`: a port name other jobs (or this one) can [Intracomm.connect] to. */
    public fun openPort(): String = ports.open()

    /** `MPI_Close_port`. */
    public fun closePort(port: String): Unit = ports.close(port)

    /** `MPI_Publish_name` (through a directory of files: see [Ports]). */
    public fun publishName(service: String, port: String): Unit = ports.publish(service, port)

    /** `MPI_Lookup_name`. */
    public fun lookupName(service: String): String = ports.lookup(service)

    /** `MPI_Unpublish_name`. */
    public fun unpublishName(service: String, port: String): Unit = ports.unpublish(service, port)

    /**
     * `MPI_Grequest_start`: a request for an operation the caller carries out and then [GeneralizedRequest.complete]s.
     */
    public fun startGeneralizedRequest(): GeneralizedRequest {
        checkLive("MPI_Grequest_start")
        return GeneralizedRequest(this)
    }

    /**
     * `MPI_Comm_get_parent`: the intercommunicator to the processes whose [Intracomm.spawn] started this job (its
     * remote group), or null when nothing spawned it.
     */
    public var parent: Intercomm? = null
        private set

    /**
     * The threads running the jobs [Intracomm.spawn] started from this process (each a [braid.bootstrap.JobLauncher]).
     */
    private val spawned = ArrayList<Thread>()

    @JvmSynthetic
    internal fun spawned(job: Thread) {
        synchronized(spawned) { spawned += job }
    }

    /** A spawned job's `MPI_Init` ends by connecting its world to the port its parents accept on. */
    private fun joinParent(): Mpi {
        val port = settings[MpiParams.PARENT_PORT].trim()
        if (port.isNotEmpty()) parent = world.connect(port, 0)
        return this
    }

    /** Throws `MPI_ERR_OTHER` if finalized. */
    @JvmSynthetic
    internal fun checkLive(call: String) {
        if (closed) throw MPIException.of(ErrorClass.ERR_OTHER, call, "MPI has been finalized in this process")
    }

    // ## Posting and progress ##

    /**
     * Posts [op] to the endpoint, or queues it behind earlier operations the endpoint pushed back (`-EAGAIN`):
     * operations reach the endpoint in the order they were called, which is what keeps MPI's non-overtaking rule for
     * sends and the matching order of receives.
     */
    @JvmSynthetic
    internal fun submit(op: Request) {
        locked {
            if (op is RecvOp) {
                // Posted by the next progress call (every wait and test makes one), with the receives called before
                // it, under one acquisition of the domain's lock: a window of receives costs the rail one, not one
                // each. Receives keep their order among themselves, and a send never waits for a receive.
                receives.addLast(op)
                return
            }
            if (backlog.isEmpty()) {
                val rc = op.post()
                if (rc == 0) return
                if (rc != -Errno.EAGAIN) {
                    op.failPost(rc)
                    return
                }
            }
            backlog.addLast(op)
        }
    }

    /** Whether receives called earlier wait to be posted (a device receive posted alone goes after them). */
    @get:JvmSynthetic
    internal val receivesQueued: Boolean
        get() = receives.isNotEmpty()

    /** Operations waiting in the backlog for the endpoint to take them (tests look). */
    @get:JvmSynthetic
    internal val backlogged: Int
        get() = locked { backlog.size }

    /**
     * Removes [op] from the backlog or the receives not yet posted, if it is still there (it never reached the
     * endpoint).
     */
    @JvmSynthetic
    internal fun withdraw(op: Request): Boolean = locked {
        if (op is RecvOp) receives.remove(op) else backlog.remove(op)
    }

    /**
     * Posts the receives waiting since the last progress call, in the order they were called, [RECV_BATCH] at a time
     * under one acquisition of the domain's lock ([Endpoint.tryTrecv] with a [TrecvBatch]); returns how many left the
     * queue. Stops at a receive the endpoint pushes back (`-EAGAIN`), which stays first. Caller holds [lock] if
     * [threaded].
     */
    @JvmSynthetic
    internal fun postReceives(): Int {
        var work = 0
        // A solo domain takes no lock per post, so the batch saves nothing: each receive goes straight to the
        // endpoint, without its copy into the batch and out again.
        if (domain.isSolo) return postEach(receives)
        while (receives.isNotEmpty()) {
            val n = minOf(receives.size, RECV_BATCH)
            for (i in 0 until n) receives[i].addTo(recvBatch)
            val rc = ep.tryTrecv(recvBatch)
            val posted = recvBatch.posted
            recvBatch.clear()
            for (i in 0 until posted) receives.removeFirst().posted()
            work += posted
            if (rc == 0) continue
            if (rc == -Errno.EAGAIN) break
            receives.removeFirst().failPost(rc)
            work++
        }
        return work
    }

    /**
     * Posts [queue]'s requests one at a time, in order, until the endpoint pushes one back (`-EAGAIN`: it stays first);
     * a post refused otherwise fails its request. Returns how many left the queue.
     */
    private fun postEach(queue: ArrayDeque<out Request>): Int {
        var work = 0
        while (queue.isNotEmpty()) {
            val rc = queue.first().post()
            if (rc == -Errno.EAGAIN) break
            val op = queue.removeFirst()
            if (rc != 0) op.failPost(rc)
            work++
        }
        return work
    }

    /** Runs [block] under [lock] when several threads may call at once, else as it is. */
    @JvmSynthetic
    internal inline fun <T> locked(block: () -> T): T {
        if (!threaded) return block()
        lock.lock()
        try {
            return block()
        } finally {
            lock.unlock()
        }
    }

    /** Drives the endpoint once: posts what the backlog holds and dispatches completions. Returns the work done. */
    @JvmSynthetic
    internal fun progress(): Int {
        if (closed) return 0
        if (threaded && !lock.tryLock())
            return 0 // another thread is dispatching; its completions reach our requests too
        try {
            var work = if (receives.isEmpty()) 0 else postReceives()
            if (backlog.isNotEmpty()) work += postEach(backlog)
            // Completions in batches: one pass of the rail's progress per batch, not per completion
            // (a window of 64 sends completes in 4 reads instead of 64, a ping-pong's message in 1, not 2).
            while (true) {
                val n = cq.read(completions)
                if (n > 0) {
                    for (i in 0 until n) {
                        val c = completions[i]
                        val op = c.context
                        c.context = null
                        (op as? Request)?.onCompletion(c)
                    }
                    work += n
                    if (n == completions.size) continue
                    break // a short batch emptied the queue (or stopped at an error entry, which the next call reads):
                    // no second pass of the rail's progress
                }
                if (n == -Errno.EAVAIL && cq.readErr(error) == 1) {
                    work++
                    (error.context as? Request)?.onError(error)
                    continue
                }
                break
            }
            // Peer failures are rare and reported within the rail's liveness period anyway: look
            // every EQ_EVERY polls rather than take the event queue's lock on each.
            if ((++polls and (EQ_EVERY - 1)) == 0) {
                while (eq.read(event) == 1) {
                    work++
                    if (event.type == EventType.PEER_DOWN) peerDown(event.data, event.message)
                }
            }
            // Requests completed here, outside the domain's progress: wake the threads parked in its wait for them.
            // The fence orders the requests' release stores of done before the look at who is parked (a waiter arms
            // itself, then looks at done): one per round, not one per request. Below MULTIPLE no other thread waits
            // in MPI while this one is in it, so there is nobody to order against and no locked instruction is paid.
            if (work > 0) {
                if (threaded) VarHandle.fullFence()
                domain.wakeWaiters()
            }
            return work
        } finally {
            if (threaded) lock.unlock()
        }
    }

    // ## Failed peers (MPI 4's ULFM semantics, in part) ##
    //
    // When the endpoint reports a peer dead, receives directed at it fail with ERR_PROC_FAILED
    // (they are cancelled, and their cancellation completes as that error), and later sends and
    // directed receives naming it fail at once. Sends in flight to it fail through the rail
    // (EHOSTDOWN). Receives from ANY_SOURCE are left posted: another sender may still match them.

    /** Whether the peer at [fiAddr] was reported dead; the report, or null. */
    @JvmSynthetic
    internal fun deadPeer(fiAddr: Long): String? {
        if (!anyDead) return null // no lock, no boxed key while every peer lives
        return locked { dead[fiAddr] }
    }

    /** Adds [op] to the directed receives (under [lock], from its post). */
    @JvmSynthetic
    internal fun postedDirected(op: DirectedRecv) {
        val head = directed
        op.prevDirected = null
        op.nextDirected = head
        head?.prevDirected = op
        directed = op
        op.inDirected = true
    }

    /** Removes [op] from the directed receives if it is there (under [lock], from its completion). */
    @JvmSynthetic
    internal fun finishedDirected(op: DirectedRecv) {
        if (!op.inDirected) return
        val prev = op.prevDirected
        val next = op.nextDirected
        if (prev == null) directed = next else prev.nextDirected = next
        next?.prevDirected = prev
        op.prevDirected = null
        op.nextDirected = null
        op.inDirected = false
    }

    private fun peerDown(fiAddr: Long, message: String) {
        dead[fiAddr] = message
        anyDead = true
        var op = directed
        while (op != null) {
            val next = op.nextDirected
            if (op.sourceAddr == fiAddr) {
                op.failedPeer = message
                ep.cancel(op) // its ECANCELED completion is dispatched later, which unlinks it
            }
            op = next
        }
    }

    // ## The pool of sends and receives ##

    /** A send from the pool, else a new one. */
    @JvmSynthetic
    internal fun takeSend(): SendOp {
        val op = locked { sendPool.take() } ?: return SendOp(this)
        op.pooled = false
        op.reset()
        return op
    }

    /** A receive from the pool, else a new one. */
    @JvmSynthetic
    internal fun takeRecv(): RecvOp {
        val op = locked { recvPool.take() } ?: return RecvOp(this)
        op.pooled = false
        op.reset()
        return op
    }

    /**
     * Returns [op] to its pool if it is a spent send or receive whose completion has been dispatched (the endpoint
     * holds it no more); anything else is left alone.
     */
    @JvmSynthetic
    internal fun recycle(op: Request) {
        if (!op.done || !op.isNull || op.pooled) return
        locked {
            if (op.pooled) return
            when (op) {
                is SendOp ->
                    if (sendPool.give(op)) {
                        op.clear()
                        op.pooled = true
                    }
                is RecvOp ->
                    if (!op.inDirected && recvPool.give(op)) {
                        op.clear()
                        op.pooled = true
                    }
                else -> {}
            }
        }
    }

    /**
     * Progress until [done] says so, through the domain's one wait under [waitPolicy]: polls busily (as MPI
     * implementations do), then yields, and parks briefly only after the spin and yield polls of [MpiParams].
     */
    @JvmSynthetic
    internal inline fun progressUntil(done: () -> Boolean) {
        domain.driveUntil(Domain.NO_DEADLINE, { progress() }, done)
    }

    /**
     * Looks until [found] says so, idling under [waitPolicy] between looks: for a look that drives progress itself (a
     * probe), so the wait drives nothing more.
     */
    @JvmSynthetic
    internal inline fun lookUntil(found: () -> Boolean) {
        domain.driveUntil(Domain.NO_DEADLINE, { 0 }, found)
    }

    override fun toString(): String = "Mpi(rank ${bootstrap.rank} of ${bootstrap.size}, ${ep.info.provider})"

    public companion object {
        /** `MPI_ANY_SOURCE`. */
        public const val ANY_SOURCE: Int = -2
        /** `MPI_ANY_TAG`. */
        public const val ANY_TAG: Int = -1
        /** `MPI_PROC_NULL`: sends and receives with it complete at once, moving nothing. */
        public const val PROC_NULL: Int = -3
        /**
         * `MPI_IN_PLACE`: pass this buffer (compared by identity) where MPI allows in-place collectives; the data is
         * then taken from, and left in, the receive buffer.
         */
        @JvmField public val IN_PLACE: java.nio.ByteBuffer = java.nio.ByteBuffer.allocate(0)
        /** `MPI_ROOT` (intercommunicator collectives). */
        public const val ROOT: Int = -4
        /** `MPI_UNDEFINED`. */
        public const val UNDEFINED: Int = -32766
        /** `MPI_BSEND_OVERHEAD`: bytes of attached buffer each buffered send uses beyond its data. */
        public const val BSEND_OVERHEAD: Int = 64
        /** `MPI_TAG_UB`. */
        public const val TAG_UB: Int = MatchBitsDescriptor.TAG_UB
        /** `MPI_VERSION` and `MPI_SUBVERSION` of the semantics implemented. */
        public const val VERSION: Int = 3
        public const val SUBVERSION: Int = 1

        internal const val ADDRESS_KEY: String = "braid.mpi.addr"
        private const val PARK_NANOS = 50_000L

        /**
         * How every wait of a process idles (its domain's idle policy): spin through [MpiParams.SPIN_POLLS] empty
         * polls, yield through [MpiParams.YIELD_POLLS], then park 50 µs at a time.
         */
        private fun waitPolicy(settings: Settings): IdlePolicy =
            IdlePolicy(
                IdleKind.BACKOFF,
                PARK_NANOS,
                settings[MpiParams.SPIN_POLLS],
                settings[MpiParams.YIELD_POLLS],
                PARK_NANOS,
            )

        /** How often an offloaded collective's wait checks that the local ranks it waits for still run. */
        private const val OFFLOAD_LIVENESS_MILLIS = 10L

        /** The event queue (peer failures) is read on every this many progress calls (a power of two). */
        private const val EQ_EVERY = 256
        /** Completions read from the queue at once. */
        private const val COMPLETION_BATCH = 16
        /** Receives posted under one acquisition of the domain's lock ([postReceives]): a window of them. */
        private const val RECV_BATCH = 64
        /** The most idle sends (and receives) a process keeps for reuse. */
        private const val POOL_MAX = 1024

        private val live = AtomicInteger()
        @Volatile private var everInitialized = false
        private val start = System.nanoTime()

        /**
         * `MPI_Init_thread`: opens this process's endpoint and builds the world from [bootstrap] (collective over the
         * job: every rank calls it). [required] is what the caller needs; [Mpi.threadLevel] says what it got (up to
         * [ThreadLevel.MULTIPLE]).
         */
        @JvmStatic
        @JvmOverloads
        public fun init(
            bootstrap: Bootstrap,
            required: ThreadLevel = ThreadLevel.SINGLE,
            options: MpiOptions = MpiOptions(),
        ): Mpi = Mpi(bootstrap, required, options).joinParent()

        /**
         * `MPI_Init`: the world the launcher started this process in ([Bootstrap.detect]: Hydra's PMI-1/PMI-2, Open
         * MPI's PMIx, `braid run`, or a singleton world of one), with the endpoint [MpiOptions] chooses (shm for one
         * host, the link for several).
         */
        @JvmStatic public fun init(): Mpi = initThread(ThreadLevel.SINGLE)

        /** `MPI_Init(argc, argv)`: [init]; the arguments are the program's own (nothing here reads them). */
        @JvmStatic public fun init(@Suppress("UNUSED_PARAMETER") args: Array<String>): Mpi = init()

        /** `MPI_Init_thread`: [init] asking for [required]; [Mpi.threadLevel] says what was provided. */
        @JvmStatic
        @JvmOverloads
        public fun initThread(required: ThreadLevel, options: MpiOptions = MpiOptions()): Mpi {
            val boot = Bootstrap.detect()
            return try {
                Mpi(boot, required, options).joinParent()
            } catch (t: Throwable) {
                runCatching { boot.close() }
                throw t
            }
        }

        /** `MPI_Init_thread(argc, argv, required)`. */
        @JvmStatic
        public fun initThread(@Suppress("UNUSED_PARAMETER") args: Array<String>, required: ThreadLevel): Mpi =
            initThread(required)

        /** `MPI_Initialized`: whether any instance in this JVM has been initialized. */
        @JvmStatic public fun isInitialized(): Boolean = everInitialized

        /** `MPI_Finalized`: whether instances were initialized and all of them are finalized. */
        @JvmStatic public fun isFinalized(): Boolean = everInitialized && live.get() == 0

        /** `MPI_Wtime`: seconds since an arbitrary point fixed in this JVM. */
        @JvmStatic public fun wtime(): Double = (System.nanoTime() - start) / 1e9

        /** `MPI_Wtick`: [wtime]'s resolution in seconds. */
        @JvmStatic public fun wtick(): Double = 1e-9

        /** `MPI_Get_library_version`. */
        @JvmStatic
        public fun libraryVersion(): String = "Braid mpi-shim (MPI $VERSION.$SUBVERSION semantics over braid rail-core)"
    }
}

/**
 * The hints for [provider] (resolved from [MpiOptions.provider]) under [MpiOptions.settings]: the link's rails
 * ([MpiOptions.links], [LinkParams.LINKS]; only the link reads them), and the eager limit of the shm rail
 * ([MpiOptions.shmEagerSize]; the parameter comes from the registry, [RailLimit.EAGER_SIZE], and one set in the
 * environment or the settings wins over the MPI layer's default, not over an explicit option).
 */
private fun hints(provider: String, options: MpiOptions, extraCaps: Long = 0): Hints {
    var hints = Hints(caps = Caps.MSG or Caps.TAGGED or extraCaps, provider = provider, settings = options.settings)
    options.links?.let { hints = hints.with(LinkParams.LINKS, it) }
    val shmEager = Braid.limitParameter(SHM, RailLimit.EAGER_SIZE) ?: return hints
    val eager =
        options.shmEagerSize
            ?: if (hints.settings.resolve(shmEager).source == ParamSource.DEFAULT) MpiOptions.DEFAULT_SHM_EAGER_SIZE
            else null
    if (eager != null) hints = hints.with(shmEager, eager)
    return hints
}

/** The shared-memory rail, whose eager limit [MpiOptions.shmEagerSize] sets. */
private const val SHM = "shm"

/**
 * [MpiOptions.AUTO]: every rank puts its host identity (rail-core's, so "same host" means what shm means by it) and
 * reads the others'; shm when all are this host's, else the link.
 */
private fun chooseProvider(bootstrap: Bootstrap): String {
    if (bootstrap.size == 1) return "shm"
    val mine = HostIdentity.id
    bootstrap.put(HOST_KEY, java.nio.ByteBuffer.allocate(8).putLong(mine).array())
    bootstrap.fence()
    for (r in 0 until bootstrap.size) {
        if (r == bootstrap.rank) continue
        if (java.nio.ByteBuffer.wrap(bootstrap.get(r, HOST_KEY)).getLong() != mine) return "link"
    }
    return "shm"
}

private const val HOST_KEY = "braid.mpi.host"
