package braid.mpi

import java.io.File
import java.net.URLEncoder
import java.nio.ByteBuffer
import java.util.Base64
import java.util.concurrent.ThreadLocalRandom

/**
 * Ports between groups of processes, in one job or in separately launched ones (`MPI_Open_port`, `MPI_Comm_accept`,
 * `MPI_Comm_connect`), and the name service (`MPI_Publish_name`, `MPI_Lookup_name`).
 *
 * A port name is `braid-port:<base64 address blob of the accepting root>:<port id>`. The connecting root sends a
 * request (its reply id, its group's context-id mask and address blobs) in context 0 /
 * [MatchBitsDescriptor.SUB_LEADERS] with the port id as tag; the accepting root ANDs the masks, picks the context id
 * and answers with it and its group's blobs; each root then broadcasts the id and the other group's blobs to its own
 * group.
 *
 * The [Bootstrap][braid.bootstrap.Bootstrap] interface has no name service, so names are published as files in one
 * directory (`BRAID_MPI_NAME_DIR`, default `$TMPDIR/braid-mpi-names-$USER`): jobs on one host, or sharing that
 * directory, find each other.
 */
internal class Ports(private val mpi: Mpi) {
    private val open = HashSet<String>()

    @Synchronized
    fun open(): String {
        val id = ThreadLocalRandom.current().nextInt(1, Mpi.TAG_UB)
        return "$PREFIX${Base64.getEncoder().encodeToString(mpi.ep.address)}:$id".also { open += it }
    }

    @Synchronized
    fun close(port: String) {
        if (!open.remove(port))
            throw MPIException.of(ErrorClass.ERR_PORT, "MPI_Close_port", "port '$port' is not open in this process")
    }

    private fun parse(call: String, port: String): Pair<ByteArray, Int> {
        val parts = port.removePrefix(PREFIX).split(':')
        if (!port.startsWith(PREFIX) || parts.size != 2)
            throw MPIException.of(ErrorClass.ERR_PORT, call, "'$port' is not a port name (braid-port:<address>:<id>)")
        return try {
            Base64.getDecoder().decode(parts[0]) to parts[1].toInt()
        } catch (e: IllegalArgumentException) {
            throw MPIException.of(ErrorClass.ERR_PORT, call, "'$port' is not a port name: ${e.message}")
        }
    }

    /** A channel in context 0 whose only rank, 0, is the process at [addr] (receives ignore it). */
    private fun leader(addr: Long) =
        CommBootstrapCollectives(mpi, ContextIdPool.PORTS, MatchBitsDescriptor.SUB_LEADERS, 0, longArrayOf(addr))

    /**
     * `MPI_Comm_accept`. [gaveUp] (at the root, asked while it waits for the connection) is the error to end the wait
     * with, or null to go on waiting: how [Spawn] stops waiting for children that died.
     */
    fun accept(comm: Intracomm, port: String, root: Int, gaveUp: () -> MPIException? = { null }): Intercomm {
        val call = "MPI_Comm_accept"
        checkRoot(call, comm, root)
        return comm.intercommFrom(root, "accept($port)") { mask ->
            val (_, portId) = parse(call, port)
            if (port !in synchronized(this) { open })
                throw MPIException.of(
                    ErrorClass.ERR_PORT,
                    call,
                    "port '$port' is not open in this process (open it with openPort)",
                )
            var failure: MPIException? = null
            val got = leader(0).recvUnless(Mpi.ANY_SOURCE, portId) { gaveUp().also { failure = it } != null }
            val req = CommBootstrapCollectives.split(got ?: throw failure!!)
            val replyTag = ByteBuffer.wrap(req[0]).getInt()
            ContextIdPool.and(mask, req[1])
            val id = Intracomm.intBytes(mpi.contexts.lowest(mask, call))
            val connector = mpi.processes.intern(mpi, req[2])
            leader(mpi.processes.fiAddr(connector))
                .send(0, replyTag, CommBootstrapCollectives.join(arrayOf(id) + comm.blobs(comm.localGroup)))
                .waitFor()
            arrayOf(id) + req.copyOfRange(3, req.size)
        }
    }

    fun connect(comm: Intracomm, port: String, root: Int): Intercomm {
        val call = "MPI_Comm_connect"
        checkRoot(call, comm, root)
        return comm.intercommFrom(root, "connect($port)") { mask ->
            val (blob, portId) = parse(call, port)
            val ch = leader(mpi.processes.fiAddr(mpi.processes.intern(mpi, blob)))
            val replyTag = ThreadLocalRandom.current().nextInt(1, Mpi.TAG_UB)
            val sent =
                ch.send(
                    0,
                    portId,
                    CommBootstrapCollectives.join(
                        arrayOf(Intracomm.intBytes(replyTag), mask, mpi.ep.address) + comm.blobs(comm.localGroup)
                    ),
                )
            val reply = ch.recv(Mpi.ANY_SOURCE, replyTag)
            sent.waitFor()
            CommBootstrapCollectives.split(reply)
        }
    }

    private fun checkRoot(call: String, comm: Comm, root: Int) {
        if (root !in 0 until comm.size)
            throw MPIException.of(
                ErrorClass.ERR_ROOT,
                call,
                "root $root is out of range for ${comm.getName()} of size ${comm.size}",
            )
    }

    // ## Name service (files) ##

    /** [MpiParams.NAME_DIR], else `braid-mpi-names-<user>` in the JVM's temporary directory. */
    private fun dir(): File =
        mpi.settings[MpiParams.NAME_DIR].ifEmpty { null }?.let { File(it) }
            ?: File(System.getProperty("java.io.tmpdir"), "braid-mpi-names-${System.getProperty("user.name")}")

    private fun file(service: String): File = File(dir(), URLEncoder.encode(service, Charsets.UTF_8))

    fun publish(service: String, port: String) {
        val d = dir()
        d.mkdirs()
        val f = file(service)
        val tmp = File(d, ".${f.name}.${ProcessHandle.current().pid()}")
        tmp.writeText(port)
        if (!tmp.renameTo(f))
            throw MPIException.of(ErrorClass.ERR_SERVICE, "MPI_Publish_name", "cannot publish '$service' in $d")
    }

    fun lookup(service: String): String {
        val f = file(service)
        if (!f.exists())
            throw MPIException.of(
                ErrorClass.ERR_NAME,
                "MPI_Lookup_name",
                "no port is published as '$service' (in ${dir()})",
            )
        return f.readText()
    }

    fun unpublish(service: String, port: String) {
        val f = file(service)
        if (!f.exists() || f.readText() != port)
            throw MPIException.of(
                ErrorClass.ERR_SERVICE,
                "MPI_Unpublish_name",
                "'$service' is not published with port '$port'",
            )
        f.delete()
    }

    private companion object {
        const val PREFIX = "braid-port:"
    }
}
