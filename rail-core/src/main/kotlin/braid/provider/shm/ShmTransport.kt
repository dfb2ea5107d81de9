package braid.provider.shm

import braid.core.AtomicDatatype
import braid.core.AtomicForm
import braid.core.AtomicOp
import braid.core.Caps
import braid.core.Errno
import braid.core.FabricException
import braid.core.FiAddr
import braid.core.Info
import braid.core.OpFlags
import braid.core.RailCounters
import braid.core.RxEntry
import braid.core.shm.JobKeyProof
import braid.core.shm.ProcessIdentity
import braid.core.shm.ProcessWatch
import braid.core.shm.ShmSegment
import braid.core.telemetry.Telemetry
import braid.provider.MessageEngine
import braid.provider.RailAv
import braid.provider.RailHost
import braid.provider.RailTimer
import braid.provider.RmaEngine
import braid.provider.Transport
import braid.provider.shm.FrameDescriptor.FRAG_HEADER_LENGTH
import braid.provider.shm.FrameDescriptor.HEADER_LENGTH
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import org.agrona.collections.Long2ObjectHashMap
import org.agrona.concurrent.MessageHandler
import org.agrona.concurrent.UnsafeBuffer
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor

/**
 * The shm rail's part of one endpoint: the endpoint file with its doorbell, the channels to and from each peer
 * ([ShmOutChannel], [ShmInChannel]), and the liveness checks. The message protocol is [MessageEngine]'s and RMA's is
 * [RmaEngine]'s; the channels are their outlets and adapters.
 *
 * Every sender-receiver pair has its own channel file (created by the sender, announced through the receiver's
 * doorbell) holding three single-producer rings: message heads (the data ring), rendezvous fragments and RMA requests
 * (the bulk ring), and control back to the sender. One producer per ring needs no CAS, lets a receiver push back one
 * sender without stalling the others (a head it cannot take stays in that sender's data ring), and lets each side tell
 * cleanly which peer died.
 *
 * Protocol: a message up to the eager size is one EAGER record in the data ring. A larger one is an RTS; once matched,
 * from [ShmParams.PULL_SIZE] on (every size by default) the receiver copies the message straight out of the sender's
 * off-heap buffer with `process_vm_readv` (one copy) and answers PULLED. From [ShmParams.SHARE_SIZE] on, that copy is
 * split ([ShmSplitCopy]): the receiver offers the sender a share (a SHARE control record) and both claim chunks of
 * [ShmParams.SHARE_CHUNK] from the channel's split slot and copy them at once, the receiver pulling, the sender pushing
 * with `process_vm_writev`; a sender that does not poll meanwhile leaves every chunk to the receiver. Below the pull
 * size, or where it cannot pull, it answers CTS and the sender streams FRAG records of [ShmParams.FRAG_SIZE] through
 * the bulk ring: two copies, but made at once, the sender copying in while the receiver copies out (MPICH's shm LMT
 * does the same).
 *
 * Not thread-safe: the endpoint calls in with its domain's lock held.
 */
internal class ShmTransport(
    internal val ep: RailHost,
    private val info: Info,
    internal val av: RailAv,
    private val hostId: Long,
    private val jobKey: JobKeyProof,
) : Transport {
    private val name = ShmDirectory.newEndpointName()
    override val address: ByteArray = ShmAddressDescriptor.encode(hostId, name)

    internal val ringCapacity = info.settings[ShmParams.RING_SIZE]
    private val maxRecord = ringCapacity / 8
    internal val eagerSize = minOf(info.endpointAttr.eagerSize, maxRecord - HEADER_LENGTH)
    /** Payload bytes of one streamed fragment ([ShmParams.FRAG_SIZE], at most what one bulk-ring record holds). */
    internal val fragSize = minOf(info.settings[ShmParams.FRAG_SIZE], maxRecord - FRAG_HEADER_LENGTH) and 7.inv()
    private val livenessNanos = info.settings[ShmParams.LIVENESS_MS] * 1_000_000
    /** Whether a receiver may pull a rendezvous payload with one copy (`process_vm_readv`). */
    internal val cma = info.settings[ShmParams.CMA] && CrossMemoryAttach.available
    /** The smallest rendezvous message pulled with one copy ([ShmParams.PULL_SIZE]); smaller ones stream. */
    internal val pullSize = info.settings[ShmParams.PULL_SIZE].toLong()
    /** The smallest pulled message whose copy is shared with the sender ([ShmParams.SHARE_SIZE]; 0: never). */
    internal val shareSize = info.settings[ShmParams.SHARE_SIZE].toLong()
    /** The chunk size of a shared copy ([ShmParams.SHARE_CHUNK]). */
    internal val shareChunk = info.settings[ShmParams.SHARE_CHUNK]
    /**
     * This endpoint's iovecs for single-copy pulls (never shared between endpoints: see [CrossMemoryAttach.Iovecs]).
     */
    internal val cmaIov = CrossMemoryAttach.Iovecs()

    private var file: ShmSegment? = null
    /** Published in our endpoint file: senders prove the job key over it ([EndpointFileDescriptor] says how). */
    private val nonce = JobKeyProof.nonce()
    /** Channel files refused for a failed key proof, so a second announcement is not looked at again. */
    private val refused = HashSet<String>()
    private lateinit var doorbell: ManyToOneRingBuffer
    private val outs = ArrayList<ShmOutChannel>()
    private val outByName = HashMap<String, ShmOutChannel>()
    private val outByAddr = Long2ObjectHashMap<ShmOutChannel>()
    private var outAvGeneration = -1L
    /** The channel [outFor] found last and its fi_addr: a window to one peer finds it without a hash look-up. */
    private var lastOut: ShmOutChannel? = null
    private var lastOutAddr = FiAddr.NOTAVAIL
    private val ins = ArrayList<ShmInChannel>()
    /**
     * The liveness checks' turn: raised every [ShmParams.LIVENESS_MS] by the process's one timer, taken by [progress].
     */
    private var liveness: RailTimer.Task? = null
    internal val rma = RmaEngine(ep, "shm", maxRecord, info.txAttr.size)
    private val doorbellHandler = MessageHandler { _, buffer, index, length ->
        attach(buffer.getStringWithoutLengthUtf8(index, length))
    }

    override fun enable() {
        ShmRingWarmup.start()
        if (ringCapacity < 1024 || Integer.bitCount(ringCapacity) != 1) {
            throw FabricException.invalid(
                "shm endpoint: ring capacity $ringCapacity must be a power of two ≥ 1024; set ShmParams.RING_SIZE (BRAID_SHM_RING_SIZE)"
            )
        }
        if (eagerSize < 0)
            throw FabricException.invalid("shm endpoint: eager size ${info.endpointAttr.eagerSize} must be ≥ 0")
        val f = ShmDirectory.createAndMap(ShmDirectory.endpointFile(name), EndpointFileDescriptor.length())
        val b = f.buffer
        b.putInt(EndpointFileDescriptor.MAGIC_OFFSET, EndpointFileDescriptor.MAGIC)
        b.putInt(EndpointFileDescriptor.VERSION_OFFSET, EndpointFileDescriptor.VERSION)
        b.putLong(EndpointFileDescriptor.PID_OFFSET, ProcessIdentity.SELF.pid)
        b.putInt(EndpointFileDescriptor.DOORBELL_CAPACITY_OFFSET, EndpointFileDescriptor.DOORBELL_CAPACITY)
        b.putBytes(EndpointFileDescriptor.NONCE_OFFSET, nonce)
        b.putBytes(EndpointFileDescriptor.KEY_PROOF_OFFSET, jobKey.proof(EndpointFileDescriptor.KEY_LABEL, nonce, name))
        doorbell =
            ManyToOneRingBuffer(
                UnsafeBuffer(
                    b,
                    EndpointFileDescriptor.DOORBELL_OFFSET,
                    EndpointFileDescriptor.DOORBELL_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH,
                )
            )
        b.putIntVolatile(EndpointFileDescriptor.STATE_OFFSET, EndpointFileDescriptor.STATE_OPEN)
        file = f
        // Checked by a waiting endpoint only, in its duty cycle: no undriven action (nothing runs for an idle one).
        liveness = RailTimer.schedule("shm liveness of endpoint $name", livenessNanos)
    }

    // ## Duty cycle ##

    override fun progress(): Int {
        var work = 0
        if (doorbell.size() > 0) work += doorbell.read(doorbellHandler)
        for (i in 0 until ins.size) work += ins[i].poll()
        for (i in 0 until outs.size) work += outs[i].poll()
        // No clock read here (one costs about as much as an idle cycle): the timer raises a flag.
        val live = liveness
        if (live != null && live.due && live.take()) checkPeers()
        return work
    }

    // ## Send side ##

    internal val engine = MessageEngine(ep, av.rail, info.txAttr.size)
    override val counters: RailCounters
        get() = engine.counters

    override fun send(buffer: DirectBuffer, dest: Long, tag: Long, data: Long, flags: Long, context: Any?): Int {
        val out =
            when (val r = outFor(dest)) {
                is ShmUnreachable -> return r.rc
                is ShmOutChannel -> r
            }
        if (out.dead) return out.deadErrno
        // Inject copies into the ring at once, so it is bounded by what one ring record holds.
        if (flags and OpFlags.INJECT != 0L && buffer.capacity() > eagerSize) return -Errno.EMSGSIZE
        return engine.send(out.sendPath, buffer, tag, data, flags, context)
    }

    /**
     * The channel to [dest], connecting on first use; or, if it cannot be reached, why ([ShmUnreachable]: `-EINVAL`,
     * not an shm address; `-EHOSTUNREACH`, another host, or no endpoint; `-ECONNREFUSED`, closed; `-EHOSTDOWN`, its
     * process gone).
     */
    private fun outFor(dest: Long): ShmReach {
        val generation = av.generation
        if (generation != outAvGeneration) {
            outByAddr.clear()
            lastOut = null
            outAvGeneration = generation
        }
        val last = lastOut
        if (last != null && lastOutAddr == dest) return last
        val cached = outByAddr.get(dest)
        if (cached != null) {
            lastOut = cached
            lastOutAddr = dest
            return cached
        }
        val peer = av.query(dest) as? ShmAddress ?: return ShmUnreachable.NOT_SHM
        if (peer.hostId != hostId) return ShmUnreachable.NO_ENDPOINT
        val out = outByName[peer.name] ?: connect(peer.name)
        if (out is ShmOutChannel) outByAddr.put(dest, out)
        return out
    }

    /**
     * Opens the channel to [dst] and announces it; or the negated errno saying why not (reported on the EQ too). A
     * receiver whose endpoint proof shows another job key gets a channel that is dead before anything is written to it:
     * every send to it answers `-EACCES`.
     */
    private fun connect(dst: String): ShmReach {
        val epPath = ShmDirectory.endpointFile(dst)
        val epFile = ShmDirectory.mapExisting(epPath)
        val refused =
            if (epFile == null) "no endpoint file $epPath (not on this host, or closed)"
            else
                try {
                    EndpointFileDescriptor.check(epFile.buffer, epPath)
                    null
                } catch (e: FabricException) {
                    e.message
                }
        if (epFile == null || refused != null) {
            epFile?.unmap()
            ep.eventError(Errno.EHOSTUNREACH, "shm: peer $dst: $refused")
            return ShmUnreachable.NO_ENDPOINT
        }
        val owner = ShmDirectory.owner(dst)?.let { ProcessWatch.watch(it) }
        if (
            epFile.buffer.getIntVolatile(EndpointFileDescriptor.STATE_OFFSET) != EndpointFileDescriptor.STATE_OPEN ||
                owner == null
        ) {
            epFile.unmap()
            owner?.close()
            if (owner == null) {
                // Dead before we ever sent to it: the peer is down, as one that died connected would be.
                ep.eventError(
                    Errno.EHOSTDOWN,
                    "shm: peer $dst (process ${ShmDirectory.pidOf(dst)}) is not running; sends to it fail",
                )
                return ShmUnreachable.DOWN
            }
            ep.eventError(Errno.ECONNREFUSED, "shm: peer $dst closed its endpoint; sends to it are refused")
            return ShmUnreachable.REFUSED
        }
        val path = ShmDirectory.channelFile(dst, name)
        val ch = ShmDirectory.createAndMap(path, ChannelFileDescriptor.length(ringCapacity))
        val b = ch.buffer
        b.putInt(ChannelFileDescriptor.MAGIC_OFFSET, ChannelFileDescriptor.MAGIC)
        b.putInt(ChannelFileDescriptor.VERSION_OFFSET, ChannelFileDescriptor.VERSION)
        b.putInt(ChannelFileDescriptor.DATA_CAPACITY_OFFSET, ringCapacity)
        b.putInt(ChannelFileDescriptor.CTRL_CAPACITY_OFFSET, ChannelFileDescriptor.CTRL_CAPACITY)
        val theirNonce =
            ByteArray(EndpointFileDescriptor.NONCE_LENGTH).also {
                epFile.buffer.getBytes(EndpointFileDescriptor.NONCE_OFFSET, it)
            }
        val theirProof =
            ByteArray(EndpointFileDescriptor.KEY_PROOF_LENGTH).also {
                epFile.buffer.getBytes(EndpointFileDescriptor.KEY_PROOF_OFFSET, it)
            }
        // Checked before anything is written: a receiver with another key would drop what we sent.
        val sameKey = jobKey.verify(EndpointFileDescriptor.KEY_LABEL, theirNonce, theirProof, dst)
        b.putBytes(
            ChannelFileDescriptor.PROOF_OFFSET,
            jobKey.proof(ChannelFileDescriptor.KEY_LABEL, theirNonce, dst, name),
        )
        b.putIntVolatile(ChannelFileDescriptor.SENDER_STATE_OFFSET, EndpointFileDescriptor.STATE_OPEN)
        val out = ShmOutChannel(this, dst, owner, epFile, ch)
        outs += out
        outByName[dst] = out
        // Announced either way, so a receiver with another key still refuses us and says so on its side.
        out.announce()
        if (!sameKey) {
            out.refused = true
            out.fail(
                Errno.EACCES,
                "(process ${ShmDirectory.pidOf(dst)}) does not hold this job's key (BRAID_JOB_KEY differs); nothing is sent to it",
            )
        }
        return out
    }

    // ## RMA and atomics: the protocol is RmaEngine's; requests ride the bulk ring, replies the control ring ##

    override val rmaCaps: Long
        get() = Caps.RMA_ALL

    override fun maxAtomicCount(type: AtomicDatatype, form: AtomicForm): Int = rma.maxAtomicCount(type, form)

    override fun write(
        buffer: DirectBuffer,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        flags: Long,
        context: Any?,
    ): Int {
        val out =
            when (val r = outFor(dest)) {
                is ShmUnreachable -> return r.rc
                is ShmOutChannel -> r
            }
        if (out.dead) return out.deadErrno
        return rma.write(out.rmaPath, dest, buffer, remoteOffset, key, flags, context)
    }

    override fun read(
        buffer: MutableDirectBuffer,
        src: Long,
        remoteOffset: Long,
        key: Long,
        flags: Long,
        context: Any?,
    ): Int {
        val out =
            when (val r = outFor(src)) {
                is ShmUnreachable -> return r.rc
                is ShmOutChannel -> r
            }
        if (out.dead) return out.deadErrno
        return rma.read(out.rmaPath, src, buffer, remoteOffset, key, flags, context)
    }

    override fun atomic(
        operand: DirectBuffer,
        compare: DirectBuffer?,
        result: MutableDirectBuffer?,
        dest: Long,
        remoteOffset: Long,
        key: Long,
        type: AtomicDatatype,
        op: AtomicOp,
        count: Int,
        flags: Long,
        context: Any?,
    ): Int {
        val out =
            when (val r = outFor(dest)) {
                is ShmUnreachable -> return r.rc
                is ShmOutChannel -> r
            }
        if (out.dead) return out.deadErrno
        return rma.atomic(
            out.rmaPath,
            dest,
            operand,
            compare,
            result,
            remoteOffset,
            key,
            type,
            op,
            count,
            flags,
            context,
        )
    }

    // ## Receive side ##

    /** Maps a channel a sender announced through our doorbell. */
    private fun attach(fileName: String) {
        if (!fileName.startsWith("$name~") || !fileName.endsWith(".ch")) return
        val sender = fileName.removePrefix("$name~").removeSuffix(".ch")
        val f = ShmDirectory.mapExisting(ShmDirectory.root.resolve(fileName)) ?: return
        // A file this build cannot read is left alone (not even marked) and reported: the sender
        // runs another Braid version, or the file is not a channel at all.
        val capacity =
            try {
                ChannelFileDescriptor.check(f.buffer, f.path)
            } catch (e: FabricException) {
                f.unmap()
                ep.eventError(e.code, "shm endpoint $name refused the channel from $sender: ${e.message}")
                return
            }
        if (!proven(sender, f)) return
        f.buffer.putIntVolatile(ChannelFileDescriptor.RECEIVER_STATE_OFFSET, EndpointFileDescriptor.STATE_OPEN)
        ins += ShmInChannel(this, sender, f, capacity)
    }

    /**
     * Whether the sender of channel [f] proved our job key ([EndpointFileDescriptor]). If not, the channel is marked
     * refused (its sender fails its sends with EACCES), the refusal is logged and reported on the event queue, and
     * nothing in the channel is ever read.
     */
    private fun proven(sender: String, f: ShmSegment): Boolean {
        val proof =
            ByteArray(ChannelFileDescriptor.PROOF_LENGTH).also {
                f.buffer.getBytes(ChannelFileDescriptor.PROOF_OFFSET, it)
            }
        if (jobKey.verify(ChannelFileDescriptor.KEY_LABEL, nonce, proof, name, sender)) return true
        f.buffer.putIntVolatile(ChannelFileDescriptor.RECEIVER_STATE_OFFSET, ChannelFileDescriptor.RECEIVER_REFUSED)
        f.unmap()
        if (refused.add(sender)) {
            val why =
                "shm endpoint $name refused the channel from $sender (process ${ShmDirectory.pidOf(sender)}): " +
                    "it does not hold this job's key (BRAID_JOB_KEY differs); nothing it sent is used"
            log.log(System.Logger.Level.WARNING, why)
            ep.eventError(Errno.EACCES, why)
        }
        return false
    }

    // ## Peer operations of the shared receive context: the engine's ##

    override fun startMsg(entry: RxEntry) = engine.startMsg(entry)

    override fun startTag(entry: RxEntry) = engine.startTag(entry)

    override fun discardMsg(entry: RxEntry) = engine.discardMsg(entry)

    override fun discardTag(entry: RxEntry) = engine.discardTag(entry)

    /** Split copies this side received (and the chunks it pulled of them), and the chunks it pushed into receivers. */
    override fun telemetry(): Map<String, Long> =
        mapOf(
            Telemetry.SPLIT_COPIES to ins.sumOf { it.split.splits },
            Telemetry.SPLIT_CHUNKS_PULLED to ins.sumOf { it.split.pulledChunks },
            Telemetry.SPLIT_CHUNKS_PUSHED to outs.sumOf { it.split.pushedChunks },
        )

    /** The state of every channel, in words, for diagnostics. */
    override fun toString(): String = buildString {
        append("shm endpoint $name")
        for (o in outs) append("\n  to ${o.dst}: ${o.describe()}")
        for (i in ins) append("\n  from ${i.sender}: ${i.describe()}")
    }

    // ## Liveness and close ##

    private fun checkPeers() {
        for (i in 0 until outs.size) {
            val out = outs[i]
            if (out.dead) continue
            val why = out.receiverGone() ?: continue
            // What the receiver answered before it closed (a synchronous send's ack, a CTS) counts first.
            out.drainControl()
            out.fail(
                if (out.refused) Errno.EACCES else if (why.startsWith("closed")) Errno.ECONNRESET else Errno.EHOSTDOWN,
                why,
            )
        }
        for (i in 0 until ins.size) {
            val ch = ins[i]
            if (ch.dead) {
                engine.failDirected(ch.fiAddr, "shm: peer ${ch.sender} ${ch.senderGone}")
                continue
            }
            if (ch.senderGone == null) ch.senderGone = ch.checkSender()
            // Everything the sender put in the ring before it went is delivered first; a record it
            // claimed and never committed (it died writing it) ends what can be delivered.
            if (
                ch.senderGone != null &&
                    (ch.drained() || ch.recvPath.inflight.size == 0 && ch.data.size() == 0 || ch.stuck())
            )
                ch.fail()
        }
        if (ep.srx.postedCount > 0) ep.srx.forEachDirectedSource { addr -> checkSilentPeer(addr) }
    }

    /**
     * A receive waits for a peer that has never sent to us, so no channel watches it: watch its process and its
     * endpoint file directly, and fail the receives once the process is gone or the endpoint closed (a closed endpoint
     * of a live process is as gone as a dead one).
     */
    private fun checkSilentPeer(addr: Long) {
        for (i in 0 until ins.size) if (ins[i].fiAddr == addr) return
        val peer = av.query(addr) as? ShmAddress ?: return
        if (peer.hostId != hostId) return
        val silent =
            silentPeers.getOrPut(peer.name) {
                SilentPeer(ShmDirectory.owner(peer.name)?.let { ProcessWatch.watch(it) })
            }
        val gone = silent.gone(peer.name) ?: return
        // Its channel may have been announced just now: read the doorbell before deciding.
        if (doorbell.size() > 0) return
        val why = "shm: peer ${peer.name} $gone"
        engine.failDirected(addr, why)
        engine.peerDown(addr, why)
    }

    /** A peer a directed receive waits for that has no channel to us: its process, and its endpoint file once seen. */
    private class SilentPeer(private val watcher: ProcessWatch?) {
        private var file: ShmSegment? = null
        private var unseen = 0

        /** Why the peer can send nothing more, or null while it may. */
        fun gone(name: String): String? {
            if (watcher == null || !watcher.alive()) return "(process ${ShmDirectory.pidOf(name)}) is not running"
            val f = file ?: ShmDirectory.mapExisting(ShmDirectory.endpointFile(name)).also { file = it }
            if (f == null) {
                // Never seen: not yet enabled, or closed (and removed) before we looked.
                return if (++unseen >= UNSEEN_CHECKS) "has no open endpoint (its process is alive)" else null
            }
            if (f.buffer.getIntVolatile(EndpointFileDescriptor.STATE_OFFSET) != EndpointFileDescriptor.STATE_OPEN)
                return "closed its endpoint"
            return null
        }

        fun close() {
            watcher?.close()
            file?.unmap()
            file = null
        }

        private companion object {
            /** Liveness checks a peer's endpoint file may be missing before it counts as closed. */
            const val UNSEEN_CHECKS = 20
        }
    }

    private val silentPeers = HashMap<String, SilentPeer>()

    override fun abort(err: Int, why: String) {
        ep.eventError(err, "shm endpoint $name: $why")
        for (out in outs) out.fail(err, "is unreachable: $why")
        for (ch in ins) if (!ch.dead) {
            ch.senderGone = "is unreachable: $why"
            ch.fail()
        }
    }

    override fun close() {
        val f = file ?: return
        file = null
        liveness?.cancel()
        liveness = null
        // Answers still queued for want of ring room go now if they fit: a sender waiting on an ack sees it.
        for (ch in ins) if (!ch.dead) engine.flushControl(ch.recvPath)
        f.buffer.putIntVolatile(EndpointFileDescriptor.STATE_OFFSET, EndpointFileDescriptor.STATE_CLOSED)
        for (out in outs) out.close()
        for (ch in ins) ch.close()
        outs.clear()
        ins.clear()
        outByName.clear()
        outByAddr.clear()
        lastOut = null
        silentPeers.values.forEach { it.close() }
        silentPeers.clear()
        f.delete()
        f.unmap()
    }
}

private val log: System.Logger = System.getLogger("braid.provider.shm")
