package mpi;

/**
 * The records of {@link MPI#SHORT_INT} (MPI_SHORT_INT): a short value and an int index, as MINLOC and MAXLOC read them, laid out as
 * braid.mpi lays them out (packed: the index at byte 2). {@code MPI.shortInt.getData(buffer, i)} reads record i.
 */
public final class ShortInt extends Struct {
    private final int iOff;

    protected ShortInt() {
        int off = addShort();
        assert off == 0;
        setOffset(2);
        iOff = addInt();
        bind(MPI.SHORT_INT);
    }

    @Override
    protected ShortInt.Data newData() {
        return new ShortInt.Data();
    }

    /** One record: its value and its index. */
    public final class Data extends Struct.Data {
        public short getValue() {
            return getShort(0);
        }

        public int getIndex() {
            return getInt(iOff);
        }

        public void putValue(short v) {
            putShort(0, v);
        }

        public void putIndex(int v) {
            putInt(iOff, v);
        }
    }
}
