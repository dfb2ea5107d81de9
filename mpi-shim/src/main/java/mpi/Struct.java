package mpi;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * A record type built field by field ({@code addInt()}, {@code addDouble(3)}, {@code addStruct(other)} …), and the
 * typed view of such records in a buffer ({@link Data}). Subclass it, add the fields in the constructor, and give
 * {@link #newData} a {@code Data} subclass whose getters and putters read the fields at the offsets the {@code add…}
 * calls returned. {@link #getType} commits it as an MPI datatype ({@code MPI_Type_create_struct}, base type bytes:
 * use it with {@code byte[]} or {@code ByteBuffer}s).
 */
public abstract class Struct {
    private final List<Field> fields = new ArrayList<>();
    private int extent;
    private Datatype datatype;

    private static final class Field {
        final Object type;
        final int offset, length;

        Field(Object type, int offset, int length) {
            this.type = type;
            this.offset = offset;
            this.length = length;
        }
    }

    /** The pair types' records are braid.mpi's predefined pairs: their layout and type are [type]'s. */
    final void bind(Datatype type) {
        datatype = type;
        extent = (int) type.type.getExtent();
    }

    private void commit() throws MPIException {
        if (datatype != null) return;
        int n = fields.size();
        int[] lengths = new int[n], offsets = new int[n];
        Datatype[] types = new Datatype[n];
        for (int i = 0; i < n; i++) {
            Field f = fields.get(i);
            lengths[i] = f.length;
            offsets[i] = f.offset;
            types[i] = f.type instanceof Struct ? ((Struct) f.type).datatype : (Datatype) f.type;
        }
        Datatype d = Datatype.createStruct(lengths, offsets, types);
        d.commit();
        // The record's extent: as the fields laid it out (or setOffset), aligned as MPI_Type_create_struct aligns.
        extent = Math.max(extent, d.getExtent());
        if (d.getExtent() != extent) d = Datatype.createResized(d, 0, extent);
        datatype = d;
    }

    /** The bytes one record spans. */
    public final int getExtent() throws MPIException {
        commit();
        return extent;
    }

    /** The committed datatype of one record. */
    public final Datatype getType() throws MPIException {
        commit();
        return datatype;
    }

    /** A new, unbound view of one record (the subclass's {@code Data}). */
    protected abstract Data newData();

    @SuppressWarnings("unchecked")
    private <T extends Data> T newData(ByteBuffer buffer, int offset) {
        Data d = newData();
        d.buffer = buffer;
        d.offset = offset;
        return (T) d;
    }

    /** The record at the start of [buffer]. */
    public final <T extends Data> T getData(ByteBuffer buffer) throws MPIException {
        commit();
        return newData(buffer, 0);
    }

    /** Record [index] of [buffer]. */
    public final <T extends Data> T getData(ByteBuffer buffer, int index) throws MPIException {
        commit();
        return newData(buffer, index * extent);
    }

    public final <T extends Data> T getData(byte[] array) throws MPIException {
        return getData(ByteBuffer.wrap(array).order(ByteOrder.nativeOrder()));
    }

    public final <T extends Data> T getData(byte[] array, int index) throws MPIException {
        return getData(ByteBuffer.wrap(array).order(ByteOrder.nativeOrder()), index);
    }

    private int addField(Object type, int typeExtent, int length) {
        if (datatype != null) throw new AssertionError("The struct data type was committed.");
        int offset = extent;
        extent += typeExtent * length;
        fields.add(new Field(type, offset, length));
        return offset;
    }

    /** Moves the next field to byte [offset] (at least the extent so far). */
    public final Struct setOffset(int offset) {
        if (datatype != null) throw new AssertionError("The struct data type was committed.");
        if (offset < extent)
            throw new IllegalArgumentException("The offset must be greater or equal to the accumulated extent.");
        extent = offset;
        return this;
    }

    public final int addByte() {
        return addByte(1);
    }

    public final int addByte(int length) {
        return addField(MPI.BYTE, 1, length);
    }

    public final int addChar() {
        return addChar(1);
    }

    public final int addChar(int length) {
        return addField(MPI.CHAR, 2, length);
    }

    public final int addShort() {
        return addShort(1);
    }

    public final int addShort(int length) {
        return addField(MPI.SHORT, 2, length);
    }

    public final int addInt() {
        return addInt(1);
    }

    public final int addInt(int length) {
        return addField(MPI.INT, 4, length);
    }

    public final int addLong() {
        return addLong(1);
    }

    public final int addLong(int length) {
        return addField(MPI.LONG, 8, length);
    }

    public final int addFloat() {
        return addFloat(1);
    }

    public final int addFloat(int length) {
        return addField(MPI.FLOAT, 4, length);
    }

    public final int addDouble() {
        return addDouble(1);
    }

    public final int addDouble(int length) {
        return addField(MPI.DOUBLE, 8, length);
    }

    public final int addStruct(Struct struct) throws MPIException {
        return addStruct(struct, 1);
    }

    public final int addStruct(Struct struct, int length) throws MPIException {
        struct.commit();
        return addField(struct, struct.extent, length);
    }

    public final int addData(Datatype type) throws MPIException {
        return addData(type, 1);
    }

    public final int addData(Datatype type, int length) throws MPIException {
        return addField(type, type.getExtent() * type.baseSize, length);
    }

    /** One record in a buffer: the subclass's getters and putters read and write its fields. */
    public abstract class Data {
        private ByteBuffer buffer;
        private int offset;

        /** The buffer from this record on. */
        public final ByteBuffer getBuffer() {
            return offset == 0 ? buffer : MPI.slice(buffer, offset);
        }

        protected final <S extends Struct, D extends Struct.Data> D getData(S struct, int field) {
            return ((Struct) struct).newData(buffer, offset + field);
        }

        protected final <S extends Struct, D extends Struct.Data> D getData(S struct, int field, int index) {
            Struct s = struct;
            return s.newData(buffer, offset + field + index * s.extent);
        }

        protected final ByteBuffer getBuffer(Datatype type, int field) {
            int position = offset + field;
            return position == 0 ? buffer : MPI.slice(buffer, position);
        }

        protected final ByteBuffer getBuffer(Datatype type, int field, int index) throws MPIException {
            int position = offset + field + index * type.getExtent() * type.baseSize;
            return position == 0 ? buffer : MPI.slice(buffer, position);
        }

        protected final byte getByte(int field) {
            return buffer.get(offset + field);
        }

        protected final byte getByte(int field, int index) {
            return buffer.get(offset + field + index);
        }

        protected final void putByte(int field, byte v) {
            buffer.put(offset + field, v);
        }

        protected final void putByte(int field, int index, byte v) {
            buffer.put(offset + field + index, v);
        }

        protected final char getChar(int field) {
            return buffer.getChar(offset + field);
        }

        protected final char getChar(int field, int index) {
            return buffer.getChar(offset + field + index * 2);
        }

        protected final void putChar(int field, char v) {
            buffer.putChar(offset + field, v);
        }

        protected final void putChar(int field, int index, char v) {
            buffer.putChar(offset + field + index * 2, v);
        }

        protected final short getShort(int field) {
            return buffer.getShort(offset + field);
        }

        protected final short getShort(int field, int index) {
            return buffer.getShort(offset + field + index * 2);
        }

        protected final void putShort(int field, short v) {
            buffer.putShort(offset + field, v);
        }

        protected final void putShort(int field, int index, short v) {
            buffer.putShort(offset + field + index * 2, v);
        }

        protected final int getInt(int field) {
            return buffer.getInt(offset + field);
        }

        protected final int getInt(int field, int index) {
            return buffer.getInt(offset + field + index * 4);
        }

        protected final void putInt(int field, int v) {
            buffer.putInt(offset + field, v);
        }

        protected final void putInt(int field, int index, int v) {
            buffer.putInt(offset + field + index * 4, v);
        }

        protected final long getLong(int field) {
            return buffer.getLong(offset + field);
        }

        protected final long getLong(int field, int index) {
            return buffer.getLong(offset + field + index * 8);
        }

        protected final void putLong(int field, long v) {
            buffer.putLong(offset + field, v);
        }

        protected final void putLong(int field, int index, long v) {
            buffer.putLong(offset + field + index * 8, v);
        }

        protected final float getFloat(int field) {
            return buffer.getFloat(offset + field);
        }

        protected final float getFloat(int field, int index) {
            return buffer.getFloat(offset + field + index * 4);
        }

        protected final void putFloat(int field, float v) {
            buffer.putFloat(offset + field, v);
        }

        protected final void putFloat(int field, int index, float v) {
            buffer.putFloat(offset + field + index * 4, v);
        }

        protected final double getDouble(int field) {
            return buffer.getDouble(offset + field);
        }

        protected final double getDouble(int field, int index) {
            return buffer.getDouble(offset + field + index * 8);
        }

        protected final void putDouble(int field, double v) {
            buffer.putDouble(offset + field, v);
        }

        protected final void putDouble(int field, int index, double v) {
            buffer.putDouble(offset + field + index * 8, v);
        }
    }
}
