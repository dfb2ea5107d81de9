package mpi;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** A reduction operation ({@code MPI_Op}): a predefined one of {@link MPI}, or a {@link UserFunction}. */
public final class Op implements Freeable {
    protected final UserFunction uf;
    private final boolean commute;
    braid.mpi.Op op;

    Op(braid.mpi.Op op) {
        this.op = op;
        this.uf = null;
        this.commute = op.isCommutative();
    }

    /** A user-defined operation; [commute] says whether operands may be combined in any order. */
    public Op(UserFunction function, boolean commute) {
        this.uf = function;
        this.commute = commute;
        this.op = braid.mpi.Op.create(this::call, commute);
    }

    private void call(ByteBuffer in, ByteBuffer inout, int count, braid.mpi.Datatype type) {
        Datatype t = Datatype.facadeOf(type);
        try {
            if (t.baseType == Datatype.BOOLEAN) {
                int n = count * Math.max(1, (int) type.getExtent());
                boolean[] x = new boolean[n], y = new boolean[n];
                for (int i = 0; i < n; i++) {
                    x[i] = in.get(i) != 0;
                    y[i] = inout.get(i) != 0;
                }
                uf.call(x, y, count, t);
                for (int i = 0; i < n; i++) inout.put(i, y[i] ? (byte) 1 : (byte) 0);
            } else {
                uf.call(in.order(ByteOrder.nativeOrder()), inout.order(ByteOrder.nativeOrder()), count, t);
            }
        } catch (MPIException e) {
            throw new braid.mpi.MPIException(braid.mpi.ErrorClass.ERR_OP, "user function: " + e.getMessage(), e);
        }
    }

    braid.mpi.Op braid() throws MPIException {
        if (op == null) throw Err.of(MPI.ERR_OP, "the operation has been freed (MPI_OP_NULL)");
        return op;
    }

    public boolean isCommutative() {
        return commute;
    }

    @Override
    public void free() throws MPIException {
        if (op == null) return;
        try {
            op.free();
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
        op = null;
    }

    public boolean isNull() {
        return op == null;
    }
}
