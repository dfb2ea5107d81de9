package mpi;

import java.nio.Buffer;

/**
 * An intracommunicator: one group. {@link MPI#COMM_WORLD} and {@link MPI#COMM_SELF} are ones; construction calls
 * ({@link #split}, {@link #create}, {@link #createCart} …) are collective over it.
 */
public class Intracomm extends Comm {
    Intracomm(braid.mpi.Comm c) {
        super(c);
    }

    braid.mpi.Intracomm intra() throws MPIException {
        return (braid.mpi.Intracomm) braid();
    }

    /** The facade kind for a braid communicator with (or without) a topology. */
    static Intracomm of(braid.mpi.Intracomm c) {
        if (c == null) return null;
        braid.mpi.Topology t = c.getTopology();
        if (t instanceof braid.mpi.CartTopology) return new CartComm(c);
        if (t != null) return new GraphComm(c);
        return new Intracomm(c);
    }

    interface Build {
        braid.mpi.Intracomm build();
    }

    static Intracomm build(Build b) throws MPIException {
        try {
            return of(b.build());
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    @Override
    public Intracomm clone() {
        return (Intracomm) super.clone();
    }

    @Override
    public Intracomm dup() throws MPIException {
        braid.mpi.Intracomm b = intra();
        return build(b::dup);
    }

    @Override
    public Intracomm iDup() throws MPIException {
        Intracomm d = dup();
        d.request = new Request(null);
        return d;
    }

    @Override
    public Intracomm dupWithInfo(Info info) throws MPIException {
        Intracomm d = dup();
        d.setInfo(info);
        return d;
    }

    /** {@code MPI_Comm_split}: null (MPI_COMM_NULL) for {@link MPI#UNDEFINED} as colour. */
    public final Intracomm split(int colour, int key) throws MPIException {
        braid.mpi.Intracomm b = intra();
        return build(() -> b.split(colour, key));
    }

    /** {@code MPI_Comm_split_type} with {@link Comm#TYPE_SHARED}: the members on one host. */
    public final Intracomm splitType(int splitType, int key, Info info) throws MPIException {
        braid.mpi.Intracomm b = intra();
        return build(() -> b.splitType(splitType, key));
    }

    /** {@code MPI_Comm_create}: null for processes not in [group]. */
    public final Intracomm create(Group group) throws MPIException {
        braid.mpi.Intracomm b = intra();
        braid.mpi.Group g = group.braid();
        return build(() -> b.create(g));
    }

    /** {@code MPI_Comm_create_group}: collective over [group]'s members only. */
    public final Intracomm createGroup(Group group, int tag) throws MPIException {
        braid.mpi.Intracomm b = intra();
        braid.mpi.Group g = group.braid();
        return build(() -> b.createGroup(g, tag));
    }

    /** {@code MPI_Cart_create} (ranks are not reordered); null for processes beyond the grid. */
    public final CartComm createCart(int[] dims, boolean[] periods, boolean reorder) throws MPIException {
        braid.mpi.Intracomm b = intra();
        return (CartComm) build(() -> b.createCart(dims, periods));
    }

    /** {@code MPI_Graph_create} (ranks are not reordered); null for processes beyond the graph. */
    public final GraphComm createGraph(int[] index, int[] edges, boolean reorder) throws MPIException {
        braid.mpi.Intracomm b = intra();
        return (GraphComm) build(() -> b.createGraph(index, edges));
    }

    public final GraphComm createDistGraph(int[] sources, int[] degrees, int[] destinations, int[] weights,
            Info info, boolean reorder) throws MPIException {
        braid.mpi.Intracomm b = intra();
        return (GraphComm) build(() -> b.createDistGraph(sources, degrees, destinations, weights));
    }

    public final GraphComm createDistGraph(int[] sources, int[] degrees, int[] destinations, Info info,
            boolean reorder) throws MPIException {
        return createDistGraph(sources, degrees, destinations, null, info, reorder);
    }

    public final GraphComm createDistGraphAdjacent(int[] sources, int[] sourceWeights, int[] destinations,
            int[] destWeights, Info info, boolean reorder) throws MPIException {
        braid.mpi.Intracomm b = intra();
        return (GraphComm) build(() -> b.createDistGraphAdjacent(sources, sourceWeights, destinations, destWeights));
    }

    public final GraphComm createDistGraphAdjacent(int[] sources, int[] destinations, Info info, boolean reorder)
            throws MPIException {
        return createDistGraphAdjacent(sources, null, destinations, null, info, reorder);
    }

    public final void scan(Object sendbuf, Object recvbuf, int count, Datatype type, Op op) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        Buf.Staged s = Buf.stage(sendbuf, type.spanBytes(count), false, 0);
        Buf.Staged r = Buf.stage(recvbuf, type.spanBytes(count), true, 1);
        run(() -> b.scan(s.bytes, r.bytes, count, t, o), s, r);
    }

    public final void scan(Object recvbuf, int count, Datatype type, Op op) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        Buf.Staged r = Buf.stage(recvbuf, type.spanBytes(count), true, 1);
        run(() -> b.scan(braid.mpi.Mpi.IN_PLACE, r.bytes, count, t, o), r, null);
    }

    public final Request iScan(Buffer sendbuf, Buffer recvbuf, int count, Datatype type, Op op)
            throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        java.nio.ByteBuffer sb = Buf.directOrNull(sendbuf), rb = Buf.directOrNull(recvbuf);
        return req(() -> b.iscan(sb, rb, count, t, o), sendbuf, recvbuf);
    }

    public final Request iScan(Buffer buf, int count, Datatype type, Op op) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        java.nio.ByteBuffer bb = Buf.directOrNull(buf);
        return req(() -> b.iscan(braid.mpi.Mpi.IN_PLACE, bb, count, t, o), null, buf);
    }

    public final void exScan(Object sendbuf, Object recvbuf, int count, Datatype type, Op op) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        Buf.Staged s = Buf.stage(sendbuf, type.spanBytes(count), false, 0);
        Buf.Staged r = Buf.stage(recvbuf, type.spanBytes(count), true, 1);
        run(() -> b.exscan(s.bytes, r.bytes, count, t, o), s, r);
    }

    public final void exScan(Object buf, int count, Datatype type, Op op) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        Buf.Staged r = Buf.stage(buf, type.spanBytes(count), true, 1);
        run(() -> b.exscan(braid.mpi.Mpi.IN_PLACE, r.bytes, count, t, o), r, null);
    }

    public final Request iExScan(Buffer sendbuf, Buffer recvbuf, int count, Datatype type, Op op)
            throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        java.nio.ByteBuffer sb = Buf.directOrNull(sendbuf), rb = Buf.directOrNull(recvbuf);
        return req(() -> b.iexscan(sb, rb, count, t, o), sendbuf, recvbuf);
    }

    public final Request iExScan(Buffer buf, int count, Datatype type, Op op) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        java.nio.ByteBuffer bb = Buf.directOrNull(buf);
        return req(() -> b.iexscan(braid.mpi.Mpi.IN_PLACE, bb, count, t, o), null, buf);
    }

    // ## Ports ##

    public static String openPort() throws MPIException {
        try {
            return MPI.mpi().openPort();
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    public static String openPort(Info info) throws MPIException {
        return openPort();
    }

    public static void closePort(String name) throws MPIException {
        try {
            MPI.mpi().closePort(name);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    /** {@code MPI_Comm_accept}: collective; [root] waits for a {@link #connect} to [port]. */
    public final Intercomm accept(String port, int root) throws MPIException {
        braid.mpi.Intracomm b = intra();
        try {
            return new Intercomm(b.accept(port == null ? "" : port, root)); // significant at the root only
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    public final Intercomm accept(String port, Info info, int root) throws MPIException {
        return accept(port, root);
    }

    /** {@code MPI_Comm_connect}: collective; [root] connects to the group accepting on [port]. */
    public final Intercomm connect(String port, int root) throws MPIException {
        braid.mpi.Intracomm b = intra();
        try {
            return new Intercomm(b.connect(port == null ? "" : port, root)); // significant at the root only
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    public final Intercomm connect(String port, Info info, int root) throws MPIException {
        return connect(port, root);
    }

    public static void publishName(String service, String port) throws MPIException {
        try {
            MPI.mpi().publishName(service, port);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    public static void publishName(String service, Info info, String port) throws MPIException {
        publishName(service, port);
    }

    public static void unpublishName(String service, String port) throws MPIException {
        try {
            MPI.mpi().unpublishName(service, port);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    public static void unpublishName(String service, Info info, String port) throws MPIException {
        unpublishName(service, port);
    }

    public static String lookupName(String service) throws MPIException {
        try {
            return MPI.mpi().lookupName(service);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    public static String lookupName(String service, Info info) throws MPIException {
        return lookupName(service);
    }

    /**
     * {@code MPI_Comm_spawn}: starts [maxprocs] copies of [command] with [argv] on this machine as a job of their own,
     * as {@code braid run} starts ranks, and returns the intercommunicator to them ({@link Intercomm#getParent} in the
     * children). [info] is not read.
     */
    public final Intercomm spawn(String command, String[] argv, int maxprocs, Info info, int root, int[] errcodes)
            throws MPIException {
        braid.mpi.Intracomm b = (braid.mpi.Intracomm) braid();
        try {
            return new Intercomm(b.spawn(command, argv == null ? new String[0] : argv, maxprocs, root, errcodes));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        } finally {
            ompiCodes(errcodes);
        }
    }

    /** braid.mpi fills a spawn's error codes with its error classes: Open MPI's numbers here. */
    private static void ompiCodes(int[] errcodes) {
        if (errcodes != null) for (int i = 0; i < errcodes.length; i++) errcodes[i] = Err.ompiClass(errcodes[i]);
    }

    /**
     * {@code MPI_Comm_spawn_multiple}: [maxprocs][i] processes of [commands][i] with [argv][i] (null: no arguments) for
     * each i, as one job of their own on this machine, ranked in that order; entry i's processes see {@code
     * MPI.APPNUM} i. [info] is not read.
     */
    public final Intercomm spawnMultiple(String[] commands, String[][] argv, int[] maxprocs, Info[] info, int root,
            int[] errcodes) throws MPIException {
        braid.mpi.Intracomm b = (braid.mpi.Intracomm) braid();
        String[][] args = null;
        if (argv != null) {
            args = new String[argv.length][];
            for (int i = 0; i < argv.length; i++) args[i] = argv[i] == null ? new String[0] : argv[i];
        }
        try {
            return new Intercomm(b.spawnMultiple(commands == null ? new String[0] : commands, args,
                    maxprocs == null ? new int[0] : maxprocs, root, errcodes));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        } finally {
            ompiCodes(errcodes);
        }
    }
}
