package mpi;

import java.nio.Buffer;

/**
 * A nonblocking operation in flight ({@code MPI_Request}) over a {@code braid.mpi.Request}. Once its completion has
 * been returned (a wait, or a test that says complete) it is {@link #isNull}, as Open MPI's requests become {@code
 * MPI_REQUEST_NULL}. It holds the direct buffers the operation reads and writes so they live as long as it does.
 */
public class Request implements Freeable {
    braid.mpi.Request r;
    protected Buffer sendBuf;
    protected Buffer recvBuf;

    Request(braid.mpi.Request r) {
        this.r = r;
    }

    static Request of(braid.mpi.Request r, Buffer send, Buffer recv) {
        Request q = new Request(r);
        q.sendBuf = send;
        q.recvBuf = recv;
        return q;
    }

    @Override
    public void free() throws MPIException {
        if (!isNull()) {
            MPI.check();
            r.free();
            r = null;
        }
    }

    public final void cancel() throws MPIException {
        MPI.check();
        if (r == null) return;
        try {
            r.cancel();
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    protected final void addRecvBufRef(Buffer buf) {
        this.recvBuf = buf;
    }

    protected final void addSendBufRef(Buffer buf) {
        this.sendBuf = buf;
    }

    public final boolean isNull() {
        return r == null || r.isNull();
    }

    public final Status waitStatus() throws MPIException {
        MPI.check();
        if (r == null) return new Status();
        try {
            return Status.of(r.waitFor(Buf.scratchStatus()));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        } finally {
            spent();
        }
    }

    public final void waitFor() throws MPIException {
        MPI.check();
        if (r == null) return;
        try {
            r.waitFor(Buf.scratchStatus());
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        } finally {
            spent();
        }
    }

    /** The status if the operation is complete (the request is then null), else null. */
    public final Status testStatus() throws MPIException {
        MPI.check();
        if (r == null) return new Status();
        try {
            braid.mpi.Status s = r.test();
            if (s != null) spent();
            return Status.of(s);
        } catch (braid.mpi.MPIException e) {
            spent();
            throw Err.of(e);
        }
    }

    /** {@code MPI_Request_get_status}: the status if complete, without freeing the request; else null. */
    public final Status getStatus() throws MPIException {
        MPI.check();
        if (r == null) return new Status();
        return Status.of(r.peekStatus());
    }

    public final boolean test() throws MPIException {
        return testStatus() != null;
    }

    /**
     * Once its completion was returned, a request is {@code MPI_REQUEST_NULL}: it lets go of its buffers and hands its
     * braid.mpi request back for reuse (so a warm nonblocking loop allocates no operation). A persistent one stays.
     */
    void spent() {
        braid.mpi.Request b = r;
        if (b != null && b.isNull() && !(b instanceof braid.mpi.Prequest)) {
            r = null;
            sendBuf = null;
            recvBuf = null;
            b.recycle();
        }
    }

    // ## Arrays of requests ##

    static braid.mpi.Request[] braid(Request[] requests) {
        braid.mpi.Request[] b = new braid.mpi.Request[requests.length];
        for (int i = 0; i < requests.length; i++) b[i] = requests[i] == null ? null : requests[i].r;
        return b;
    }

    private static void spentAll(Request[] requests) {
        for (Request q : requests) if (q != null) q.spent();
    }

    public static Status waitAnyStatus(Request[] requests) throws MPIException {
        MPI.check();
        try {
            braid.mpi.Status s = braid.mpi.Request.waitAny(braid(requests));
            return Status.of(s);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        } finally {
            spentAll(requests);
        }
    }

    /** The index of the request that completed, or {@link MPI#UNDEFINED} when none was active. */
    public static int waitAny(Request[] requests) throws MPIException {
        return waitAnyStatus(requests).getIndex();
    }

    public static Status testAnyStatus(Request[] requests) throws MPIException {
        MPI.check();
        try {
            return Status.of(braid.mpi.Request.testAny(braid(requests)));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        } finally {
            spentAll(requests);
        }
    }

    /** The index of a completed request, or {@link MPI#UNDEFINED}. */
    public static int testAny(Request[] requests) throws MPIException {
        Status s = testAnyStatus(requests);
        return s == null ? MPI.UNDEFINED : s.getIndex();
    }

    public static Status[] waitAllStatus(Request[] requests) throws MPIException {
        MPI.check();
        try {
            return statuses(braid.mpi.Request.waitAll(braid(requests)));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        } finally {
            spentAll(requests);
        }
    }

    public static void waitAll(Request[] requests) throws MPIException {
        MPI.check();
        int n = requests.length;
        braid.mpi.Request[] b = Buf.scratchRequests(n); // no array per call: a warm window allocates nothing here
        for (int i = 0; i < n; i++) b[i] = requests[i] == null ? null : requests[i].r;
        try {
            braid.mpi.Request.waitAll(b, null);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        } finally {
            java.util.Arrays.fill(b, 0, n, null);
            spentAll(requests);
        }
    }

    /** Every status if all completed, else null. */
    public static Status[] testAllStatus(Request[] requests) throws MPIException {
        MPI.check();
        try {
            braid.mpi.Status[] s = braid.mpi.Request.testAll(braid(requests));
            return s == null ? null : statuses(s);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        } finally {
            spentAll(requests);
        }
    }

    public static boolean testAll(Request[] requests) throws MPIException {
        return testAllStatus(requests) != null;
    }

    /** The statuses of the requests that completed (at least one), or null when none was active. */
    public static Status[] waitSomeStatus(Request[] requests) throws MPIException {
        MPI.check();
        if (noneActive(requests)) return null;
        try {
            return statuses(braid.mpi.Request.waitSome(braid(requests)));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        } finally {
            spentAll(requests);
        }
    }

    public static int[] waitSome(Request[] requests) throws MPIException {
        return indices(waitSomeStatus(requests));
    }

    /** The statuses of the requests that completed (possibly none), or null when none was active. */
    public static Status[] testSomeStatus(Request[] requests) throws MPIException {
        MPI.check();
        if (noneActive(requests)) return null;
        try {
            return statuses(braid.mpi.Request.testSome(braid(requests)));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        } finally {
            spentAll(requests);
        }
    }

    public static int[] testSome(Request[] requests) throws MPIException {
        return indices(testSomeStatus(requests));
    }

    private static boolean noneActive(Request[] requests) {
        for (Request q : requests) if (q != null && !q.isNull()) return false;
        return true;
    }

    private static Status[] statuses(braid.mpi.Status[] s) {
        Status[] out = new Status[s.length];
        for (int i = 0; i < s.length; i++) out[i] = Status.of(s[i]);
        return out;
    }

    private static int[] indices(Status[] s) {
        if (s == null) return null;
        int[] idx = new int[s.length];
        for (int i = 0; i < s.length; i++) idx[i] = s[i].getIndex();
        return idx;
    }
}
