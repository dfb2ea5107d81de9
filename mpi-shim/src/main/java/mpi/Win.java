package mpi;

import java.nio.Buffer;

/**
 * A one-sided communication window ({@code MPI_Win}) with Open MPI's members. Braid's one-sided windows are wired to
 * this class by issue 24; until then every member raises {@link MPIException} of class {@link
 * MPI#ERR_UNSUPPORTED_OPERATION} saying so, and programs that use windows compile unchanged.
 */
public final class Win implements Freeable {
    public static final int WIN_NULL = 0;
    public static final int FLAVOR_PRIVATE = 0;
    public static final int FLAVOR_SHARED = 1;

    public Win(Buffer base, int size, int dispUnit, Info info, Comm comm) throws MPIException {
        throw Err.winUnsupported("Win.Win (constructor)");
    }

    public Win(int size, int dispUnit, Info info, Comm comm, Buffer base, int flavor) throws MPIException {
        throw Err.winUnsupported("Win.Win (constructor)");
    }

    public Win(Info info, Comm comm) throws MPIException {
        throw Err.winUnsupported("Win.Win (constructor)");
    }

    public void attach(Buffer base, int size) throws MPIException {
        throw Err.winUnsupported("Win.attach");
    }

    public void detach(Buffer base) throws MPIException {
        throw Err.winUnsupported("Win.detach");
    }

    public Group getGroup() throws MPIException {
        throw Err.winUnsupported("Win.getGroup");
    }

    public void put(Buffer origin, int orgCount, Datatype orgType, int targetRank, int targetDisp, int targetCount, Datatype targetType) throws MPIException {
        throw Err.winUnsupported("Win.put");
    }

    public void get(Buffer origin, int orgCount, Datatype orgType, int targetRank, int targetDisp, int targetCount, Datatype targetType) throws MPIException {
        throw Err.winUnsupported("Win.get");
    }

    public void accumulate(Buffer origin, int orgCount, Datatype orgType, int targetRank, int targetDisp, int targetCount, Datatype targetType, Op op) throws MPIException {
        throw Err.winUnsupported("Win.accumulate");
    }

    public void fence(int assertion) throws MPIException {
        throw Err.winUnsupported("Win.fence");
    }

    public void start(Group group, int assertion) throws MPIException {
        throw Err.winUnsupported("Win.start");
    }

    public void complete() throws MPIException {
        throw Err.winUnsupported("Win.complete");
    }

    public void post(Group group, int assertion) throws MPIException {
        throw Err.winUnsupported("Win.post");
    }

    public void waitFor() throws MPIException {
        throw Err.winUnsupported("Win.waitFor");
    }

    public boolean test() throws MPIException {
        throw Err.winUnsupported("Win.test");
    }

    public void lock(int lockType, int rank, int assertion) throws MPIException {
        throw Err.winUnsupported("Win.lock");
    }

    public void unlock(int rank) throws MPIException {
        throw Err.winUnsupported("Win.unlock");
    }

    public void setErrhandler(Errhandler errhandler) throws MPIException {
        throw Err.winUnsupported("Win.setErrhandler");
    }

    public Errhandler getErrhandler() throws MPIException {
        throw Err.winUnsupported("Win.getErrhandler");
    }

    public void callErrhandler(int errorCode) throws MPIException {
        throw Err.winUnsupported("Win.callErrhandler");
    }

    public static int createKeyval() throws MPIException {
        throw Err.winUnsupported("Win.createKeyval");
    }

    public static void freeKeyval(int keyval) throws MPIException {
        throw Err.winUnsupported("Win.freeKeyval");
    }

    public void setAttr(int keyval, Object value) throws MPIException {
        throw Err.winUnsupported("Win.setAttr");
    }

    public Object getAttr(int keyval) throws MPIException {
        throw Err.winUnsupported("Win.getAttr");
    }

    public void deleteAttr(int keyval) throws MPIException {
        throw Err.winUnsupported("Win.deleteAttr");
    }

    public void free() throws MPIException {
        throw Err.winUnsupported("Win.free");
    }

    public Info getInfo() throws MPIException {
        throw Err.winUnsupported("Win.getInfo");
    }

    public void setInfo(Info info) throws MPIException {
        throw Err.winUnsupported("Win.setInfo");
    }

    public final Request rPut(Buffer origin_addr, int origin_count, Datatype origin_datatype, int target_rank, int target_disp, int target_count, Datatype target_datatype) throws MPIException {
        throw Err.winUnsupported("Win.rPut");
    }

    public final Request rGet(Buffer origin, int orgCount, Datatype orgType, int targetRank, int targetDisp, int targetCount, Datatype targetType) throws MPIException {
        throw Err.winUnsupported("Win.rGet");
    }

    public Request rAccumulate(Buffer origin, int orgCount, Datatype orgType, int targetRank, int targetDisp, int targetCount, Datatype targetType, Op op) throws MPIException {
        throw Err.winUnsupported("Win.rAccumulate");
    }

    public void getAccumulate(Buffer origin, int orgCount, Datatype orgType, Buffer resultAddr, int resultCount, Datatype resultType, int targetRank, int targetDisp, int targetCount, Datatype targetType, Op op) throws MPIException {
        throw Err.winUnsupported("Win.getAccumulate");
    }

    public Request rGetAccumulate(Buffer origin, int orgCount, Datatype orgType, Buffer resultAddr, int resultCount, Datatype resultType, int targetRank, int targetDisp, int targetCount, Datatype targetType, Op op) throws MPIException {
        throw Err.winUnsupported("Win.rGetAccumulate");
    }

    public void lockAll(int assertion) throws MPIException {
        throw Err.winUnsupported("Win.lockAll");
    }

    public void unlockAll() throws MPIException {
        throw Err.winUnsupported("Win.unlockAll");
    }

    public void sync() throws MPIException {
        throw Err.winUnsupported("Win.sync");
    }

    public void flush(int targetRank) throws MPIException {
        throw Err.winUnsupported("Win.flush");
    }

    public void flushAll() throws MPIException {
        throw Err.winUnsupported("Win.flushAll");
    }

    public void compareAndSwap(Buffer origin, Buffer compareAddr, Buffer resultAddr, Datatype targetType, int targetRank, int targetDisp) throws MPIException {
        throw Err.winUnsupported("Win.compareAndSwap");
    }

    public void fetchAndOp(Buffer origin, Buffer resultAddr, Datatype dataType, int targetRank, int targetDisp, Op op) throws MPIException {
        throw Err.winUnsupported("Win.fetchAndOp");
    }

    public void flushLocal(int targetRank) throws MPIException {
        throw Err.winUnsupported("Win.flushLocal");
    }

    public void flushLocalAll() throws MPIException {
        throw Err.winUnsupported("Win.flushLocalAll");
    }

    public String getName() throws MPIException {
        throw Err.winUnsupported("Win.getName");
    }

    public void setName(String name) throws MPIException {
        throw Err.winUnsupported("Win.setName");
    }

}
