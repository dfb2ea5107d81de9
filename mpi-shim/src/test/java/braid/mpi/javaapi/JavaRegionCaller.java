package braid.mpi.javaapi;

import braid.bench.SegmentDevice;
import braid.core.HmemOp;
import braid.core.MemoryRegion;
import braid.core.MrAccess;
import braid.mpi.Datatype;
import braid.mpi.ErrorHandler;
import braid.mpi.Intracomm;
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
}
