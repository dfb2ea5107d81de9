package mpi;

import java.nio.Buffer;
import java.nio.ByteBuffer;

/**
 * A communicator ({@code MPI_Comm}) over a {@code braid.mpi.Comm}. Blocking calls take Java arrays, heap buffers or
 * direct buffers ({@code Object}); nonblocking calls take direct buffers. Counts are in elements of the datatype and
 * displacements in its extents, as in C.
 */
public class Comm implements Freeable, Cloneable {
    public static final int TYPE_SHARED = 0;

    braid.mpi.Comm c;
    protected Request request;

    Comm(braid.mpi.Comm c) {
        this.c = c;
    }

    static final ByteBuffer EMPTY = ByteBuffer.allocateDirect(0);

    braid.mpi.Comm braid() throws MPIException {
        MPI.check();
        if (c == null) throw Err.of(MPI.ERR_COMM, "the communicator is MPI_COMM_NULL (freed or never built)");
        return c;
    }

    static Comm wrap(braid.mpi.Comm c) {
        if (c == null) return null;
        if (c instanceof braid.mpi.Intercomm) return new Intercomm((braid.mpi.Intercomm) c);
        return new Intracomm((braid.mpi.Intracomm) c);
    }

    // ## Staging helpers ##

    private static Buf.Staged in(Object buf, Datatype t, int count) {
        return Buf.stage(buf, t, count, false, 0);
    }

    private static Buf.Staged out(Object buf, Datatype t, int count) {
        return Buf.stage(buf, t, count, true, 1);
    }

    private static Buf.Staged inAll(Object buf) {
        return Buf.stage(buf, -1, false, 0);
    }

    private static Buf.Staged outAll(Object buf) {
        return Buf.stage(buf, -1, true, 1);
    }

    private static ByteBuffer nn(ByteBuffer b) {
        return b == null ? EMPTY : b;
    }

    private static braid.mpi.Datatype bt(Datatype t) throws MPIException {
        return t == null ? null : t.braid();
    }

    /** Runs a braid call, turning its error into a checked one and finishing the staged buffers. */
    static void run(Runnable body, Buf.Staged a, Buf.Staged b) throws MPIException {
        try {
            body.run();
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        } finally {
            if (a != null) a.done();
            if (b != null) b.done();
        }
    }

    interface Starter {
        braid.mpi.Request start();
    }

    static Request req(Starter body, Buffer send, Buffer recv) throws MPIException {
        try {
            return Request.of(body.start(), send, recv);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    private static ByteBuffer d(Buffer b) {
        return Buf.directOrNull(b);
    }

    // ## Management ##

    @Override
    public Comm clone() {
        try {
            return dup();
        } catch (MPIException e) {
            throw new RuntimeException(e.getMessage(), e);
        }
    }

    public Comm dup() throws MPIException {
        braid.mpi.Comm b = braid();
        try {
            if (b instanceof braid.mpi.Intracomm) return wrap(((braid.mpi.Intracomm) b).dup());
            return wrap(((braid.mpi.Intercomm) b).dup());
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    /** {@code MPI_Comm_idup}: done at once here; {@link #getRequest} returns a completed request. */
    public Comm iDup() throws MPIException {
        Comm d = dup();
        d.request = new Request(null);
        return d;
    }

    public Comm dupWithInfo(Info info) throws MPIException {
        Comm d = dup();
        d.setInfo(info);
        return d;
    }

    /** The request of an {@link #iDup}, or null. */
    public final Request getRequest() {
        return request;
    }

    public final int getSize() throws MPIException {
        return braid().getSize();
    }

    public final int getRank() throws MPIException {
        return braid().getRank();
    }

    /** {@code MPI_Comm_compare}: {@link MPI#IDENT}, {@link MPI#CONGRUENT}, {@link MPI#SIMILAR} or {@link MPI#UNEQUAL}. */
    public static int compare(Comm comm1, Comm comm2) throws MPIException {
        braid.mpi.Comm a = comm1.braid(), b = comm2.braid();
        if (a == b) return MPI.IDENT;
        if (a instanceof braid.mpi.Intracomm && !(b instanceof braid.mpi.Intercomm))
            return ((braid.mpi.Intracomm) a).compare(b);
        if (a instanceof braid.mpi.Intercomm && b instanceof braid.mpi.Intercomm) {
            int local = a.getGroup().compare(b.getGroup());
            int remote = ((braid.mpi.Intercomm) a).getRemoteGroup().compare(((braid.mpi.Intercomm) b).getRemoteGroup());
            if (local == MPI.IDENT && remote == MPI.IDENT) return MPI.CONGRUENT;
            if (local != MPI.UNEQUAL && remote != MPI.UNEQUAL) return MPI.SIMILAR;
        }
        return MPI.UNEQUAL;
    }

    @Override
    public final void free() throws MPIException {
        braid.mpi.Comm b = braid();
        try {
            b.free();
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
        c = null;
    }

    public final boolean isNull() {
        return c == null;
    }

    public final void setInfo(Info info) throws MPIException {
        braid.mpi.Comm b = braid();
        if (info == null || info.info == null) return;
        b.setInfo(info.info);
    }

    public final Info getInfo() throws MPIException {
        return new Info(braid().getInfo());
    }

    public final void disconnect() throws MPIException {
        braid.mpi.Comm b = braid();
        try {
            b.disconnect();
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
        c = null;
    }

    public final Group getGroup() throws MPIException {
        return new Group(braid().getGroup());
    }

    public final boolean isInter() throws MPIException {
        return braid().isInter();
    }

    /**
     * {@code MPI_Intercomm_create} with this communicator as the peer communicator: [localComm]'s group (led by
     * [localLeader]) joins the group whose leader is [remoteLeader] in this communicator.
     */
    public final Intercomm createIntercomm(Comm localComm, int localLeader, int remoteLeader, int tag)
            throws MPIException {
        braid.mpi.Comm local = localComm.braid();
        if (!(local instanceof braid.mpi.Intracomm))
            throw Err.of(MPI.ERR_COMM, "MPI_Intercomm_create: the local communicator must be an intracommunicator");
        braid.mpi.Comm peer = braid();
        try {
            return new Intercomm(((braid.mpi.Intracomm) local).createIntercomm(localLeader, peer, remoteLeader, tag));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    // ## Point-to-point, blocking ##

    public final void send(Object buf, int count, Datatype type, int dest, int tag) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        ByteBuffer direct = Buf.inPlace(buf);
        if (direct != null) { // no staging: the buffer goes to braid.mpi as it is
            try {
                b.send(direct, count, t, dest, tag);
            } catch (braid.mpi.MPIException e) {
                throw Err.of(e);
            }
            return;
        }
        Buf.Staged s = in(buf, type, count);
        try {
            b.send(nn(s.bytes), count, t, dest, tag);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        } finally {
            s.done();
        }
    }

    /**
     * Small on purpose, so that it inlines into its caller together with the {@link Status} it makes: a caller that
     * ignores the status then allocates nothing (the JIT's escape analysis drops it).
     */
    public final Status recv(Object buf, int count, Datatype type, int source, int tag) throws MPIException {
        return Status.filled(recvInto(buf, count, type, source, tag));
    }

    /** The receive of {@link #recv}; returns the thread's braid.mpi scratch status it filled. */
    private braid.mpi.Status recvInto(Object buf, int count, Datatype type, int source, int tag)
            throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Status st = Buf.scratchStatus();
        ByteBuffer direct = Buf.inPlace(buf);
        if (direct != null) {
            try {
                return b.recv(direct, count, t, source, tag, st);
            } catch (braid.mpi.MPIException e) {
                throw Err.of(e);
            }
        }
        Buf.Staged s = out(buf, type, count);
        try {
            return b.recv(nn(s.bytes), count, t, source, tag, st);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        } finally {
            s.done();
        }
    }

    public final Status sendRecv(Object sendbuf, int sendcount, Datatype sendtype, int dest, int sendtag,
            Object recvbuf, int recvcount, Datatype recvtype, int source, int recvtag) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = sendtype.braid(), rt = recvtype.braid();
        Buf.Staged s = in(sendbuf, sendtype, sendcount), r = out(recvbuf, recvtype, recvcount);
        try {
            return Status.of(b.sendRecv(nn(s.bytes), sendcount, st, dest, sendtag, nn(r.bytes), recvcount, rt, source,
                    recvtag));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        } finally {
            s.done();
            r.done();
        }
    }

    public final Status sendRecvReplace(Object buf, int count, Datatype type, int dest, int sendtag, int source,
            int recvtag) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        Buf.Staged s = out(buf, type, count);
        try {
            return Status.of(b.sendRecvReplace(nn(s.bytes), count, t, dest, sendtag, source, recvtag));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        } finally {
            s.done();
        }
    }

    private static final int STANDARD = 0, BUFFERED = 1, SYNCHRONOUS = 2, READY = 3;

    /** The blocking sends: one path, no lambda, so a warm one allocates nothing. */
    private void sendIn(int mode, Object buf, int count, Datatype type, int dest, int tag) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        Buf.Staged s = in(buf, type, count);
        try {
            ByteBuffer bytes = nn(s.bytes);
            switch (mode) {
                case BUFFERED: b.bsend(bytes, count, t, dest, tag); break;
                case SYNCHRONOUS: b.ssend(bytes, count, t, dest, tag); break;
                default: b.rsend(bytes, count, t, dest, tag);
            }
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        } finally {
            s.done();
        }
    }

    public final void bSend(Object buf, int count, Datatype type, int dest, int tag) throws MPIException {
        sendIn(BUFFERED, buf, count, type, dest, tag);
    }

    public final void sSend(Object buf, int count, Datatype type, int dest, int tag) throws MPIException {
        sendIn(SYNCHRONOUS, buf, count, type, dest, tag);
    }

    public final void rSend(Object buf, int count, Datatype type, int dest, int tag) throws MPIException {
        sendIn(READY, buf, count, type, dest, tag);
    }

    // ## Point-to-point, nonblocking and persistent ##

    /** The nonblocking sends: one path, no lambda (the {@link Request} returned is what a warm one allocates). */
    private Request iSendIn(int mode, Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        ByteBuffer bb = nn(d(buf));
        try {
            braid.mpi.Request r;
            switch (mode) {
                case STANDARD: r = b.isend(bb, count, t, dest, tag); break;
                case BUFFERED: r = b.ibsend(bb, count, t, dest, tag); break;
                case SYNCHRONOUS: r = b.issend(bb, count, t, dest, tag); break;
                default: r = b.irsend(bb, count, t, dest, tag);
            }
            return Request.of(r, buf, null);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    public final Request iSend(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        return iSendIn(STANDARD, buf, count, type, dest, tag);
    }

    public final Request ibSend(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        return iSendIn(BUFFERED, buf, count, type, dest, tag);
    }

    public final Request isSend(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        return iSendIn(SYNCHRONOUS, buf, count, type, dest, tag);
    }

    public final Request irSend(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        return iSendIn(READY, buf, count, type, dest, tag);
    }

    public final Request iRecv(Buffer buf, int count, Datatype type, int source, int tag) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        ByteBuffer bb = nn(d(buf));
        try {
            return Request.of(b.irecv(bb, count, t, source, tag), null, buf);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    private interface PStarter {
        braid.mpi.Prequest start();
    }

    private static Prequest preq(PStarter body, Buffer send, Buffer recv) throws MPIException {
        try {
            return new Prequest(body.start(), send, recv);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    public final Prequest sendInit(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        ByteBuffer bb = d(buf);
        return preq(() -> b.sendInit(nn(bb), count, t, dest, tag), buf, null);
    }

    public final Prequest bSendInit(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        ByteBuffer bb = d(buf);
        return preq(() -> b.bsendInit(nn(bb), count, t, dest, tag), buf, null);
    }

    public final Prequest sSendInit(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        ByteBuffer bb = d(buf);
        return preq(() -> b.ssendInit(nn(bb), count, t, dest, tag), buf, null);
    }

    public final Prequest rSendInit(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        ByteBuffer bb = d(buf);
        return preq(() -> b.rsendInit(nn(bb), count, t, dest, tag), buf, null);
    }

    public final Prequest recvInit(Buffer buf, int count, Datatype type, int source, int tag) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        ByteBuffer bb = d(buf);
        return preq(() -> b.recvInit(nn(bb), count, t, source, tag), null, buf);
    }

    // ## Pack ##

    /** {@code MPI_Pack}: [incount] elements of [type] from [inbuf] into [outbuf] at byte [position]; the next. */
    public final int pack(Object inbuf, int incount, Datatype type, byte[] outbuf, int position) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        Buf.Staged s = in(inbuf, type, incount);
        ByteBuffer o = ByteBuffer.wrap(outbuf);
        int[] next = new int[1];
        run(() -> next[0] = b.pack(nn(s.bytes), 0, incount, t, o, position), s, null);
        return next[0];
    }

    /** {@code MPI_Unpack}: the reverse of {@link #pack}; returns the byte position after what was read. */
    public final int unpack(byte[] inbuf, int position, Object outbuf, int outcount, Datatype type)
            throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        Buf.Staged s = out(outbuf, type, outcount);
        ByteBuffer i = ByteBuffer.wrap(inbuf);
        int[] next = new int[1];
        run(() -> next[0] = b.unpack(i, position, nn(s.bytes), 0, outcount, t), s, null);
        return next[0];
    }

    /** {@code MPI_Pack_size}: bytes {@link #pack} needs for [incount] elements of [type]. */
    public final int packSize(int incount, Datatype type) throws MPIException {
        braid.mpi.Comm b = braid();
        try {
            return (int) b.packSize(incount, type.braid());
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    // ## Probe ##

    /** {@code MPI_Iprobe}: the status of a matching message, or null when none is there. */
    public final Status iProbe(int source, int tag) throws MPIException {
        braid.mpi.Comm b = braid();
        try {
            return Status.of(b.iprobe(source, tag));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    public final Status probe(int source, int tag) throws MPIException {
        braid.mpi.Comm b = braid();
        try {
            return Status.of(b.probe(source, tag));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    // ## Attributes ##

    /** A keyval whose attributes a {@link #dup} copies. */
    public static int createKeyval() throws MPIException {
        MPI.check();
        return braid.mpi.Comm.createKeyval(braid.mpi.Comm.DUP_FN, braid.mpi.Comm.NULL_DELETE_FN, null);
    }

    public static void freeKeyval(int keyval) throws MPIException {
        MPI.check();
        try {
            braid.mpi.Comm.freeKeyval(keyval);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    public final void setAttr(int keyval, Object value) throws MPIException {
        braid.mpi.Comm b = braid();
        run(() -> b.setAttr(keyval, value), null, null);
    }

    /** A predefined attribute ({@link MPI#TAG_UB} …) as an {@code Integer}, a user one as set; null if none. */
    public final Object getAttr(int keyval) throws MPIException {
        braid.mpi.Comm b = braid();
        try {
            Object v = b.getAttr(keyval);
            // No code added yet: the last used code is the last built-in class, in Open MPI's numbering.
            if (keyval == MPI.LASTUSEDCODE && Integer.valueOf(braid.mpi.ErrorClass.ERR_LASTCODE).equals(v))
                return MPI.ERR_LASTCODE;
            return v;
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    public final void deleteAttr(int keyval) throws MPIException {
        braid.mpi.Comm b = braid();
        run(() -> b.deleteAttr(keyval), null, null);
    }

    int topology() {
        return MPI.UNDEFINED;
    }

    /** {@link MPI#CART}, {@link MPI#GRAPH}, {@link MPI#DIST_GRAPH} or {@link MPI#UNDEFINED}. */
    public final int getTopology() throws MPIException {
        braid();
        return topology();
    }

    // ## Errors ##

    /** {@code MPI_Abort}: ends every process of the job with [errorcode]. */
    public final void abort(int errorcode) throws MPIException {
        braid().abort(errorcode);
    }

    public final void setErrhandler(Errhandler errhandler) throws MPIException {
        braid().setErrhandler(errhandler.handler);
    }

    public final Errhandler getErrhandler() throws MPIException {
        braid.mpi.ErrorHandler h = braid().getErrhandler();
        if (h == braid.mpi.ErrorHandler.ERRORS_RETURN) return MPI.ERRORS_RETURN;
        if (h == braid.mpi.ErrorHandler.ERRORS_ARE_FATAL) return MPI.ERRORS_ARE_FATAL;
        return new Errhandler(h);
    }

    /** {@code MPI_Comm_call_errhandler}: applies this communicator's handler to [errorCode]. */
    public void callErrhandler(int errorCode) throws MPIException {
        braid.mpi.Comm b = braid();
        run(() -> b.callErrhandler(Err.braidClass(errorCode)), null, null);
    }

    // ## Collectives ##

    public final void barrier() throws MPIException {
        braid.mpi.Comm b = braid();
        run(b::barrier, null, null);
    }

    public final Request iBarrier() throws MPIException {
        braid.mpi.Comm b = braid();
        return req(b::ibarrier, null, null);
    }

    public final void bcast(Object buf, int count, Datatype type, int root) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        Buf.Staged s = out(buf, type, count);
        run(() -> b.bcast(nn(s.bytes), count, t, root), s, null);
    }

    public final Request iBcast(Buffer buf, int count, Datatype type, int root) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        ByteBuffer bb = d(buf);
        return req(() -> b.ibcast(nn(bb), count, t, root), null, buf);
    }

    private boolean isRoot(int root) throws MPIException {
        braid.mpi.Comm b = braid();
        return b.isInter() ? root == MPI.ROOT : b.getRank() == root;
    }

    public final void gather(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf, int recvcount,
            Datatype recvtype, int root) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = bt(sendtype), rt = bt(recvtype);
        Buf.Staged s = in(sendbuf, sendtype, sendcount), r = outAll(recvbuf);
        run(() -> b.gather(s.bytes, sendcount, st, r.bytes, recvcount, rt, root), s, r);
    }

    /** In place: the root's own block is already in [buf]; the others send [count] elements from [buf]. */
    public final void gather(Object buf, int count, Datatype type, int root) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        if (isRoot(root)) {
            Buf.Staged r = outAll(buf);
            run(() -> b.gather(braid.mpi.Mpi.IN_PLACE, count, t, r.bytes, count, t, root), r, null);
        } else {
            Buf.Staged s = in(buf, type, count);
            run(() -> b.gather(s.bytes, count, t, null, count, t, root), s, null);
        }
    }

    public final Request iGather(Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf, int recvcount,
            Datatype recvtype, int root) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = bt(sendtype), rt = bt(recvtype);
        ByteBuffer sb = d(sendbuf), rb = d(recvbuf);
        return req(() -> b.igather(sb, sendcount, st, rb, recvcount, rt, root), sendbuf, recvbuf);
    }

    public final Request iGather(Buffer buf, int count, Datatype type, int root) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        ByteBuffer bb = d(buf);
        if (isRoot(root)) return req(() -> b.igather(braid.mpi.Mpi.IN_PLACE, count, t, bb, count, t, root), null, buf);
        return req(() -> b.igather(bb, count, t, null, count, t, root), buf, null);
    }

    public final void gatherv(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf, int[] recvcount,
            int[] displs, Datatype recvtype, int root) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = bt(sendtype), rt = bt(recvtype);
        Buf.Staged s = in(sendbuf, sendtype, sendcount), r = outAll(recvbuf);
        run(() -> b.gatherv(s.bytes, sendcount, st, r.bytes, recvcount, displs, rt, root), s, r);
    }

    /** The root's in-place form: its own block is already in [recvbuf]. */
    public final void gatherv(Object recvbuf, int[] recvcount, int[] displs, Datatype recvtype, int root)
            throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype rt = recvtype.braid();
        Buf.Staged r = outAll(recvbuf);
        run(() -> b.gatherv(braid.mpi.Mpi.IN_PLACE, 0, rt, r.bytes, recvcount, displs, rt, root), r, null);
    }

    /** The non-root form: sends [sendcount] elements to [root]. */
    public final void gatherv(Object sendbuf, int sendcount, Datatype sendtype, int root) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = sendtype.braid();
        Buf.Staged s = in(sendbuf, sendtype, sendcount);
        run(() -> b.gatherv(s.bytes, sendcount, st, null, null, null, null, root), s, null);
    }

    public final Request iGatherv(Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf, int[] recvcount,
            int[] displs, Datatype recvtype, int root) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = bt(sendtype), rt = bt(recvtype);
        ByteBuffer sb = d(sendbuf), rb = d(recvbuf);
        return req(() -> b.igatherv(sb, sendcount, st, rb, recvcount, displs, rt, root), sendbuf, recvbuf);
    }

    public final Request iGatherv(Buffer recvbuf, int[] recvcount, int[] displs, Datatype recvtype, int root)
            throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype rt = recvtype.braid();
        ByteBuffer rb = d(recvbuf);
        return req(() -> b.igatherv(braid.mpi.Mpi.IN_PLACE, 0, rt, rb, recvcount, displs, rt, root), null, recvbuf);
    }

    public final Request iGatherv(Buffer sendbuf, int sendcount, Datatype sendtype, int root) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = sendtype.braid();
        ByteBuffer sb = d(sendbuf);
        return req(() -> b.igatherv(sb, sendcount, st, null, null, null, null, root), sendbuf, null);
    }

    public final void scatter(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf, int recvcount,
            Datatype recvtype, int root) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = bt(sendtype), rt = bt(recvtype);
        Buf.Staged s = inAll(sendbuf), r = out(recvbuf, recvtype, recvcount);
        run(() -> b.scatter(s.bytes, sendcount, st, r.bytes, recvcount, rt, root), s, r);
    }

    /** In place: the root keeps its own block in [buf]; the others receive [count] elements into [buf]. */
    public final void scatter(Object buf, int count, Datatype type, int root) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        if (isRoot(root)) {
            Buf.Staged s = inAll(buf);
            run(() -> b.scatter(s.bytes, count, t, braid.mpi.Mpi.IN_PLACE, count, t, root), s, null);
        } else {
            Buf.Staged r = out(buf, type, count);
            run(() -> b.scatter(null, count, t, r.bytes, count, t, root), r, null);
        }
    }

    public final Request iScatter(Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf, int recvcount,
            Datatype recvtype, int root) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = bt(sendtype), rt = bt(recvtype);
        ByteBuffer sb = d(sendbuf), rb = d(recvbuf);
        return req(() -> b.iscatter(sb, sendcount, st, rb, recvcount, rt, root), sendbuf, recvbuf);
    }

    public final Request iScatter(Buffer buf, int count, Datatype type, int root) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        ByteBuffer bb = d(buf);
        if (isRoot(root))
            return req(() -> b.iscatter(bb, count, t, braid.mpi.Mpi.IN_PLACE, count, t, root), buf, null);
        return req(() -> b.iscatter(null, count, t, bb, count, t, root), null, buf);
    }

    public final void scatterv(Object sendbuf, int[] sendcount, int[] displs, Datatype sendtype, Object recvbuf,
            int recvcount, Datatype recvtype, int root) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = bt(sendtype), rt = bt(recvtype);
        Buf.Staged s = inAll(sendbuf), r = out(recvbuf, recvtype, recvcount);
        run(() -> b.scatterv(s.bytes, sendcount, displs, st, r.bytes, recvcount, rt, root), s, r);
    }

    /** The root's in-place form: it keeps its own block in [sendbuf]. */
    public final void scatterv(Object sendbuf, int[] sendcount, int[] displs, Datatype sendtype, int root)
            throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = sendtype.braid();
        Buf.Staged s = inAll(sendbuf);
        run(() -> b.scatterv(s.bytes, sendcount, displs, st, braid.mpi.Mpi.IN_PLACE, 0, st, root), s, null);
    }

    /** The non-root form: receives [recvcount] elements from [root]. */
    public final void scatterv(Object recvbuf, int recvcount, Datatype recvtype, int root) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype rt = recvtype.braid();
        Buf.Staged r = out(recvbuf, recvtype, recvcount);
        run(() -> b.scatterv(null, null, null, null, r.bytes, recvcount, rt, root), r, null);
    }

    public final Request iScatterv(Buffer sendbuf, int[] sendcount, int[] displs, Datatype sendtype, Buffer recvbuf,
            int recvcount, Datatype recvtype, int root) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = bt(sendtype), rt = bt(recvtype);
        ByteBuffer sb = d(sendbuf), rb = d(recvbuf);
        return req(() -> b.iscatterv(sb, sendcount, displs, st, rb, recvcount, rt, root), sendbuf, recvbuf);
    }

    public final Request iScatterv(Buffer sendbuf, int[] sendcount, int[] displs, Datatype sendtype, int root)
            throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = sendtype.braid();
        ByteBuffer sb = d(sendbuf);
        return req(() -> b.iscatterv(sb, sendcount, displs, st, braid.mpi.Mpi.IN_PLACE, 0, st, root), sendbuf, null);
    }

    public final Request iScatterv(Buffer recvbuf, int recvcount, Datatype recvtype, int root) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype rt = recvtype.braid();
        ByteBuffer rb = d(recvbuf);
        return req(() -> b.iscatterv(null, null, null, null, rb, recvcount, rt, root), null, recvbuf);
    }

    public final void allGather(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf, int recvcount,
            Datatype recvtype) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = sendtype.braid(), rt = recvtype.braid();
        Buf.Staged s = in(sendbuf, sendtype, sendcount), r = outAll(recvbuf);
        run(() -> b.allgather(nn(s.bytes), sendcount, st, nn(r.bytes), recvcount, rt), s, r);
    }

    /** In place: each rank's own block is already in [buf]. */
    public final void allGather(Object buf, int count, Datatype type) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        Buf.Staged r = outAll(buf);
        run(() -> b.allgather(braid.mpi.Mpi.IN_PLACE, count, t, nn(r.bytes), count, t), r, null);
    }

    public final Request iAllGather(Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf, int recvcount,
            Datatype recvtype) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = sendtype.braid(), rt = recvtype.braid();
        ByteBuffer sb = d(sendbuf), rb = d(recvbuf);
        return req(() -> b.iallgather(nn(sb), sendcount, st, nn(rb), recvcount, rt), sendbuf, recvbuf);
    }

    public final Request iAllGather(Buffer buf, int count, Datatype type) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        ByteBuffer bb = d(buf);
        return req(() -> b.iallgather(braid.mpi.Mpi.IN_PLACE, count, t, nn(bb), count, t), null, buf);
    }

    public final void allGatherv(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf, int[] recvcount,
            int[] displs, Datatype recvtype) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = sendtype.braid(), rt = recvtype.braid();
        Buf.Staged s = in(sendbuf, sendtype, sendcount), r = outAll(recvbuf);
        run(() -> b.allgatherv(nn(s.bytes), sendcount, st, nn(r.bytes), recvcount, displs, rt), s, r);
    }

    public final void allGatherv(Object recvbuf, int[] recvcount, int[] displs, Datatype recvtype)
            throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype rt = recvtype.braid();
        Buf.Staged r = outAll(recvbuf);
        run(() -> b.allgatherv(braid.mpi.Mpi.IN_PLACE, 0, rt, nn(r.bytes), recvcount, displs, rt), r, null);
    }

    public final Request iAllGatherv(Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf,
            int[] recvcount, int[] displs, Datatype recvtype) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = sendtype.braid(), rt = recvtype.braid();
        ByteBuffer sb = d(sendbuf), rb = d(recvbuf);
        return req(() -> b.iallgatherv(nn(sb), sendcount, st, nn(rb), recvcount, displs, rt), sendbuf, recvbuf);
    }

    public final Request iAllGatherv(Buffer buf, int[] count, int[] displs, Datatype type) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        ByteBuffer bb = d(buf);
        return req(() -> b.iallgatherv(braid.mpi.Mpi.IN_PLACE, 0, t, nn(bb), count, displs, t), null, buf);
    }

    public final void allToAll(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf, int recvcount,
            Datatype recvtype) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = sendtype.braid(), rt = recvtype.braid();
        Buf.Staged s = inAll(sendbuf), r = outAll(recvbuf);
        run(() -> b.alltoall(nn(s.bytes), sendcount, st, nn(r.bytes), recvcount, rt), s, r);
    }

    public final Request iAllToAll(Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf, int recvcount,
            Datatype recvtype) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = sendtype.braid(), rt = recvtype.braid();
        ByteBuffer sb = d(sendbuf), rb = d(recvbuf);
        return req(() -> b.ialltoall(nn(sb), sendcount, st, nn(rb), recvcount, rt), sendbuf, recvbuf);
    }

    public final void allToAllv(Object sendbuf, int[] sendcount, int[] sdispls, Datatype sendtype, Object recvbuf,
            int[] recvcount, int[] rdispls, Datatype recvtype) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = sendtype.braid(), rt = recvtype.braid();
        Buf.Staged s = inAll(sendbuf), r = outAll(recvbuf);
        run(() -> b.alltoallv(nn(s.bytes), sendcount, sdispls, st, nn(r.bytes), recvcount, rdispls, rt), s, r);
    }

    public final Request iAllToAllv(Buffer sendbuf, int[] sendcount, int[] sdispls, Datatype sendtype,
            Buffer recvbuf, int[] recvcount, int[] rdispls, Datatype recvtype) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = sendtype.braid(), rt = recvtype.braid();
        ByteBuffer sb = d(sendbuf), rb = d(recvbuf);
        return req(() -> b.ialltoallv(nn(sb), sendcount, sdispls, st, nn(rb), recvcount, rdispls, rt), sendbuf,
                recvbuf);
    }

    /** {@code MPI_Alltoallw}: a datatype per peer; displacements in bytes. */
    public final void allToAllw(Object sendBuf, int[] sendCount, int[] sDispls, Datatype[] sendTypes,
            Object recvBuf, int[] recvCount, int[] rDispls, Datatype[] recvTypes) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype[] st = types(sendTypes), rt = types(recvTypes);
        Buf.Staged s = inAll(sendBuf), r = outAll(recvBuf);
        run(() -> b.alltoallw(nn(s.bytes), sendCount, sDispls, st, nn(r.bytes), recvCount, rDispls, rt), s, r);
    }

    public final Request iAllToAllw(Buffer sendBuf, int[] sendCount, int[] sDispls, Datatype[] sendTypes,
            Buffer recvBuf, int[] recvCount, int[] rDispls, Datatype[] recvTypes) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype[] st = types(sendTypes), rt = types(recvTypes);
        ByteBuffer sb = d(sendBuf), rb = d(recvBuf);
        return req(() -> b.ialltoallw(nn(sb), sendCount, sDispls, st, nn(rb), recvCount, rDispls, rt), sendBuf,
                recvBuf);
    }

    private static braid.mpi.Datatype[] types(Datatype[] t) throws MPIException {
        braid.mpi.Datatype[] b = new braid.mpi.Datatype[t.length];
        for (int i = 0; i < t.length; i++) b[i] = t[i].braid();
        return b;
    }

    public final void neighborAllGather(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf,
            int recvcount, Datatype recvtype) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = sendtype.braid(), rt = recvtype.braid();
        Buf.Staged s = in(sendbuf, sendtype, sendcount), r = outAll(recvbuf);
        run(() -> b.neighborAllgather(nn(s.bytes), sendcount, st, nn(r.bytes), recvcount, rt), s, r);
    }

    public final Request iNeighborAllGather(Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf,
            int recvcount, Datatype recvtype) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = sendtype.braid(), rt = recvtype.braid();
        ByteBuffer sb = d(sendbuf), rb = d(recvbuf);
        return req(() -> b.ineighborAllgather(nn(sb), sendcount, st, nn(rb), recvcount, rt), sendbuf, recvbuf);
    }

    public final void neighborAllGatherv(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf,
            int[] recvcount, int[] displs, Datatype recvtype) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = sendtype.braid(), rt = recvtype.braid();
        Buf.Staged s = in(sendbuf, sendtype, sendcount), r = outAll(recvbuf);
        run(() -> b.neighborAllgatherv(nn(s.bytes), sendcount, st, nn(r.bytes), recvcount, displs, rt), s, r);
    }

    public final Request iNeighborAllGatherv(Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf,
            int[] recvcount, int[] displs, Datatype recvtype) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = sendtype.braid(), rt = recvtype.braid();
        ByteBuffer sb = d(sendbuf), rb = d(recvbuf);
        return req(() -> b.ineighborAllgatherv(nn(sb), sendcount, st, nn(rb), recvcount, displs, rt), sendbuf,
                recvbuf);
    }

    public final void neighborAllToAll(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf,
            int recvcount, Datatype recvtype) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = sendtype.braid(), rt = recvtype.braid();
        Buf.Staged s = inAll(sendbuf), r = outAll(recvbuf);
        run(() -> b.neighborAlltoall(nn(s.bytes), sendcount, st, nn(r.bytes), recvcount, rt), s, r);
    }

    public final Request iNeighborAllToAll(Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf,
            int recvcount, Datatype recvtype) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = sendtype.braid(), rt = recvtype.braid();
        ByteBuffer sb = d(sendbuf), rb = d(recvbuf);
        return req(() -> b.ineighborAlltoall(nn(sb), sendcount, st, nn(rb), recvcount, rt), sendbuf, recvbuf);
    }

    public final void neighborAllToAllv(Object sendbuf, int[] sendcount, int[] sdispls, Datatype sendtype,
            Object recvbuf, int[] recvcount, int[] rdispls, Datatype recvtype) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = sendtype.braid(), rt = recvtype.braid();
        Buf.Staged s = inAll(sendbuf), r = outAll(recvbuf);
        run(() -> b.neighborAlltoallv(nn(s.bytes), sendcount, sdispls, st, nn(r.bytes), recvcount, rdispls, rt), s,
                r);
    }

    public final Request iNeighborAllToAllv(Buffer sendbuf, int[] sendcount, int[] sdispls, Datatype sendtype,
            Buffer recvbuf, int[] recvcount, int[] rdispls, Datatype recvtype) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype st = sendtype.braid(), rt = recvtype.braid();
        ByteBuffer sb = d(sendbuf), rb = d(recvbuf);
        return req(() -> b.ineighborAlltoallv(nn(sb), sendcount, sdispls, st, nn(rb), recvcount, rdispls, rt),
                sendbuf, recvbuf);
    }

    public final void reduce(Object sendbuf, Object recvbuf, int count, Datatype type, Op op, int root)
            throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        Buf.Staged s = in(sendbuf, type, count), r = out(recvbuf, type, count);
        run(() -> b.reduce(s.bytes, r.bytes, count, t, o, root), s, r);
    }

    /** In place: at the root [buf] holds its contribution and receives the result; the others send [buf]. */
    public final void reduce(Object buf, int count, Datatype type, Op op, int root) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        if (isRoot(root)) {
            Buf.Staged r = out(buf, type, count);
            run(() -> b.reduce(braid.mpi.Mpi.IN_PLACE, r.bytes, count, t, o, root), r, null);
        } else {
            Buf.Staged s = in(buf, type, count);
            run(() -> b.reduce(s.bytes, null, count, t, o, root), s, null);
        }
    }

    public final Request iReduce(Buffer sendbuf, Buffer recvbuf, int count, Datatype type, Op op, int root)
            throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        ByteBuffer sb = d(sendbuf), rb = d(recvbuf);
        return req(() -> b.ireduce(sb, rb, count, t, o, root), sendbuf, recvbuf);
    }

    public final Request iReduce(Buffer buf, int count, Datatype type, Op op, int root) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        ByteBuffer bb = d(buf);
        if (isRoot(root)) return req(() -> b.ireduce(braid.mpi.Mpi.IN_PLACE, bb, count, t, o, root), null, buf);
        return req(() -> b.ireduce(bb, null, count, t, o, root), buf, null);
    }

    public final void allReduce(Object sendbuf, Object recvbuf, int count, Datatype type, Op op)
            throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        Buf.Staged s = in(sendbuf, type, count), r = out(recvbuf, type, count);
        run(() -> b.allreduce(nn(s.bytes), nn(r.bytes), count, t, o), s, r);
    }

    public final void allReduce(Object buf, int count, Datatype type, Op op) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        Buf.Staged r = out(buf, type, count);
        run(() -> b.allreduce(braid.mpi.Mpi.IN_PLACE, nn(r.bytes), count, t, o), r, null);
    }

    public final Request iAllReduce(Buffer sendbuf, Buffer recvbuf, int count, Datatype type, Op op)
            throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        ByteBuffer sb = d(sendbuf), rb = d(recvbuf);
        return req(() -> b.iallreduce(nn(sb), nn(rb), count, t, o), sendbuf, recvbuf);
    }

    public final Request iAllReduce(Buffer buf, int count, Datatype type, Op op) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        ByteBuffer bb = d(buf);
        return req(() -> b.iallreduce(braid.mpi.Mpi.IN_PLACE, nn(bb), count, t, o), null, buf);
    }

    public final void reduceScatter(Object sendbuf, Object recvbuf, int[] recvcounts, Datatype type, Op op)
            throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        Buf.Staged s = inAll(sendbuf), r = outAll(recvbuf);
        run(() -> b.reduceScatter(nn(s.bytes), nn(r.bytes), recvcounts, t, o), s, r);
    }

    public final void reduceScatter(Object buf, int[] counts, Datatype type, Op op) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        Buf.Staged r = outAll(buf);
        run(() -> b.reduceScatter(braid.mpi.Mpi.IN_PLACE, nn(r.bytes), counts, t, o), r, null);
    }

    public final Request iReduceScatter(Buffer sendbuf, Buffer recvbuf, int[] recvcounts, Datatype type, Op op)
            throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        ByteBuffer sb = d(sendbuf), rb = d(recvbuf);
        return req(() -> b.ireduceScatter(nn(sb), nn(rb), recvcounts, t, o), sendbuf, recvbuf);
    }

    public final Request iReduceScatter(Buffer buf, int[] counts, Datatype type, Op op) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        ByteBuffer bb = d(buf);
        return req(() -> b.ireduceScatter(braid.mpi.Mpi.IN_PLACE, nn(bb), counts, t, o), null, buf);
    }

    public final void reduceScatterBlock(Object sendbuf, Object recvbuf, int recvcount, Datatype type, Op op)
            throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        Buf.Staged s = inAll(sendbuf), r = out(recvbuf, type, recvcount);
        run(() -> b.reduceScatterBlock(nn(s.bytes), nn(r.bytes), recvcount, t, o), s, r);
    }

    public final void reduceScatterBlock(Object buf, int count, Datatype type, Op op) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        Buf.Staged r = outAll(buf);
        run(() -> b.reduceScatterBlock(braid.mpi.Mpi.IN_PLACE, nn(r.bytes), count, t, o), r, null);
    }

    public final Request iReduceScatterBlock(Buffer sendbuf, Buffer recvbuf, int recvcount, Datatype type, Op op)
            throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        ByteBuffer sb = d(sendbuf), rb = d(recvbuf);
        return req(() -> b.ireduceScatterBlock(nn(sb), nn(rb), recvcount, t, o), sendbuf, recvbuf);
    }

    public final Request iReduceScatterBlock(Buffer buf, int count, Datatype type, Op op) throws MPIException {
        braid.mpi.Comm b = braid();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        ByteBuffer bb = d(buf);
        return req(() -> b.ireduceScatterBlock(braid.mpi.Mpi.IN_PLACE, nn(bb), count, t, o), null, buf);
    }

    /** {@code MPI_Reduce_local}: {@code inOutBuf = inBuf op inOutBuf} for [count] elements. */
    public static void reduceLocal(Object inBuf, Object inOutBuf, int count, Datatype type, Op op)
            throws MPIException {
        MPI.check();
        braid.mpi.Datatype t = type.braid();
        braid.mpi.Op o = op.braid();
        Buf.Staged s = in(inBuf, type, count), r = out(inOutBuf, type, count);
        run(() -> o.reduce(nn(s.bytes), 0, nn(r.bytes), 0, count, t), s, r);
    }

    public final void setName(String name) throws MPIException {
        braid().setName(name);
    }

    public final String getName() throws MPIException {
        return braid().getName();
    }

    @Override
    public String toString() {
        return c == null ? "MPI_COMM_NULL" : c.getName();
    }
}
