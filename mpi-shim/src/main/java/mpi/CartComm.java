package mpi;

/** A communicator with a Cartesian topology ({@link Intracomm#createCart}); ranks are those of its parent. */
public final class CartComm extends Intracomm {
    CartComm(braid.mpi.Intracomm c) {
        super(c);
    }

    private braid.mpi.CartTopology cart() throws MPIException {
        braid.mpi.Topology t = braid().getTopology();
        if (!(t instanceof braid.mpi.CartTopology))
            throw Err.of(MPI.ERR_TOPOLOGY, "the communicator has no Cartesian topology");
        return (braid.mpi.CartTopology) t;
    }

    @Override
    int topology() {
        return MPI.CART;
    }

    @Override
    public CartComm clone() {
        return (CartComm) super.clone();
    }

    @Override
    public CartComm dup() throws MPIException {
        return (CartComm) super.dup();
    }

    @Override
    public CartComm iDup() throws MPIException {
        return (CartComm) super.iDup();
    }

    @Override
    public CartComm dupWithInfo(Info info) throws MPIException {
        return (CartComm) super.dupWithInfo(info);
    }

    /** {@code MPI_Cart_get}: the dimensions, periods and this process's coordinates. */
    public CartParms getTopo() throws MPIException {
        braid.mpi.CartTopology t = cart();
        return new CartParms(t.getDims(), t.getPeriods(), t.coords(getRank()));
    }

    /** {@code MPI_Cart_rank}. */
    public int getRank(int[] coords) throws MPIException {
        braid.mpi.CartTopology t = cart();
        try {
            return t.rank(coords);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    /** {@code MPI_Cart_coords}. */
    public int[] getCoords(int rank) throws MPIException {
        braid.mpi.CartTopology t = cart();
        try {
            return t.coords(rank);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    /** {@code MPI_Cart_shift}: where to receive from and send to for a shift of [disp] along [direction]. */
    public ShiftParms shift(int direction, int disp) throws MPIException {
        braid.mpi.CartTopology t = cart();
        try {
            int[] sd = t.shift(getRank(), direction, disp);
            return new ShiftParms(sd[0], sd[1]);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    /** {@code MPI_Cart_sub}: the sub-grid holding this process that keeps the dimensions [remainDims] says. */
    public CartComm sub(boolean[] remainDims) throws MPIException {
        braid.mpi.Intracomm b = intra();
        return (CartComm) build(() -> b.cartSub(remainDims));
    }

    /** {@code MPI_Cart_map}: this process's rank in such a grid (its own; ranks are never reordered), or UNDEFINED. */
    public int map(int[] dims, boolean[] periods) throws MPIException {
        int n = 1;
        for (int d : dims) n *= d;
        int r = getRank();
        return r < n ? r : MPI.UNDEFINED;
    }

    /** {@code MPI_Dims_create}: fills the zeros of [dims] with a balanced factorisation of [nnodes]. */
    public static void createDims(int nnodes, int[] dims) throws MPIException {
        MPI.check();
        try {
            braid.mpi.CartTopology.createDims(nnodes, dims);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }
}
