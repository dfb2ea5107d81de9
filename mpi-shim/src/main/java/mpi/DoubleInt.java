package mpi;

/**
 * The records of {@link MPI#DOUBLE_INT} (MPI_DOUBLE_INT): a double value and an int index, as MINLOC and MAXLOC read them, laid out as
 * braid.mpi lays them out (packed: the index at byte 8). {@code MPI.doubleInt.getData(buffer, i)} reads record i.
 */
public final class DoubleInt extends Struct {
    private final int iOff;

    protected DoubleInt() {
        int off = addDouble();
        assert off == 0;
        setOffset(8);
        iOff = addInt();
        bind(MPI.DOUBLE_INT);
    }

    @Override
    protected DoubleInt.Data newData() {
        return new DoubleInt.Data();
    }

    /** One record: its value and its index. */
    public final class Data extends Struct.Data {
        public double getValue() {
            return getDouble(0);
        }

        public int getIndex() {
            return getInt(iOff);
        }

        public void putValue(double v) {
            putDouble(0, v);
        }

        public void putIndex(int v) {
            putInt(iOff, v);
        }
    }
}
