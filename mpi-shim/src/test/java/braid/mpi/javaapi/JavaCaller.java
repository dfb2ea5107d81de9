package braid.mpi.javaapi;

import braid.mpi.Comm;
import braid.mpi.Datatype;
import braid.mpi.ErrorClass;
import braid.mpi.ErrorHandler;
import braid.mpi.Group;
import braid.mpi.Intracomm;
import braid.mpi.MPIException;
import braid.mpi.Message;
import braid.mpi.Mpi;
import braid.mpi.Op;
import braid.mpi.Prequest;
import braid.mpi.Request;
import braid.mpi.Status;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** braid.mpi as a Java program uses it: compiled by the build, run by JavaCallerTest. */
public final class JavaCaller {
    private JavaCaller() {}

    /** Two ranks: a vector-typed send, an mprobe/mrecv, a persistent pair, a split, a reduce_local and a bad call. Returns a summary. */
    public static String run(Mpi mpi) {
        Intracomm world = mpi.getWorld();
        world.setErrhandler(ErrorHandler.ERRORS_RETURN);
        int rank = world.getRank();
        int peer = 1 - rank;
        Datatype column = Datatype.vector(3, 1, 2, Datatype.INT).commit();
        StringBuilder out = new StringBuilder();
        if (rank == 0) {
            ByteBuffer m = ByteBuffer.allocateDirect(24);
            for (int i = 0; i < 6; i++) m.putInt(i * 4, i);
            world.send(m, 1, column, peer, 1);
        } else {
            Message msg = world.mprobe(Mpi.ANY_SOURCE, 1);
            ByteBuffer into = ByteBuffer.allocate(12);
            Status s = msg.mrecv(into, msg.getStatus().getCount(Datatype.INT), Datatype.INT);
            out.append("got ").append(s.getCount(Datatype.INT)).append(" from ").append(s.getSource())
               .append(": ").append(into.getInt(0)).append(',').append(into.getInt(4)).append(',').append(into.getInt(8)).append(';');
        }
        ByteBuffer p = ByteBuffer.allocate(4);
        Prequest pr = rank == 0 ? world.sendInit(p, 1, Datatype.INT, peer, 2) : world.recvInit(p, 1, Datatype.INT, peer, 2);
        for (int i = 0; i < 3; i++) {
            p.putInt(0, i);
            Prequest.startAll(new Prequest[] {pr});
            Request.waitAll(new Request[] {pr});
        }
        pr.free();
        Intracomm self = world.split(rank, 0);
        Group g = self.getGroup();
        out.append("split size ").append(self.getSize()).append(" rank ").append(g.getRank()).append(';');
        // Reductions read elements in native byte order (as MPI reads memory): such buffers say so.
        ByteBuffer acc = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putInt(0, 1).putInt(4, 2);
        Op.SUM.reduce(ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putInt(0, 10).putInt(4, 20), 0, acc, 0, 2, Datatype.INT);
        out.append("sum ").append(acc.getInt(0)).append(',').append(acc.getInt(4)).append(';');
        try {
            world.send(p, 1, Datatype.INT, 5, 0);
        } catch (MPIException e) {
            out.append(ErrorClass.name(e.getErrorClass())).append(';');
        }
        out.append("tag_ub ").append(world.getAttr(Comm.TAG_UB));
        self.free();
        return out.toString();
    }
}
