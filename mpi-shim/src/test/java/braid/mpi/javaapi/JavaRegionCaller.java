package braid.mpi.javaapi;

import braid.bench.SegmentDevice;
import braid.core.HmemOp;
import braid.core.MemoryRegion;
import braid.core.MrAccess;
import braid.mpi.Datatype;
import braid.mpi.ErrorHandler;
import braid.mpi.Intracomm;
import braid.mpi.Message;
import braid.mpi.Mpi;
import braid.mpi.Op;
import braid.mpi.Request;
import braid.mpi.Status;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** braid.mpi on device memory as a Java program uses it: compiled by the build, run by HmemMpiTest. */
public final class JavaRegionCaller {
    private JavaRegionCaller() {}

    /** Two ranks: rank 0 sends 16 ints of device memory to rank 1's, then both allreduce 3 ints. Returns a summary. */
    public static String run(Mpi mpi, SegmentDevice dev, long[] at) {
        Intracomm world = mpi.getWorld();
        world.setErrhandler(ErrorHandler.ERRORS_RETURN);
        SegmentDevice.Copies copies = dev.copies();
        if (mpi.setOp(HmemOp.COPY_TO_HMEM_IOV, copies.getToHmem()) != 0) throw new IllegalStateException("to");
        if (mpi.setOp(HmemOp.COPY_FROM_HMEM_IOV, copies.getFromHmem()) != 0) throw new IllegalStateException("from");
        int access = MrAccess.SEND | MrAccess.RECV;
        StringBuilder out = new StringBuilder();
        try (MemoryRegion a = mpi.registerMemory(dev.getIface(), 0, at[0], 4096, access);
             MemoryRegion b = mpi.registerMemory(dev.getIface(), 0, at[1], 4096, access)) {
            if (world.getRank() == 0) {
                ByteBuffer v = ByteBuffer.allocate(64).order(ByteOrder.nativeOrder());
                for (int i = 0; i < 16; i++) v.putInt(i * 4, i * 10);
                dev.put(at[0], v.array());
                world.send(a, 0L, 16, Datatype.INT, 1, 7);
                out.append("sent 16 ints through ").append(copies.getFromCalls().get()).append(" copy calls; ");
            } else {
                Request r = world.irecv(b, 0L, 16, Datatype.INT, 0, 7);
                Status s = r.waitFor();
                ByteBuffer got = ByteBuffer.wrap(dev.get(at[1], 64)).order(ByteOrder.nativeOrder());
                out.append("got ").append(s.getCount(Datatype.INT)).append(" ints: ").append(got.getInt(0))
                   .append("..").append(got.getInt(60)).append(" through ").append(copies.getToCalls().get())
                   .append(" copy calls; ");
            }
            ByteBuffer mine = ByteBuffer.allocate(12).order(ByteOrder.nativeOrder());
            for (int i = 0; i < 3; i++) mine.putInt(i * 4, world.getRank() + i);
            dev.put(at[0] + 1024, mine.array());
            world.allreduce(a, 1024L, b, 1024L, 3, Datatype.INT, Op.SUM);
            ByteBuffer sum = ByteBuffer.wrap(dev.get(at[1] + 1024, 12)).order(ByteOrder.nativeOrder());
            out.append("allreduce ").append(sum.getInt(0)).append(',').append(sum.getInt(4)).append(',').append(sum.getInt(8));
        }
        return out.toString();
    }

    /**
     * Two ranks call each shape of CommRegionExchanges and Message's region receive on device memory: rsend, bsend,
     * mrecv (rank 0 to 1), then sendRecv, sendRecvReplace, reduceScatter, alltoallw and a neighbour allgather on a ring.
     * Returns what landed, as ints.
     */
    public static String exchanges(Mpi mpi, SegmentDevice dev, long[] at) {
        Intracomm world = mpi.getWorld();
        world.setErrhandler(ErrorHandler.ERRORS_RETURN);
        SegmentDevice.Copies copies = dev.copies();
        if (mpi.setOp(HmemOp.COPY_TO_HMEM_IOV, copies.getToHmem()) != 0) throw new IllegalStateException("to");
        if (mpi.setOp(HmemOp.COPY_FROM_HMEM_IOV, copies.getFromHmem()) != 0) throw new IllegalStateException("from");
        int r = world.getRank();
        int other = 1 - r;
        int access = MrAccess.SEND | MrAccess.RECV;
        StringBuilder out = new StringBuilder();
        try (MemoryRegion a = mpi.registerMemory(dev.getIface(), 0, at[0], 4096, access);
             MemoryRegion b = mpi.registerMemory(dev.getIface(), 0, at[1], 4096, access)) {
            ByteBuffer v = ByteBuffer.allocate(64).order(ByteOrder.nativeOrder());
            for (int i = 0; i < 16; i++) v.putInt(i * 4, r * 100 + i);
            dev.put(at[0], v.array());
            if (r == 0) {
                world.rsend(a, 0L, 4, Datatype.INT, 1, 1);
                mpi.bufferAttach(ByteBuffer.allocateDirect(1024));
                world.bsend(a, 16L, 4, Datatype.INT, 1, 2);
                mpi.bufferDetach();
                ByteBuffer host = ByteBuffer.allocateDirect(16).order(ByteOrder.nativeOrder());
                for (int i = 0; i < 4; i++) host.putInt(i * 4, 7);
                world.send(host, 4, Datatype.INT, 1, 3);
            } else {
                world.recv(b, 0L, 4, Datatype.INT, 0, 1);
                world.recv(b, 16L, 4, Datatype.INT, 0, 2);
                Message m = world.mprobe(0, 3);
                m.mrecv(b, 32L, 4, Datatype.INT);
                out.append("modes ").append(ints(dev, at[1], 12)).append("; ");
            }
            world.sendRecv(a, 0L, 2, Datatype.INT, other, 4, b, 48L, 2, Datatype.INT, other, 4);
            out.append("sendrecv ").append(ints(dev, at[1] + 48, 2));
            world.sendRecvReplace(b, 48L, 2, Datatype.INT, other, 5, other, 5);
            out.append("; replace ").append(ints(dev, at[1] + 48, 2));
            world.reduceScatter(a, 0L, b, 0L, new int[] {1, 2}, Datatype.INT, Op.SUM);
            out.append("; reduce_scatter ").append(ints(dev, at[1], r + 1));
            Datatype[] types = {Datatype.INT, Datatype.INT};
            int[] one = {1, 1};
            int[] displs = {0, 4};
            world.alltoallw(a, 0L, one, displs, types, b, 0L, one, displs, types);
            out.append("; alltoallw ").append(ints(dev, at[1], 2));
            Intracomm ring = world.createCart(new int[] {2}, new boolean[] {true});
            ring.neighborAllgather(a, 4L, 1, Datatype.INT, b, 0L, 1, Datatype.INT);
            out.append("; neighbours ").append(ints(dev, at[1], 2));
            ring.free();
        }
        return out.toString();
    }

    private static String ints(SegmentDevice dev, long address, int n) {
        ByteBuffer got = ByteBuffer.wrap(dev.get(address, n * 4)).order(ByteOrder.nativeOrder());
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < n; i++) s.append(i == 0 ? "" : ",").append(got.getInt(i * 4));
        return s.toString();
    }
}
