package mpi;

/**
 * The records of {@link MPI#FLOAT_INT} (MPI_FLOAT_INT): a float value and an int index, as MINLOC and MAXLOC read them, laid out as
 * braid.mpi lays them out (packed: the index at byte 4). {@code MPI.floatInt.getData(buffer, i)} reads record i.
 */
public final class FloatInt extends Struct {
    private final int iOff;

    protected FloatInt() {
        int off = addFloat();
        assert off == 0;
        setOffset(4);
        iOff = addInt();
        bind(MPI.FLOAT_INT);
    }

    @Override
    protected FloatInt.Data newData() {
        return new FloatInt.Data();
    }

    /** One record: its value and its index. */
    public final class Data extends Struct.Data {
        public float getValue() {
            return getFloat(0);
        }

        public int getIndex() {
            return getInt(iOff);
        }

        public void putValue(float v) {
            putFloat(0, v);
        }

        public void putIndex(int v) {
            putInt(iOff, v);
        }
    }
}
