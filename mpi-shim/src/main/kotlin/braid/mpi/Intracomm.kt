package braid.mpi

/**
 * An intracommunicator: one group, point-to-point among its members. Construction calls ([dup], [split], [create],
 * [createIntercomm], [accept], [connect]) are collective over this communicator: every member calls them, in the same
 * order. Each new communicator gets a context id every member agrees on ([ContextIdPool]), so traffic on parent and
 * child never meets.
 */
public class Intracomm internal constructor(mpi: Mpi, context: Int, group: Group, name: String) :
    Comm(mpi, context, group, group.procs, name) {
    override val isInter: Boolean
        get() = false

    /** This communicator's collectives; also how its children's context ids are agreed ([CommCollectives]). */
    @get:JvmSynthetic internal val coll: CommCollectives by lazy { CommCollectives(this, destAddr, 0) }

    /** `MPI_Comm_dup`: the same group with a new context. */
    public fun dup(): Intracomm =
        construct("MPI_Comm_dup") {
            val id = agree("MPI_Comm_dup")
            Intracomm(mpi, id, localGroup, "dup(${getName()})").also {
                it.setErrhandler(getErrhandler())
                it.topo = topo
                Attributes.copyAll(this, it)
            }
        }

    /**
     * `MPI_Comm_split`: members of one [color] form a communicator, ranked by [key] (ties by rank here);
     * [Mpi.UNDEFINED] as color returns null.
     */
    public fun split(color: Int, key: Int): Intracomm? =
        construct("MPI_Comm_split") {
            if (color < 0 && color != Mpi.UNDEFINED)
                throw MPIException.of(ErrorClass.ERR_ARG, "MPI_Comm_split", "color $color must be ≥ 0 or UNDEFINED")
            val mine = java.nio.ByteBuffer.allocate(8).putInt(color).putInt(key).array()
            val all =
                coll.allgatherFixed(mine).map { java.nio.ByteBuffer.wrap(it) }.map { it.getInt(0) to it.getInt(4) }
            val id = mpi.contexts.lowest(coll.andMasks(mpi.contexts.mask()), "MPI_Comm_split")
            if (color == Mpi.UNDEFINED) return@construct null
            mpi.contexts.reserve(id)
            val members =
                all.indices.filter { all[it].first == color }.sortedWith(compareBy({ all[it].second }, { it }))
            Intracomm(
                mpi,
                id,
                Group(IntArray(members.size) { localGroup.procs[members[it]] }, localGroup.self),
                "split(${getName()}, $color)",
            )
        }

    /** `MPI_Comm_create`: a communicator of [group] (a subgroup of this one); null for non-members. */
    public fun create(group: Group): Intracomm? =
        construct("MPI_Comm_create") {
            val mine = localGroup.procs.toHashSet()
            group.procs
                .firstOrNull { it !in mine }
                ?.let {
                    throw MPIException.of(
                        ErrorClass.ERR_GROUP,
                        "MPI_Comm_create",
                        "the group holds a process (table index $it) that is not in ${getName()}",
                    )
                }
            val id = mpi.contexts.lowest(coll.andMasks(mpi.contexts.mask()), "MPI_Comm_create")
            if (group.rank == Mpi.UNDEFINED) return@construct null
            mpi.contexts.reserve(id)
            Intracomm(mpi, id, Group(group.procs, localGroup.self), "create(${getName()})")
        }

    /**
     * `MPI_Comm_create_group`: a communicator of [group] (a subgroup of this one), collective over [group]'s members
     * only: the others do not call it. The members agree on a context id through the group's first member, in this
     * communicator's internal traffic with [tag] (two calls at once on one communicator need different tags).
     */
    public fun createGroup(group: Group, tag: Int): Intracomm =
        construct("MPI_Comm_create_group") {
            val call = "MPI_Comm_create_group"
            if (group.rank == Mpi.UNDEFINED)
                throw MPIException.of(ErrorClass.ERR_GROUP, call, "the calling process is not a member of the group")
            if (tag !in 0..Mpi.TAG_UB)
                throw MPIException.of(ErrorClass.ERR_TAG, call, "tag $tag is outside 0..${Mpi.TAG_UB}")
            val parent =
                IntArray(group.size) { i ->
                    localGroup.procs.indexOf(group.procs[i]).also {
                        if (it < 0)
                            throw MPIException.of(
                                ErrorClass.ERR_GROUP,
                                call,
                                "the group's rank $i is not a member of ${getName()}",
                            )
                    }
                }
            val channel = CommBootstrapCollectives(mpi, context, MatchBitsDescriptor.SUB_INTERNAL, rank, destAddr)
            val id =
                if (group.rank == 0) {
                    val mask = mpi.contexts.mask()
                    for (i in 1 until group.size) ContextIdPool.and(mask, channel.recv(parent[i], tag))
                    val id = mpi.contexts.lowest(mask, call)
                    (1 until group.size).map { channel.send(parent[it], tag, intBytes(id)) }.forEach { it.waitFor() }
                    id
                } else {
                    channel.send(parent[0], tag, mpi.contexts.mask()).waitFor()
                    java.nio.ByteBuffer.wrap(channel.recv(parent[0], tag)).getInt()
                }
            mpi.contexts.reserve(id)
            Intracomm(mpi, id, Group(group.procs, localGroup.self), "createGroup(${getName()})")
        }

    /**
     * `MPI_Comm_split_type`: with [Comm.TYPE_SHARED], the members on one host (rail-core's host identity, as shm
     * decides it) form a communicator, ranked by [key]; [Mpi.UNDEFINED] returns null.
     */
    public fun splitType(type: Int, key: Int): Intracomm? {
        if (type != Comm.TYPE_SHARED && type != Mpi.UNDEFINED)
            throw raise(
                MPIException.of(
                    ErrorClass.ERR_ARG,
                    "MPI_Comm_split_type",
                    "split type $type is not TYPE_SHARED or UNDEFINED",
                )
            )
        val hosts = guard {
            checkUsable("MPI_Comm_split_type")
            coll.allgatherFixed(java.nio.ByteBuffer.allocate(8).putLong(braid.provider.HostIdentity.id).array())
        }
        val mine = hosts[rank]
        val color = hosts.indexOfFirst { it.contentEquals(mine) }
        return split(if (type == Mpi.UNDEFINED) Mpi.UNDEFINED else color, key)
    }

    /**
     * `MPI_Cart_create` (ranks never reordered): a communicator of the first `product(dims)` members with a Cartesian
     * [CartTopology]; the members beyond the grid get null.
     */
    public fun createCart(dims: IntArray, periods: BooleanArray): Intracomm? {
        val topo = guard { CartTopology(dims, periods) }
        if (topo.size > size)
            throw raise(
                MPIException.of(
                    ErrorClass.ERR_DIMS,
                    "MPI_Cart_create",
                    "the grid of ${topo.size} processes is larger than ${getName()} of $size",
                )
            )
        return split(if (rank < topo.size) 0 else Mpi.UNDEFINED, rank)?.also { it.topo = topo }
    }

    /** `MPI_Cart_sub`: the sub-grids that keep the dimensions [remain] says, one communicator each. */
    public fun cartSub(remain: BooleanArray): Intracomm {
        val cart =
            topo as? CartTopology
                ?: throw raise(
                    MPIException.of(ErrorClass.ERR_TOPOLOGY, "MPI_Cart_sub", "${getName()} is not Cartesian")
                )
        if (remain.size != cart.ndims)
            throw raise(
                MPIException.of(
                    ErrorClass.ERR_DIMS,
                    "MPI_Cart_sub",
                    "remainDims has ${remain.size} entries for ${cart.ndims} dimensions",
                )
            )
        val c = cart.coords(rank)
        val dims = cart.getDims()
        var color = 0
        for (i in dims.indices) if (!remain[i]) color = color * dims[i] + c[i]
        return split(color, rank)!!.also { it.topo = cart.sub(remain) }
    }

    /** `MPI_Graph_create` (ranks never reordered): the first `index.size` members, with a [GraphTopology]. */
    public fun createGraph(index: IntArray, edges: IntArray): Intracomm? {
        val topo = guard { GraphTopology(index, edges) }
        if (topo.size > size)
            throw raise(
                MPIException.of(
                    ErrorClass.ERR_ARG,
                    "MPI_Graph_create",
                    "the graph of ${topo.size} nodes is larger than ${getName()} of $size",
                )
            )
        return split(if (rank < topo.size) 0 else Mpi.UNDEFINED, rank)?.also { it.topo = topo }
    }

    /**
     * `MPI_Dist_graph_create_adjacent`: every member names whom it receives from ([sources]) and sends to
     * ([destinations]), with weights or null; a duplicate of this communicator with that [DistGraphTopology].
     */
    public fun createDistGraphAdjacent(
        sources: IntArray,
        sourceWeights: IntArray?,
        destinations: IntArray,
        destWeights: IntArray?,
    ): Intracomm {
        checkRanks("MPI_Dist_graph_create_adjacent", sources + destinations)
        return dup().also { it.topo = DistGraphTopology(sources, sourceWeights, destinations, destWeights) }
    }

    /**
     * `MPI_Dist_graph_create`: every member names some edges (for each of [sources], `degrees[i]` of [destinations],
     * with [weights] or null); the members exchange them so each learns its own in- and out-edges (in the order of the
     * naming ranks, then of their lists).
     */
    public fun createDistGraph(
        sources: IntArray,
        degrees: IntArray,
        destinations: IntArray,
        weights: IntArray?,
    ): Intracomm {
        val call = "MPI_Dist_graph_create"
        val edges = ArrayList<IntArray>()
        var k = 0
        for (i in sources.indices) repeat(degrees[i]) {
            edges += intArrayOf(sources[i], destinations[k], weights?.get(k) ?: 1)
            k++
        }
        checkRanks(call, sources + destinations.copyOf(k))
        val mine = java.nio.ByteBuffer.allocate(4 + 12 * edges.size)
        mine.putInt(edges.size)
        edges.forEach { e -> e.forEach { mine.putInt(it) } }
        val all = guard { coll.allgatherBytes(mine.array()) }
        val ins = ArrayList<IntArray>()
        val outs = ArrayList<IntArray>()
        for (bytes in all) {
            val b = java.nio.ByteBuffer.wrap(bytes)
            repeat(b.getInt()) {
                val e = intArrayOf(b.getInt(), b.getInt(), b.getInt())
                if (e[1] == rank) ins += e
                if (e[0] == rank) outs += e
            }
        }
        val weighted = weights != null
        val topo =
            DistGraphTopology(
                IntArray(ins.size) { ins[it][0] },
                if (weighted) IntArray(ins.size) { ins[it][2] } else null,
                IntArray(outs.size) { outs[it][1] },
                if (weighted) IntArray(outs.size) { outs[it][2] } else null,
            )
        return dup().also { it.topo = topo }
    }

    private fun checkRanks(call: String, ranks: IntArray) {
        ranks.forEach {
            if (it !in 0 until size)
                throw raise(MPIException.of(ErrorClass.ERR_RANK, call, "rank $it is out of range for ${getName()}"))
        }
    }

    /** `MPI_Comm_compare`: IDENT (same object), CONGRUENT, SIMILAR or UNEQUAL. */
    public fun compare(other: Comm): Int =
        when {
            other === this -> Group.IDENT
            other.isInter -> Group.UNEQUAL
            else ->
                when (localGroup.compare(other.localGroup)) {
                    Group.IDENT -> Group.CONGRUENT
                    Group.SIMILAR -> Group.SIMILAR
                    else -> Group.UNEQUAL
                }
        }

    /**
     * `MPI_Intercomm_create`: joins this group (led by [localLeader]) with another group whose leader is [remoteLeader]
     * in [peerComm]; the leaders talk over [peerComm] with [tag].
     */
    public fun createIntercomm(localLeader: Int, peerComm: Comm, remoteLeader: Int, tag: Int): Intercomm =
        construct("MPI_Intercomm_create") {
            val call = "MPI_Intercomm_create"
            if (localLeader !in 0 until size)
                throw MPIException.of(
                    ErrorClass.ERR_RANK,
                    call,
                    "local leader $localLeader is out of range for ${getName()} of size $size",
                )
            if (tag !in 0..Mpi.TAG_UB)
                throw MPIException.of(ErrorClass.ERR_TAG, call, "tag $tag is outside 0..${Mpi.TAG_UB}")
            intercommFrom(localLeader, "intercomm(${getName()})") { mask ->
                peerComm.checkUsable(call)
                if (remoteLeader !in 0 until peerComm.peerCount)
                    throw MPIException.of(
                        ErrorClass.ERR_RANK,
                        call,
                        "remote leader $remoteLeader is out of range for ${peerComm.getName()}",
                    )
                val leaders =
                    CommBootstrapCollectives(
                        mpi,
                        peerComm.context,
                        MatchBitsDescriptor.SUB_LEADERS,
                        peerComm.rank,
                        peerComm.destAddr,
                    )
                val theirs =
                    CommBootstrapCollectives.split(
                        leaders.exchange(
                            remoteLeader,
                            tag,
                            CommBootstrapCollectives.join(arrayOf(mask) + blobs(localGroup)),
                        )
                    )
                ContextIdPool.and(mask, theirs[0])
                arrayOf(intBytes(mpi.contexts.lowest(mask, call))) + theirs.copyOfRange(1, theirs.size)
            }
        }

    /** `MPI_Comm_accept`: waits (at [root]) for a [connect] to [port]; collective over this communicator. */
    public fun accept(port: String, root: Int): Intercomm =
        construct("MPI_Comm_accept") { mpi.ports.accept(this, port, root) }

    /** `MPI_Comm_connect`: connects (from [root]) to a port another group [accept]s on. */
    public fun connect(port: String, root: Int): Intercomm =
        construct("MPI_Comm_connect") { mpi.ports.connect(this, port, root) }

    /**
     * `MPI_Comm_spawn`: starts [maxprocs] copies of [command] with [argv] on this machine as a job of their own, the
     * way `braid run` starts ranks (the root's arguments count; collective over this communicator), and returns the
     * intercommunicator to them; in the children, [Mpi.parent] is its other side. [errcodes] (null: ignored) get
     * `SUCCESS` for each process. A command that cannot be started, or children that end before they connect (one died,
     * or the program never calls `MPI_Init`), raise `MPI_ERR_SPAWN` on every rank.
     */
    @JvmOverloads
    public fun spawn(
        command: String,
        argv: Array<String>,
        maxprocs: Int,
        root: Int,
        errcodes: IntArray? = null,
    ): Intercomm = Spawn.spawn(this, listOf(Spawn.App(command, argv, maxprocs)), root, errcodes, "MPI_Comm_spawn")

    /**
     * `MPI_Comm_spawn_multiple`: one job of `maxprocs[i]` processes of `commands[i]` with `argv[i]` (null: no arguments
     * for any) for each `i`, ranked in that order, entry `i`'s processes with `MPI_APPNUM` `i`; otherwise as [spawn].
     */
    @JvmOverloads
    public fun spawnMultiple(
        commands: Array<String>,
        argv: Array<Array<String>>?,
        maxprocs: IntArray,
        root: Int,
        errcodes: IntArray? = null,
    ): Intercomm {
        // Only the root's arguments count: the others pass theirs unread.
        val mismatch = maxprocs.size != commands.size || argv != null && argv.size != commands.size
        val apps =
            if (rank != root || mismatch) emptyList()
            else commands.indices.map { Spawn.App(commands[it], argv?.get(it) ?: emptyArray(), maxprocs[it]) }
        val refuse =
            if (rank == root && mismatch)
                "${commands.size} commands, ${maxprocs.size} maxprocs and ${argv?.size ?: "no"} argument lists; " +
                    "give one of each per command"
            else ""
        return Spawn.spawn(this, apps, root, errcodes, "MPI_Comm_spawn_multiple", refuse)
    }

    /** Agrees a context id over this communicator and reserves it. */
    @JvmSynthetic
    internal fun agree(call: String): Int {
        val id = mpi.contexts.lowest(coll.andMasks(mpi.contexts.mask()), call)
        mpi.contexts.reserve(id)
        return id
    }

    /**
     * The end of every intercommunicator construction: each member contributes its free-id mask to a local AND; [root]
     * runs [lead] on the result (which talks to the other group and returns the context id and the remote group's
     * address blobs), and broadcasts its answer.
     */
    @JvmSynthetic
    internal fun intercommFrom(root: Int, name: String, lead: (ByteArray) -> Array<ByteArray>): Intercomm {
        val mask = coll.andMasks(mpi.contexts.mask())
        if (rank == root) {
            val agreed =
                try {
                    lead(mask)
                } catch (e: MPIException) {
                    // The others wait for the root's broadcast: they get the failure instead of waiting for ever.
                    val why = arrayOf(ByteArray(0), intBytes(e.errorClass), e.message.orEmpty().toByteArray())
                    coll.bcastBytes(root, CommBootstrapCollectives.join(why))
                    throw e
                }
            coll.bcastBytes(root, CommBootstrapCollectives.join(agreed))
            return fromAgreement(agreed, name)
        }
        val got = CommBootstrapCollectives.split(coll.bcastBytes(root, null))
        if (got[0].isEmpty()) // the root's failure: [empty, error class, message]
            throw MPIException.of(
                java.nio.ByteBuffer.wrap(got[1]).getInt(),
                name,
                "failed at the root (rank $root): ${String(got[2])}",
            )
        return fromAgreement(got, name)
    }

    /** Builds the intercommunicator from a leader's broadcast: [id, remote address blobs…]. */
    private fun fromAgreement(got: Array<ByteArray>, name: String): Intercomm {
        val id = java.nio.ByteBuffer.wrap(got[0]).getInt()
        mpi.contexts.reserve(id)
        val remote = IntArray(got.size - 1) { mpi.processes.intern(mpi, got[it + 1]) }
        return Intercomm(mpi, id, localGroup, Group(remote, localGroup.self), name)
    }

    @JvmSynthetic internal fun blobs(g: Group): Array<ByteArray> = Array(g.size) { mpi.processes.blob(g.procs[it]) }

    /** Runs a construction call: checks, serializes it in this process, applies the error handler. */
    @JvmSynthetic
    internal inline fun <T> construct(call: String, block: () -> T): T = guard {
        checkUsable(call)
        mpi.constructLock.lock()
        try {
            block()
        } finally {
            mpi.constructLock.unlock()
        }
    }

    internal companion object {
        @JvmSynthetic fun intBytes(v: Int): ByteArray = java.nio.ByteBuffer.allocate(4).putInt(v).array()
    }
}
