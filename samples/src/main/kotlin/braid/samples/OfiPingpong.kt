package braid.samples

import braid.core.Braid
import braid.core.Caps
import braid.core.Completion
import braid.core.CompletionError
import braid.core.CqFormat
import braid.core.Errno
import braid.core.FiAddr
import braid.core.Hints
import braid.core.OpFlags
import braid.core.ParamSource
import braid.provider.ofi.OfiAddresses
import braid.provider.ofi.OfiInfos
import braid.provider.ofi.OfiParams
import java.io.PrintStream
import java.nio.ByteBuffer
import java.util.concurrent.TimeUnit
import org.agrona.concurrent.UnsafeBuffer

/**
 * `braid pingpong -p ofi:PROV` speaks `fi_pingpong`'s own protocol (libfabric `util/pingpong.c`, RDM endpoints), so
 * either end may be Debian's `fi_pingpong -p PROV -e rdm`, and the other Braid's native rail:
 * - the control connection (port 47592, `-B`/`-P`) carries each side's raw `fi_getname` address as a 4-byte big-endian
 *   length, its `addr_format` (4 bytes, the host's order) and the bytes (the server sends first), then `q\0`/`a\0`
 *   syncs, each size's count as 10 bytes of decimal text (client to server) answered by `cnt ok\0`;
 * - the data are untagged messages of the transfer size into receives of at least 64 bytes, filled and checked with
 *   `-c` from fi_pingpong's alphabet, starting at `(n * 7) mod 62` for the n-th message each side sends or checks;
 * - the run ends with a 4-byte `fin\0` message each way. The table is fi_pingpong's ([PerfFormat]), under one `#` line
 *   naming the native provider and domain.
 *
 * fi_pingpong's protocol leaves no room for Braid's [Warmup] (a C program needs none), so each Braid side warms its own
 * JIT first, alone, before the control connection: [warmUp] runs the timed loop's own code on an endpoint of its domain
 * that sends to itself over the same native provider, until HotSpot has gone quiet. Without it a short run
 * (fi_pingpong's 10k round trips) times mostly interpreted and C1 code: 64 bytes over `ofi:shm` read 9 us per transfer
 * against 1 us once warm.
 */
internal object OfiPingpong {
    private const val MIN_RECV = 64
    private const val COUNT_LENGTH = 10
    private const val ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    private const val SEED = 7
    private const val STALL_NANOS = 30_000_000_000L

    fun isNative(provider: String): Boolean = OfiInfos.isNativeName(provider)

    fun execute(
        options: PingpongOptions,
        out: PrintStream,
        connectAbort: () -> String? = { null },
        onListening: () -> Unit = {},
    ) {
        val client = options.isClient
        val maxSize = maxOf(options.sizes.maxOrNull() ?: 0, MIN_RECV)
        val hints = Hints(caps = Caps.MSG, provider = options.provider).with(OfiParams.RECV_SIZE, maxSize)
        // One message is in flight at a time: one native receive per queue, unless the caller chose a count, keeps the
        // receive buffer the rail copies out of hot in cache (16 of 1 MiB each cycled through 16 MiB).
        val info =
            Braid.getInfo(
                    if (hints.settings.resolve(OfiParams.RECV_COUNT).source == ParamSource.DEFAULT)
                        hints.with(OfiParams.RECV_COUNT, 1)
                    else hints
                )
                .first()
        val prov = info.settings[OfiParams.PROVIDER]
        Braid.fabric(info).use { fabric ->
            val domain = fabric.domain(info)
            val cq = domain.completionQueue(CqFormat.TAGGED)
            val av = domain.addressVector()
            val ep = domain.endpoint()
            ep.bind(cq, OpFlags.TRANSMIT or OpFlags.RECV)
            ep.bind(av)
            ep.enable()
            if (options.iterations > 0) {
                try {
                    warmUp(domain, maxOf(options.sizes.minOrNull() ?: 0, 1), maxSize, options.check, prov)
                } catch (e: CommandFailure) {
                    warmUpFailed(prov, e)
                } catch (e: braid.core.FabricException) {
                    warmUpFailed(prov, e)
                }
            }
            val control =
                if (client)
                    ControlChannel.connect(
                        options.serverAddress!!,
                        options.connectPort,
                        options.sourcePort,
                        connectAbort,
                    )
                else ControlChannel.accept(options.listenPort, options.acceptTimeoutSeconds, onListening)
            control.use {
                val mine = OfiAddresses.nativeAddress(ep.address)
                val format = OfiAddresses.addressFormat(ep.address)
                var theirFormat = 0
                fun sendName() =
                    control.send("sending the native address") {
                        writeInt(mine.size)
                        writeInt(Integer.reverseBytes(format))
                        write(mine)
                    }
                fun receiveName(): ByteArray =
                    control.receive("receiving the peer's native address") {
                        val n = readInt()
                        if (n !in 1..4096) throw CommandFailure("the peer sent an address of $n bytes; protocol error")
                        theirFormat = Integer.reverseBytes(readInt())
                        ByteArray(n).also { readFully(it) }
                    }
                val theirs =
                    if (client) receiveName().also { sendName() }
                    else {
                        sendName()
                        receiveName()
                    }
                val peer =
                    try {
                        av.insert(OfiAddresses.wrap(prov, theirFormat, theirs))
                    } catch (e: braid.core.FabricException) {
                        throw CommandFailure(
                            "ofi:$prov: the peer's ${theirs.size}-byte address was refused: ${e.message}",
                            e,
                        )
                    }
                val tx = UnsafeBuffer(ByteBuffer.allocateDirect(maxSize))
                val rx = UnsafeBuffer(ByteBuffer.allocateDirect(maxSize))
                val session = Session(ep, cq, peer, tx, rx, options.check, prov)
                session.postRecv(maxSize)
                var header = false
                for (size in options.sizes) {
                    sync(control, client)
                    val start = System.nanoTime()
                    session.trips(size, options.iterations, client)
                    val elapsed = System.nanoTime() - start
                    val acked = countExchange(control, client, session.received)
                    if (options.iterations > 0) {
                        if (!header) {
                            out.println("# rail: ofi ($prov ${info.domainName}), fi_pingpong protocol")
                            out.println(PerfFormat.HEADER)
                            header = true
                        }
                        out.println(PerfFormat.row(size, options.iterations.toLong(), acked, elapsed))
                        out.flush()
                    }
                    session.received = 0
                }
                session.finish()
            }
        }
    }

    /**
     * The JIT warm-up of this process alone, before the clock starts: fresh endpoints of [domain] (each with its own CQ
     * and AV; the session's endpoint is untouched) send [size]-byte messages to themselves through [Session.trips], the
     * very method the timed loop runs, in both roles and with the same data checks, so HotSpot compiles it and the
     * whole data path under it (Braid's endpoint, the native rail, the native provider). Each endpoint carries
     * [WARMUP_GENERATION] rounds and is replaced: a new endpoint's first messages take branches (an empty entry pool,
     * an address not yet inserted natively) that C2 would otherwise compile out, and the session's own endpoint would
     * then throw the compiled code away in its timed run. It stops as [Warmup]'s first warm-up of a regime does: once
     * this JVM has finished no compilation for [Warmup.QUIET_MILLIS], after at least [Warmup.FIRST_MIN_MILLIS] and
     * [Warmup.FIRST_MIN_ROUND_TRIPS], and at most [Warmup.FIRST_MAX_MILLIS] in all.
     */
    private fun warmUp(domain: braid.core.Domain, size: Int, maxSize: Int, check: Boolean, prov: String) {
        val tx = UnsafeBuffer(ByteBuffer.allocateDirect(maxSize))
        val rx = UnsafeBuffer(ByteBuffer.allocateDirect(maxSize))
        val start = System.nanoTime()
        var lastCompile = Warmup.compileMillis()
        var lastChange = start
        val end = start + TimeUnit.MILLISECONDS.toNanos(Warmup.FIRST_MAX_MILLIS)
        var trips = 0L
        while (true) {
            trips += warmGeneration(domain, size, tx, rx, check, prov, end)
            val now = System.nanoTime()
            val compile = Warmup.compileMillis()
            if (compile != lastCompile) {
                lastCompile = compile
                lastChange = now
            }
            val elapsed = TimeUnit.NANOSECONDS.toMillis(now - start)
            val young = elapsed < Warmup.FIRST_MIN_MILLIS || trips < Warmup.FIRST_MIN_ROUND_TRIPS
            val quiet =
                if (compile < 0) elapsed >= Warmup.FIRST_MAX_MILLIS / 5 // no compilation figures: a fixed second
                else TimeUnit.NANOSECONDS.toMillis(now - lastChange) >= Warmup.QUIET_MILLIS
            if (elapsed >= Warmup.FIRST_MAX_MILLIS || (!young && quiet)) return
        }
    }

    /** A provider that cannot send to itself gets no warm-up: the run goes on, timing a cold JIT, and says so. */
    private fun warmUpFailed(prov: String, e: Exception) {
        System.err.println(
            "braid pingpong: ofi:$prov: no JIT warm-up (an endpoint sending to itself failed: ${e.message}); the " +
                "first rows time a cold JIT"
        )
    }

    /**
     * One fresh self-addressed endpoint's share of [warmUp], [WARMUP_GENERATION] rounds or until [end] (a
     * [System.nanoTime] instant: a slow provider must not hold the run up); returns the round trips it ran.
     */
    private fun warmGeneration(
        domain: braid.core.Domain,
        size: Int,
        tx: UnsafeBuffer,
        rx: UnsafeBuffer,
        check: Boolean,
        prov: String,
        end: Long,
    ): Long {
        val av = domain.addressVector()
        val cq = domain.completionQueue(CqFormat.TAGGED)
        val ep = domain.endpoint()
        try {
            ep.bind(cq, OpFlags.TRANSMIT or OpFlags.RECV)
            ep.bind(av)
            ep.enable()
            val self = Session(ep, cq, av.insert(ep.address), tx, rx, check, prov, WARMUP_STALL_NANOS)
            self.postRecv(size)
            var rounds = 0
            while (rounds < WARMUP_GENERATION && System.nanoTime() - end < 0) {
                self.trips(size, WARMUP_CHUNK, client = true)
                self.send(size) // the server role answers a message first: here is one
                self.trips(size, WARMUP_CHUNK, client = false)
                self.receive(size)
                rounds++
            }
            return rounds * (2L * WARMUP_CHUNK + 1)
        } finally {
            ep.close()
            cq.close()
            av.close()
        }
    }

    private const val WARMUP_GENERATION = 20
    /** How long a warm-up message may take before the warm-up gives up (the provider cannot send to itself). */
    private const val WARMUP_STALL_NANOS = 2_000_000_000L
    private const val WARMUP_CHUNK = 100

    private fun sync(control: ControlChannel, client: Boolean) {
        val q = byteArrayOf('q'.code.toByte(), 0)
        val a = byteArrayOf('a'.code.toByte(), 0)
        fun expect(what: ByteArray) =
            control.receive("synchronising") {
                val got = ByteArray(what.size).also { readFully(it) }
                if (!got.contentEquals(what))
                    throw CommandFailure(
                        "the peer sent ${got.contentToString()} to synchronise, not ${what.contentToString()}"
                    )
            }
        if (client) {
            control.send("synchronising") { write(q) }
            expect(a)
        } else {
            expect(q)
            control.send("synchronising") { write(a) }
        }
    }

    private fun countExchange(control: ControlChannel, client: Boolean, received: Long): Long {
        val ok = "cnt ok\u0000".toByteArray(Charsets.US_ASCII)
        return if (client) {
            val text = received.toString().toByteArray(Charsets.US_ASCII).copyOf(COUNT_LENGTH)
            control.send("reporting the count") { write(text) }
            control.receive("waiting for the count acknowledgement") {
                val got = ByteArray(ok.size).also { readFully(it) }
                if (!got.contentEquals(ok)) throw CommandFailure("the server did not acknowledge the count")
            }
            received
        } else {
            val count =
                control.receive("receiving the count") {
                    val raw = ByteArray(COUNT_LENGTH).also { readFully(it) }
                    String(raw, Charsets.US_ASCII).trimEnd('\u0000').toLongOrNull()
                        ?: throw CommandFailure("the client sent an unreadable count ${raw.contentToString()}")
                }
            control.send("acknowledging the count") { write(ok) }
            count
        }
    }

    /** One endpoint's side of the data exchange, with fi_pingpong's fill and check counters. */
    private class Session(
        val ep: braid.core.Endpoint,
        val cq: braid.core.CompletionQueue,
        val peer: Long,
        val tx: UnsafeBuffer,
        val rx: UnsafeBuffer,
        val check: Boolean,
        val prov: String,
        val stallNanos: Long = STALL_NANOS,
    ) {
        var received = 0L
        private var fills = 0
        private var checks = 0
        private val c = Completion()
        private val err = CompletionError()
        private var rxDone = false
        private var txDone = false
        private val txCtx = Any()
        private val rxCtx = Any()

        fun postRecv(size: Int) {
            rxDone = false
            val rc = ep.tryRecv(rx, 0, maxOf(size, MIN_RECV), FiAddr.UNSPEC, rxCtx)
            if (rc != 0) throw CommandFailure("ofi:$prov: posting a receive failed: ${Errno.name(-rc)}")
        }

        fun send(size: Int) {
            if (check) fill(size)
            txDone = false
            while (true) {
                val rc = ep.trySend(tx, 0, size, peer, txCtx)
                if (rc == 0) break
                if (rc != -Errno.EAGAIN)
                    throw CommandFailure("ofi:$prov: send of $size bytes failed: ${Errno.name(-rc)}")
                poll()
            }
            await("the send of $size bytes") { txDone }
        }

        /** [n] round trips of [size] bytes: send then receive as the [client], receive then send as the server. */
        fun trips(size: Int, n: Int, client: Boolean) {
            for (i in 0 until n) {
                if (client) {
                    send(size)
                    receive(size)
                } else {
                    receive(size)
                    send(size)
                }
            }
        }

        fun receive(size: Int) {
            await("a $size-byte message from the peer") { rxDone }
            if (check) verify(size)
            received++
            // The whole buffer, as fi_pingpong posts it: the next message may be the next, larger, size's first.
            postRecv(rx.capacity())
        }

        /** fi_pingpong's end: a 4-byte `fin` each way, sent and received. */
        fun finish() {
            "fin\u0000".toByteArray(Charsets.US_ASCII).forEachIndexed { i, b -> tx.putByte(i, b) }
            txDone = false
            while (ep.trySend(tx, 0, 4, peer, txCtx) == -Errno.EAGAIN) poll()
            await("the fin message's send") { txDone }
            await("the peer's fin message") { rxDone }
        }

        private fun fill(size: Int) {
            var k = (fills++ * SEED) % ALPHABET.length
            for (j in 0 until size) {
                tx.putByte(j, ALPHABET[k++].code.toByte())
                if (k >= ALPHABET.length) k = 0
            }
        }

        private fun verify(size: Int) {
            val iteration = checks
            var k = (checks++ * SEED) % ALPHABET.length
            for (j in 0 until size) {
                if (rx.getByte(j) != ALPHABET[k++].code.toByte())
                    throw CommandFailure("data check failed: message $iteration of $size bytes differs at byte $j")
                if (k >= ALPHABET.length) k = 0
            }
        }

        private inline fun await(what: String, done: () -> Boolean) {
            val start = System.nanoTime()
            var polls = 0
            while (!done()) {
                poll()
                if (++polls and 0x3fff == 0 && System.nanoTime() - start > stallNanos)
                    throw CommandFailure("ofi:$prov: no progress for ${stallNanos / 1_000_000_000} s waiting for $what")
            }
        }

        private fun poll() {
            val n = cq.read(c)
            if (n > 0) {
                when (c.context) {
                    txCtx -> txDone = true
                    rxCtx -> rxDone = true
                }
            } else if (n == -Errno.EAVAIL) {
                cq.readErr(err)
                throw CommandFailure("ofi:$prov: ${err.message}")
            }
        }
    }
}
