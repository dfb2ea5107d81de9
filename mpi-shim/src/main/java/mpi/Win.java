package mpi;

import braid.mpi.Window;
import java.nio.Buffer;
import java.nio.ByteBuffer;

/**
 * A one-sided communication window ({@code MPI_Win}) over a {@code braid.mpi.Window}, with Open MPI's members and
 * rules: buffers are direct ({@link IllegalArgumentException} otherwise, as Open MPI's bindings do), counts are in
 * elements of their datatype, a target displacement is in the target's displacement unit, and sizes given to the
 * constructors and {@link #attach} are in bytes. Errors are {@link MPIException}s of Open MPI's classes ({@link
 * MPI#ERR_RMA_SYNC} for an operation outside an epoch, {@link MPI#ERR_WIN} for a freed window, Open MPI's {@code
 * MPI_ERR_RMA_RANGE} (68 in Open MPI) for an access outside the target's window, …).
 *
 * <p>The window memory of {@link #Win(int, int, Info, Comm, Buffer, int)} is allocated by the window (Java cannot
 * return an address through a buffer): read it with {@code getAttr(MPI.WIN_BASE)} (a native-order {@link
 * ByteBuffer}), and a peer's part of a shared window with {@link #sharedQuery}.
 */
public final class Win implements Freeable {
    public static final int WIN_NULL = 0;
    public static final int FLAVOR_PRIVATE = 0;
    public static final int FLAVOR_SHARED = 1;

    private Window w;

    /** {@code MPI_Win_create}: the first [size] bytes of direct [base] are this process's window. */
    public Win(Buffer base, int size, int dispUnit, Info info, Comm comm) throws MPIException {
        Buf.assertDirect(base);
        braid.mpi.Intracomm c = intra(comm, "Win.Win (MPI_Win_create)");
        if (base == null) throw Err.of(MPI.ERR_BASE, "MPI_Win_create: the base buffer is null; pass a direct buffer");
        ByteBuffer b = Buf.direct(base);
        w = call(() -> Window.create(b, size, dispUnit, c));
        keep = base;
    }

    /**
     * {@code MPI_Win_allocate} ([flavor] {@link #FLAVOR_PRIVATE}) or {@code MPI_Win_allocate_shared} ({@link
     * #FLAVOR_SHARED}): [size] bytes of new window memory here, read through {@code getAttr(MPI.WIN_BASE)}. [base] is
     * checked to be direct, as Open MPI checks it, and not written.
     */
    public Win(int size, int dispUnit, Info info, Comm comm, Buffer base, int flavor) throws MPIException {
        Buf.assertDirect(base);
        braid.mpi.Intracomm c = intra(comm, "Win.Win (MPI_Win_allocate)");
        if (flavor == FLAVOR_PRIVATE) w = call(() -> Window.allocate(size, dispUnit, c));
        else if (flavor == FLAVOR_SHARED) w = call(() -> Window.allocateShared(size, dispUnit, c));
        else
            throw Err.of(MPI.ERR_ARG, "Win.Win: flavor " + flavor
                    + " is neither Win.FLAVOR_PRIVATE (0) nor Win.FLAVOR_SHARED (1)");
    }

    /** {@code MPI_Win_create_dynamic}: a window with no memory until {@link #attach}. */
    public Win(Info info, Comm comm) throws MPIException {
        braid.mpi.Intracomm c = intra(comm, "Win.Win (MPI_Win_create_dynamic)");
        w = call(() -> Window.createDynamic(c));
    }

    /** The caller's base buffer of a created window, kept reachable while the window lives. */
    private Buffer keep;

    // ## Plumbing ##

    private static braid.mpi.Intracomm intra(Comm comm, String call) throws MPIException {
        if (comm == null) throw Err.of(MPI.ERR_COMM, call + ": the communicator is null");
        braid.mpi.Comm c = comm.braid();
        if (!(c instanceof braid.mpi.Intracomm))
            throw Err.of(MPI.ERR_COMM, call + ": windows are made over an intracommunicator, not an intercommunicator");
        return (braid.mpi.Intracomm) c;
    }

    private interface Body<T> {
        T run();
    }

    private interface Action {
        void run();
    }

    private static <T> T call(Body<T> body) throws MPIException {
        try {
            return body.run();
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    private static void act(Action body) throws MPIException {
        try {
            body.run();
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    private Window win() throws MPIException {
        MPI.check();
        if (w == null) throw Err.of(MPI.ERR_WIN, "the window is MPI_WIN_NULL (freed)");
        return w;
    }

    private static braid.mpi.Datatype t(Datatype type, String call) throws MPIException {
        if (type == null) throw Err.of(MPI.ERR_TYPE, call + ": the datatype is null");
        return type.braid();
    }

    private static braid.mpi.Op o(Op op, String call) throws MPIException {
        if (op == null) throw Err.of(MPI.ERR_OP, call + ": the op is null");
        return op.braid();
    }

    private static ByteBuffer d(Buffer b, String call, String what) throws MPIException {
        if (b == null) throw Err.of(MPI.ERR_BUFFER, call + ": the " + what + " buffer is null");
        Buf.assertDirect(b);
        return Buf.direct(b);
    }

    /** Open MPI's {@code MPI_MODE_*} bits as braid.mpi's. */
    static int assertion(int a) {
        int b = 0;
        if ((a & MPI.MODE_NOCHECK) != 0) b |= Window.MODE_NOCHECK;
        if ((a & MPI.MODE_NOPRECEDE) != 0) b |= Window.MODE_NOPRECEDE;
        if ((a & MPI.MODE_NOPUT) != 0) b |= Window.MODE_NOPUT;
        if ((a & MPI.MODE_NOSTORE) != 0) b |= Window.MODE_NOSTORE;
        if ((a & MPI.MODE_NOSUCCEED) != 0) b |= Window.MODE_NOSUCCEED;
        int known = MPI.MODE_NOCHECK | MPI.MODE_NOPRECEDE | MPI.MODE_NOPUT | MPI.MODE_NOSTORE | MPI.MODE_NOSUCCEED;
        return b | (a & ~known); // unknown bits go through, for braid.mpi to refuse (MPI_ERR_ASSERT)
    }

    private static int lockType(int t) {
        return t == MPI.LOCK_EXCLUSIVE ? Window.LOCK_EXCLUSIVE : t == MPI.LOCK_SHARED ? Window.LOCK_SHARED : t;
    }

    // ## Dynamic windows ##

    /**
     * {@code MPI_Win_attach}: exposes the first [size] bytes of direct [base]. A dynamic window's target displacement
     * is an address in bytes, which Open MPI's {@code int} displacements cannot carry on a 64-bit machine; use {@code
     * braid.mpi.Window} (long displacements) to put and get at attached memory.
     */
    public void attach(Buffer base, int size) throws MPIException {
        Window x = win();
        ByteBuffer b = d(base, "Win.attach", "base");
        act(() -> x.attach(b, size));
    }

    public void detach(Buffer base) throws MPIException {
        Window x = win();
        ByteBuffer b = d(base, "Win.detach", "base");
        act(() -> x.detach(b));
    }

    public Group getGroup() throws MPIException {
        Window x = win();
        return new Group(call(x::getGroup));
    }

    // ## Communication ##

    public void put(Buffer origin, int orgCount, Datatype orgType, int targetRank, int targetDisp, int targetCount, Datatype targetType) throws MPIException {
        Window x = win();
        ByteBuffer b = d(origin, "Win.put", "origin");
        braid.mpi.Datatype ot = t(orgType, "Win.put"), tt = t(targetType, "Win.put");
        act(() -> x.put(b, orgCount, ot, targetRank, targetDisp, targetCount, tt));
    }

    public void get(Buffer origin, int orgCount, Datatype orgType, int targetRank, int targetDisp, int targetCount, Datatype targetType) throws MPIException {
        Window x = win();
        ByteBuffer b = d(origin, "Win.get", "origin");
        braid.mpi.Datatype ot = t(orgType, "Win.get"), tt = t(targetType, "Win.get");
        act(() -> x.get(b, orgCount, ot, targetRank, targetDisp, targetCount, tt));
    }

    public void accumulate(Buffer origin, int orgCount, Datatype orgType, int targetRank, int targetDisp, int targetCount, Datatype targetType, Op op) throws MPIException {
        Window x = win();
        ByteBuffer b = d(origin, "Win.accumulate", "origin");
        braid.mpi.Datatype ot = t(orgType, "Win.accumulate"), tt = t(targetType, "Win.accumulate");
        braid.mpi.Op p = o(op, "Win.accumulate");
        act(() -> x.accumulate(b, orgCount, ot, targetRank, targetDisp, targetCount, tt, p));
    }

    // ## Synchronisation ##

    public void fence(int assertion) throws MPIException {
        Window x = win();
        act(() -> x.fence(assertion(assertion)));
    }

    public void start(Group group, int assertion) throws MPIException {
        Window x = win();
        braid.mpi.Group g = group(group, "Win.start");
        act(() -> x.start(g, assertion(assertion)));
    }

    public void complete() throws MPIException {
        Window x = win();
        act(x::complete);
    }

    public void post(Group group, int assertion) throws MPIException {
        Window x = win();
        braid.mpi.Group g = group(group, "Win.post");
        act(() -> x.post(g, assertion(assertion)));
    }

    private static braid.mpi.Group group(Group group, String call) throws MPIException {
        if (group == null) throw Err.of(MPI.ERR_GROUP, call + ": the group is null");
        return group.braid();
    }

    public void waitFor() throws MPIException {
        Window x = win();
        act(x::waitFor);
    }

    public boolean test() throws MPIException {
        Window x = win();
        return call(x::test);
    }

    public void lock(int lockType, int rank, int assertion) throws MPIException {
        Window x = win();
        act(() -> x.lock(lockType(lockType), rank, assertion(assertion)));
    }

    public void unlock(int rank) throws MPIException {
        Window x = win();
        act(() -> x.unlock(rank));
    }

    // ## Errors, attributes, info, name ##

    public void setErrhandler(Errhandler errhandler) throws MPIException {
        Window x = win();
        if (errhandler == null) throw Err.of(MPI.ERR_ARG, "Win.setErrhandler: the error handler is null");
        act(() -> x.setErrhandler(errhandler.handler));
    }

    public Errhandler getErrhandler() throws MPIException {
        braid.mpi.ErrorHandler h = win().getErrhandler();
        if (h == braid.mpi.ErrorHandler.ERRORS_RETURN) return MPI.ERRORS_RETURN;
        if (h == braid.mpi.ErrorHandler.ERRORS_ARE_FATAL) return MPI.ERRORS_ARE_FATAL;
        return new Errhandler(h);
    }

    /** {@code MPI_Win_call_errhandler}: applies this window's handler to [errorCode]. */
    public void callErrhandler(int errorCode) throws MPIException {
        Window x = win();
        act(() -> x.callErrhandler(Err.braidClass(errorCode)));
    }

    public static int createKeyval() throws MPIException {
        MPI.check();
        return Window.createKeyval();
    }

    /** {@code MPI_Win_free_keyval}: keyvals are plain numbers here; freeing one only checks it. */
    public static void freeKeyval(int keyval) throws MPIException {
        MPI.check();
        if (keyval < 0) throw Err.of(MPI.ERR_KEYVAL, "Win.freeKeyval: " + keyval + " is not a keyval");
    }

    /** Open MPI's {@code MPI.WIN_BASE}, {@code WIN_SIZE}, {@code WIN_DISP_UNIT} as braid.mpi's keys. */
    private static int key(int keyval) {
        return keyval == MPI.WIN_BASE ? Window.WIN_BASE : keyval == MPI.WIN_SIZE ? Window.WIN_SIZE
                : keyval == MPI.WIN_DISP_UNIT ? Window.WIN_DISP_UNIT : keyval;
    }

    public void setAttr(int keyval, Object value) throws MPIException {
        Window x = win();
        act(() -> x.setAttr(key(keyval), value));
    }

    /**
     * {@code MPI_Win_get_attr}: {@code MPI.WIN_BASE} gives the window memory (a {@link ByteBuffer}, null for a
     * dynamic window), {@code MPI.WIN_SIZE} its bytes (a {@code Long}), {@code MPI.WIN_DISP_UNIT} an {@code Integer};
     * other keyvals what {@link #setAttr} put (null if nothing).
     */
    public Object getAttr(int keyval) throws MPIException {
        Window x = win();
        return call(() -> x.getAttr(key(keyval)));
    }

    public void deleteAttr(int keyval) throws MPIException {
        Window x = win();
        act(() -> x.deleteAttr(key(keyval)));
    }

    /** {@code MPI_Win_free} (collective): the window is {@code MPI_WIN_NULL} after it. */
    public void free() throws MPIException {
        Window x = win();
        act(x::free);
        w = null;
        keep = null;
    }

    /** {@code MPI_Win_get_info}: Braid's windows take no hints, so an empty {@link Info}. */
    public Info getInfo() throws MPIException {
        win();
        return new Info();
    }

    /** {@code MPI_Win_set_info}: hints are accepted and not used, as MPI allows. */
    public void setInfo(Info info) throws MPIException {
        win();
    }

    // ## Request-based operations (direct buffers, held by the request) ##

    public final Request rPut(Buffer origin_addr, int origin_count, Datatype origin_datatype, int target_rank, int target_disp, int target_count, Datatype target_datatype) throws MPIException {
        Window x = win();
        ByteBuffer b = d(origin_addr, "Win.rPut", "origin");
        braid.mpi.Datatype ot = t(origin_datatype, "Win.rPut"), tt = t(target_datatype, "Win.rPut");
        return Request.of(call(() -> x.rPut(b, origin_count, ot, target_rank, target_disp, target_count, tt)),
                origin_addr, null);
    }

    public final Request rGet(Buffer origin, int orgCount, Datatype orgType, int targetRank, int targetDisp, int targetCount, Datatype targetType) throws MPIException {
        Window x = win();
        ByteBuffer b = d(origin, "Win.rGet", "origin");
        braid.mpi.Datatype ot = t(orgType, "Win.rGet"), tt = t(targetType, "Win.rGet");
        return Request.of(call(() -> x.rGet(b, orgCount, ot, targetRank, targetDisp, targetCount, tt)), null, origin);
    }

    public Request rAccumulate(Buffer origin, int orgCount, Datatype orgType, int targetRank, int targetDisp, int targetCount, Datatype targetType, Op op) throws MPIException {
        Window x = win();
        ByteBuffer b = d(origin, "Win.rAccumulate", "origin");
        braid.mpi.Datatype ot = t(orgType, "Win.rAccumulate"), tt = t(targetType, "Win.rAccumulate");
        braid.mpi.Op p = o(op, "Win.rAccumulate");
        return Request.of(call(() -> x.rAccumulate(b, orgCount, ot, targetRank, targetDisp, targetCount, tt, p)),
                origin, null);
    }

    public void getAccumulate(Buffer origin, int orgCount, Datatype orgType, Buffer resultAddr, int resultCount, Datatype resultType, int targetRank, int targetDisp, int targetCount, Datatype targetType, Op op) throws MPIException {
        Window x = win();
        String c = "Win.getAccumulate";
        ByteBuffer b = origin == null ? Comm.EMPTY : d(origin, c, "origin"); // MPI.NO_OP reads no origin
        ByteBuffer r = d(resultAddr, c, "result");
        braid.mpi.Datatype ot = orgType == null ? t(targetType, c) : t(orgType, c);
        braid.mpi.Datatype rt = t(resultType, c), tt = t(targetType, c);
        braid.mpi.Op p = o(op, c);
        act(() -> x.getAccumulate(b, orgCount, ot, r, resultCount, rt, targetRank, targetDisp, targetCount, tt, p));
    }

    public Request rGetAccumulate(Buffer origin, int orgCount, Datatype orgType, Buffer resultAddr, int resultCount, Datatype resultType, int targetRank, int targetDisp, int targetCount, Datatype targetType, Op op) throws MPIException {
        Window x = win();
        String c = "Win.rGetAccumulate";
        ByteBuffer b = origin == null ? Comm.EMPTY : d(origin, c, "origin");
        ByteBuffer r = d(resultAddr, c, "result");
        braid.mpi.Datatype ot = orgType == null ? t(targetType, c) : t(orgType, c);
        braid.mpi.Datatype rt = t(resultType, c), tt = t(targetType, c);
        braid.mpi.Op p = o(op, c);
        return Request.of(call(() -> x.rGetAccumulate(
                b, orgCount, ot, r, resultCount, rt, targetRank, targetDisp, targetCount, tt, p)), origin, resultAddr);
    }

    // ## Passive target ##

    public void lockAll(int assertion) throws MPIException {
        Window x = win();
        act(() -> x.lockAll(assertion(assertion)));
    }

    public void unlockAll() throws MPIException {
        Window x = win();
        act(x::unlockAll);
    }

    public void sync() throws MPIException {
        Window x = win();
        act(x::sync);
    }

    public void flush(int targetRank) throws MPIException {
        Window x = win();
        act(() -> x.flush(targetRank));
    }

    public void flushAll() throws MPIException {
        Window x = win();
        act(x::flushAll);
    }

    public void compareAndSwap(Buffer origin, Buffer compareAddr, Buffer resultAddr, Datatype targetType, int targetRank, int targetDisp) throws MPIException {
        Window x = win();
        String c = "Win.compareAndSwap";
        ByteBuffer b = d(origin, c, "origin"), k = d(compareAddr, c, "compare"), r = d(resultAddr, c, "result");
        braid.mpi.Datatype tt = t(targetType, c);
        act(() -> x.compareAndSwap(b, k, r, tt, targetRank, targetDisp));
    }

    public void fetchAndOp(Buffer origin, Buffer resultAddr, Datatype dataType, int targetRank, int targetDisp, Op op) throws MPIException {
        Window x = win();
        String c = "Win.fetchAndOp";
        ByteBuffer b = origin == null ? Comm.EMPTY : d(origin, c, "origin");
        ByteBuffer r = d(resultAddr, c, "result");
        braid.mpi.Datatype tt = t(dataType, c);
        braid.mpi.Op p = o(op, c);
        act(() -> x.fetchAndOp(b, r, tt, targetRank, targetDisp, p));
    }

    public void flushLocal(int targetRank) throws MPIException {
        Window x = win();
        act(() -> x.flushLocal(targetRank));
    }

    public void flushLocalAll() throws MPIException {
        Window x = win();
        act(x::flushLocalAll);
    }

    public String getName() throws MPIException {
        return win().getName();
    }

    public void setName(String name) throws MPIException {
        Window x = win();
        act(() -> x.setName(name));
    }

    // ## Braid's additions ##

    /**
     * {@code MPI_Win_shared_query} (not in Open MPI's Java API): rank [rank]'s part of a window made with {@link
     * #FLAVOR_SHARED}, as a native-order buffer over the same memory that this process loads and stores directly;
     * {@code MPI.PROC_NULL} gives the first non-empty part.
     */
    public ByteBuffer sharedQuery(int rank) throws MPIException {
        Window x = win();
        return call(() -> x.sharedQuery(rank));
    }
}
