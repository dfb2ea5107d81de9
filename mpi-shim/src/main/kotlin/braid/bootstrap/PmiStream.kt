package braid.bootstrap

import com.sun.jna.Native
import java.io.ByteArrayOutputStream
import java.io.IOException
import java.io.InputStream
import java.io.OutputStream
import java.net.InetSocketAddress
import java.net.Socket

/**
 * The byte stream a PMI client talks over: the socket its launcher left open as descriptor `PMI_FD`, or a TCP
 * connection to `PMI_PORT`. Reads are buffered here so that lines (PMI-1) and length-prefixed frames (PMI-2) can both
 * be taken off one stream.
 */
internal abstract class PmiStream(private val describe: String) : AutoCloseable {
    private val buffer = ByteArray(64 * 1024)
    private var start = 0
    private var end = 0

    /** Reads up to [length] bytes into [dst]; -1 at end of stream. */
    protected abstract fun readSome(dst: ByteArray, offset: Int, length: Int): Int

    /** Writes all of [bytes] (one write where the transport allows: Slurm reads `init` in one read). */
    abstract fun write(bytes: ByteArray)

    fun write(text: String): Unit = write(text.toByteArray(Charsets.UTF_8))

    /** One line without its `\n`; throws [BootstrapException] naming the launcher if the stream ends. */
    fun readLine(): String {
        val line = ByteArrayOutputStream()
        while (true) {
            if (start == end) fill()
            val nl = (start until end).firstOrNull { buffer[it] == '\n'.code.toByte() }
            if (nl == null) {
                line.write(buffer, start, end - start)
                start = end
            } else {
                line.write(buffer, start, nl - start)
                start = nl + 1
                return line.toString(Charsets.UTF_8)
            }
        }
    }

    /** Exactly [count] bytes as text. */
    fun readExactly(count: Int): String {
        val out = ByteArray(count)
        var have = 0
        while (have < count) {
            if (start == end) fill()
            val n = minOf(count - have, end - start)
            System.arraycopy(buffer, start, out, have, n)
            start += n
            have += n
        }
        return String(out, Charsets.UTF_8)
    }

    private fun fill() {
        start = 0
        end = 0
        val n =
            try {
                readSome(buffer, 0, buffer.size)
            } catch (e: IOException) {
                throw BootstrapException("lost the connection to the launcher ($describe): ${e.message}", e)
            }
        if (n <= 0) throw BootstrapException("the launcher closed its connection ($describe)")
        end = n
    }

    override fun toString(): String = describe
}

/** A TCP connection to the launcher's PMI port (`PMI_PORT=host:port`). */
internal class SocketPmiStream(hostPort: String) : PmiStream("PMI_PORT=$hostPort") {
    private val socket: Socket
    private val input: InputStream
    private val output: OutputStream

    init {
        val host = hostPort.substringBeforeLast(':', "")
        val port = hostPort.substringAfterLast(':').toIntOrNull()
        if (host.isEmpty() || port == null || port !in 1..65535) {
            throw BootstrapException("PMI_PORT='$hostPort' is not host:port")
        }
        socket =
            try {
                Socket().apply {
                    tcpNoDelay = true
                    connect(InetSocketAddress(host, port), 30_000)
                }
            } catch (e: IOException) {
                throw BootstrapException("cannot connect to the launcher at PMI_PORT=$hostPort: ${e.message}", e)
            }
        input = socket.getInputStream()
        output = socket.getOutputStream()
    }

    override fun readSome(dst: ByteArray, offset: Int, length: Int): Int = input.read(dst, offset, length)

    override fun write(bytes: ByteArray) {
        try {
            output.write(bytes)
            output.flush()
        } catch (e: IOException) {
            throw BootstrapException("lost the connection to the launcher (PMI_PORT): ${e.message}", e)
        }
    }

    override fun close() = socket.close()
}

/**
 * The socket inherited as descriptor [fd] (`PMI_FD`). The JDK cannot wrap an inherited descriptor (`/proc/self/fd/N`
 * fails with ENXIO for a socket), so this calls libc's `read(2)` and `write(2)` on it through JNA.
 */
internal class FdPmiStream(private val fd: Int) : PmiStream("PMI_FD=$fd") {
    init {
        Libc.ensureRegistered("use PMI_FD")
    }

    override fun readSome(dst: ByteArray, offset: Int, length: Int): Int {
        val tmp = if (offset == 0) dst else ByteArray(length)
        while (true) {
            val n = Libc.read(fd, tmp, length.toLong())
            if (n >= 0) {
                if (tmp !== dst) System.arraycopy(tmp, 0, dst, offset, n.toInt())
                return n.toInt()
            }
            val errno = Native.getLastError()
            if (errno != Libc.EINTR) throw IOException("read(PMI_FD=$fd) failed: errno $errno")
        }
    }

    override fun write(bytes: ByteArray) {
        var done = 0
        while (done < bytes.size) {
            val chunk = if (done == 0) bytes else bytes.copyOfRange(done, bytes.size)
            val n = Libc.write(fd, chunk, chunk.size.toLong())
            if (n < 0) {
                val errno = Native.getLastError()
                if (errno == Libc.EINTR) continue
                throw BootstrapException("write(PMI_FD=$fd) to the launcher failed: errno $errno")
            }
            done += n.toInt()
        }
    }

    override fun close() {
        Libc.close(fd)
    }
}
