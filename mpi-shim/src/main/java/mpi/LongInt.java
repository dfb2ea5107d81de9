package mpi;

/**
 * The records of {@link MPI#LONG_INT} (MPI_LONG_INT): a long value and an int index, as MINLOC and MAXLOC read them, laid out as
 * braid.mpi lays them out (packed: the index at byte 8). {@code MPI.longInt.getData(buffer, i)} reads record i.
 */
public final class LongInt extends Struct {
    private final int iOff;

    protected LongInt() {
        int off = addLong();
        assert off == 0;
        setOffset(8);
        iOff = addInt();
        bind(MPI.LONG_INT);
    }

    @Override
    protected LongInt.Data newData() {
        return new LongInt.Data();
    }

    /** One record: its value and its index. */
    public final class Data extends Struct.Data {
        public long getValue() {
            return getLong(0);
        }

        public int getIndex() {
            return getInt(iOff);
        }

        public void putValue(long v) {
            putLong(0, v);
        }

        public void putIndex(int v) {
            putInt(iOff, v);
        }
    }
}
