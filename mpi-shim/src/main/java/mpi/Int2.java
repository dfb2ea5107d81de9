package mpi;

/**
 * The records of {@link MPI#INT2} (MPI_2INT): a int value and an int index, as MINLOC and MAXLOC read them, laid out as
 * braid.mpi lays them out (packed: the index at byte 4). {@code MPI.int2.getData(buffer, i)} reads record i.
 */
public final class Int2 extends Struct {
    private final int iOff;

    protected Int2() {
        int off = addInt();
        assert off == 0;
        setOffset(4);
        iOff = addInt();
        bind(MPI.INT2);
    }

    @Override
    protected Int2.Data newData() {
        return new Int2.Data();
    }

    /** One record: its value and its index. */
    public final class Data extends Struct.Data {
        public int getValue() {
            return getInt(0);
        }

        public int getIndex() {
            return getInt(iOff);
        }

        public void putValue(int v) {
            putInt(0, v);
        }

        public void putIndex(int v) {
            putInt(iOff, v);
        }
    }
}
