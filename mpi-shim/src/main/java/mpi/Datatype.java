package mpi;

import java.util.HashMap;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A datatype ({@code MPI_Datatype}) over {@code braid.mpi.Datatype}. As in Open MPI's bindings, every datatype has a
 * base type (the Java element kind of the arrays and buffers it describes: {@code int[]} for {@link MPI#INT} and the
 * types built from it); {@link #getLb}, {@link #getExtent} and their true forms count in elements of that base type,
 * and so do the displacements of {@link #createIndexed} and the strides of {@link #createVector}. {@link
 * #createStruct} builds a type over bytes ({@code byte[]} or a {@code ByteBuffer}).
 */
public final class Datatype implements Freeable, Cloneable {
    protected static final int NULL = 0;
    protected static final int BYTE = 1;
    protected static final int CHAR = 2;
    protected static final int SHORT = 3;
    protected static final int BOOLEAN = 4;
    protected static final int INT = 5;
    protected static final int LONG = 6;
    protected static final int FLOAT = 7;
    protected static final int DOUBLE = 8;
    protected static final int PACKED = 9;
    protected static final int INT2 = 10;
    protected static final int SHORT_INT = 11;
    protected static final int LONG_INT = 12;
    protected static final int FLOAT_INT = 13;
    protected static final int DOUBLE_INT = 14;
    protected static final int FLOAT_COMPLEX = 15;
    protected static final int DOUBLE_COMPLEX = 16;

    protected int baseType;
    protected int baseSize;
    braid.mpi.Datatype type;
    private Map<Integer, Object> attrs;

    private static final AtomicInteger keyvals = new AtomicInteger(1);

    /** The facade of each braid type made here (user ops get braid types back and need their base type). */
    private static final Map<braid.mpi.Datatype, Datatype> facades = new WeakHashMap<>();

    Datatype(braid.mpi.Datatype type, int baseType, int baseSize) {
        this.type = type;
        this.baseType = baseType;
        this.baseSize = baseSize;
        if (type != null) synchronized (facades) {
            facades.putIfAbsent(type, this);
        }
    }

    static Datatype facadeOf(braid.mpi.Datatype type) {
        synchronized (facades) {
            Datatype d = facades.get(type);
            return d != null ? d : new Datatype(type, BYTE, 1);
        }
    }

    private Datatype(Datatype old, braid.mpi.Datatype type) {
        this(type, old.baseType, old.baseSize);
    }

    braid.mpi.Datatype braid() throws MPIException {
        if (type == null) throw Err.of(MPI.ERR_TYPE, "the datatype is MPI.DATATYPE_NULL or has been freed");
        return type;
    }

    /** The bytes a call with [count] of this type reaches from its buffer's first element. */
    long spanBytes(int count) {
        if (type == null || count <= 0) return 0;
        return Math.max(0, (count - 1) * type.getExtent() + type.getTrueLb() + type.getTrueExtent());
    }

    private int units(long bytes) {
        return baseSize == 0 ? 0 : (int) (bytes / baseSize);
    }

    public int getLb() throws MPIException {
        MPI.check();
        return units(braid().getLb());
    }

    public int getExtent() throws MPIException {
        MPI.check();
        return units(braid().getExtent());
    }

    public int getTrueLb() throws MPIException {
        MPI.check();
        return units(braid().getTrueLb());
    }

    public int getTrueExtent() throws MPIException {
        MPI.check();
        return units(braid().getTrueExtent());
    }

    /** The number of base-type elements in one element of this type ({@code MPI_Type_size} over the base size). */
    public int getSize() throws MPIException {
        MPI.check();
        return units(braid().getSize());
    }

    public void commit() throws MPIException {
        MPI.check();
        try {
            braid().commit();
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    @Override
    public void free() throws MPIException {
        MPI.check();
        if (type == null) return;
        if (type.isPredefined())
            throw Err.of(MPI.ERR_TYPE, "MPI_Type_free: " + type.getName() + " is predefined and cannot be freed");
        try {
            type.free();
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
        type = null;
    }

    public boolean isNull() {
        return type == null;
    }

    @Override
    public Datatype clone() {
        return new Datatype(type, baseType, baseSize);
    }

    public Datatype dup() throws MPIException {
        MPI.check();
        try {
            return new Datatype(this, braid().dup());
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    public static Datatype createContiguous(int count, Datatype oldType) throws MPIException {
        MPI.check();
        try {
            return new Datatype(oldType, braid.mpi.Datatype.contiguous(count, oldType.braid()));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    public static Datatype createVector(int count, int blockLength, int stride, Datatype oldType)
            throws MPIException {
        MPI.check();
        try {
            return new Datatype(oldType, braid.mpi.Datatype.vector(count, blockLength, stride, oldType.braid()));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    /** As {@link #createVector} with the stride in bytes. */
    public static Datatype createHVector(int count, int blockLength, int stride, Datatype oldType)
            throws MPIException {
        MPI.check();
        try {
            return new Datatype(oldType, braid.mpi.Datatype.hvector(count, blockLength, stride, oldType.braid()));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    public static Datatype createIndexed(int[] blockLengths, int[] displacements, Datatype oldType)
            throws MPIException {
        MPI.check();
        try {
            return new Datatype(oldType, braid.mpi.Datatype.indexed(blockLengths, displacements, oldType.braid()));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    /** As {@link #createIndexed} with the displacements in bytes. */
    public static Datatype createHIndexed(int[] blockLengths, int[] displacements, Datatype oldType)
            throws MPIException {
        MPI.check();
        try {
            return new Datatype(
                    oldType, braid.mpi.Datatype.hindexed(blockLengths, toLongs(displacements), oldType.braid()));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    /** {@code MPI_Type_create_struct}: displacements in bytes; the new type's base type is {@link MPI#BYTE}. */
    public static Datatype createStruct(int[] blockLengths, int[] displacements, Datatype[] types)
            throws MPIException {
        MPI.check();
        braid.mpi.Datatype[] bt = new braid.mpi.Datatype[types.length];
        for (int i = 0; i < types.length; i++) bt[i] = types[i].braid();
        try {
            return new Datatype(MPI.BYTE, braid.mpi.Datatype.struct(blockLengths, toLongs(displacements), bt));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    /** {@code MPI_Type_create_resized}: [lb] and [extent] in bytes. */
    public static Datatype createResized(Datatype oldType, int lb, int extent) throws MPIException {
        MPI.check();
        try {
            return new Datatype(oldType, braid.mpi.Datatype.resized(oldType.braid(), lb, extent));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    public void setName(String name) throws MPIException {
        MPI.check();
        braid().setName(name);
    }

    public String getName() throws MPIException {
        MPI.check();
        return braid().getName();
    }

    public static int createKeyval() throws MPIException {
        MPI.check();
        return keyvals.getAndIncrement();
    }

    public static void freeKeyval(int keyval) throws MPIException {
        MPI.check();
        if (keyval <= 0 || keyval >= keyvals.get())
            throw Err.of(MPI.ERR_KEYVAL, "MPI_Type_free_keyval: keyval " + keyval + " was not created");
    }

    public void setAttr(int keyval, Object value) throws MPIException {
        MPI.check();
        freeKeyval(keyval); // checks it
        synchronized (this) {
            if (attrs == null) attrs = new HashMap<>();
            attrs.put(keyval, value);
        }
    }

    public Object getAttr(int keyval) throws MPIException {
        MPI.check();
        synchronized (this) {
            return attrs == null ? null : attrs.get(keyval);
        }
    }

    public void deleteAttr(int keyval) throws MPIException {
        MPI.check();
        synchronized (this) {
            if (attrs != null) attrs.remove(keyval);
        }
    }

    private static long[] toLongs(int[] a) {
        long[] l = new long[a.length];
        for (int i = 0; i < a.length; i++) l[i] = a[i];
        return l;
    }

    @Override
    public String toString() {
        return type == null ? "MPI_DATATYPE_NULL" : type.getName();
    }
}
