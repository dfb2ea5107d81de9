package mpi;

import braid.mpi.Mpi;
import braid.mpi.ThreadLevel;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.CharBuffer;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.ShortBuffer;

/**
 * The environment of an MPI program written for Open MPI's Java bindings, over Braid: {@link #Init} first (every other
 * call before it throws {@link MPIException}; {@link #getVersion}, {@link #getLibVersion}, {@link #isInitialized} and
 * {@link #isFinalized} work without it), {@link #COMM_WORLD} and the constants, {@link #Finalize} last.
 *
 * <p>Differences from Open MPI's bindings: the values of the constants are Braid's (compare them by name, as portable
 * programs do); the predefined attribute keys and error classes are Open MPI's names with braid.mpi's semantics.
 */
public final class MPI {
    private MPI() {}

    private static volatile Mpi mpi;
    private static volatile boolean initialized, finalized;
    private static byte[] attached;

    public static final Intracomm COMM_WORLD = new Intracomm(null), COMM_SELF = new Intracomm(null);

    public static final int THREAD_SINGLE = 0, THREAD_FUNNELED = 1, THREAD_SERIALIZED = 2, THREAD_MULTIPLE = 3;
    public static final int GRAPH = 2, DIST_GRAPH = 3, CART = 1;
    public static final int ANY_SOURCE = Mpi.ANY_SOURCE, ANY_TAG = Mpi.ANY_TAG;

    public static final Op MAX = new Op(braid.mpi.Op.MAX), MIN = new Op(braid.mpi.Op.MIN),
            SUM = new Op(braid.mpi.Op.SUM), PROD = new Op(braid.mpi.Op.PROD), LAND = new Op(braid.mpi.Op.LAND),
            BAND = new Op(braid.mpi.Op.BAND), LOR = new Op(braid.mpi.Op.LOR), BOR = new Op(braid.mpi.Op.BOR),
            LXOR = new Op(braid.mpi.Op.LXOR), BXOR = new Op(braid.mpi.Op.BXOR),
            REPLACE = new Op(braid.mpi.Op.REPLACE), NO_OP = new Op(braid.mpi.Op.NO_OP);
    /** With {@link #INT2}, {@link #SHORT_INT}, {@link #LONG_INT}, {@link #FLOAT_INT} and {@link #DOUBLE_INT}. */
    public static final Op MINLOC = new Op(braid.mpi.Op.MINLOC);
    public static final Op MAXLOC = new Op(braid.mpi.Op.MAXLOC);

    public static final Datatype DATATYPE_NULL = new Datatype(null, Datatype.NULL, 0);
    public static final Datatype BYTE = new Datatype(braid.mpi.Datatype.BYTE, Datatype.BYTE, 1),
            CHAR = new Datatype(braid.mpi.Datatype.CHAR, Datatype.CHAR, 2),
            SHORT = new Datatype(braid.mpi.Datatype.SHORT, Datatype.SHORT, 2),
            BOOLEAN = new Datatype(braid.mpi.Datatype.BOOLEAN, Datatype.BOOLEAN, 1),
            INT = new Datatype(braid.mpi.Datatype.INT, Datatype.INT, 4),
            LONG = new Datatype(braid.mpi.Datatype.LONG, Datatype.LONG, 8),
            FLOAT = new Datatype(braid.mpi.Datatype.FLOAT, Datatype.FLOAT, 4),
            DOUBLE = new Datatype(braid.mpi.Datatype.DOUBLE, Datatype.DOUBLE, 8),
            PACKED = new Datatype(braid.mpi.Datatype.PACKED, Datatype.PACKED, 1),
            FLOAT_COMPLEX = new Datatype(braid.mpi.Datatype.C_FLOAT_COMPLEX, Datatype.FLOAT, 4),
            DOUBLE_COMPLEX = new Datatype(braid.mpi.Datatype.C_DOUBLE_COMPLEX, Datatype.DOUBLE, 8);
    /** Use with {@link #int2}. */
    public static final Datatype INT2 = new Datatype(braid.mpi.Datatype.INT2, Datatype.BYTE, 1);
    /** Use with {@link #shortInt}. */
    public static final Datatype SHORT_INT = new Datatype(braid.mpi.Datatype.SHORT_INT, Datatype.BYTE, 1);
    /** Use with {@link #longInt}. */
    public static final Datatype LONG_INT = new Datatype(braid.mpi.Datatype.LONG_INT, Datatype.BYTE, 1);
    /** Use with {@link #floatInt}. */
    public static final Datatype FLOAT_INT = new Datatype(braid.mpi.Datatype.FLOAT_INT, Datatype.BYTE, 1);
    /** Use with {@link #doubleInt}. */
    public static final Datatype DOUBLE_INT = new Datatype(braid.mpi.Datatype.DOUBLE_INT, Datatype.BYTE, 1);

    /** The records of {@link #INT2} in a buffer. */
    public static final Int2 int2 = new Int2();
    public static final ShortInt shortInt = new ShortInt();
    public static final LongInt longInt = new LongInt();
    public static final FloatInt floatInt = new FloatInt();
    public static final DoubleInt doubleInt = new DoubleInt();

    public static final Request REQUEST_NULL = new Request(null);
    public static final Group GROUP_EMPTY = new Group(braid.mpi.Group.EMPTY);
    public static final Info INFO_ENV = new Info(braid.mpi.Info.env(null)), INFO_NULL = new Info((braid.mpi.Info) null);

    public static final int PROC_NULL = Mpi.PROC_NULL;
    public static final int UNDEFINED = Mpi.UNDEFINED;
    public static final int IDENT = braid.mpi.Group.IDENT, CONGRUENT = braid.mpi.Group.CONGRUENT,
            SIMILAR = braid.mpi.Group.SIMILAR, UNEQUAL = braid.mpi.Group.UNEQUAL;
    /** Predefined attribute keys of {@link Comm#getAttr}. */
    public static final int TAG_UB = braid.mpi.Comm.TAG_UB, HOST = braid.mpi.Comm.HOST, IO = braid.mpi.Comm.IO,
            WTIME_IS_GLOBAL = braid.mpi.Comm.WTIME_IS_GLOBAL;
    public static final int APPNUM = braid.mpi.Comm.APPNUM, LASTUSEDCODE = braid.mpi.Comm.LASTUSEDCODE,
            UNIVERSE_SIZE = braid.mpi.Comm.UNIVERSE_SIZE, WIN_BASE = 7, WIN_SIZE = 8, WIN_DISP_UNIT = 9;
    public static final int VERSION = Mpi.VERSION, SUBVERSION = Mpi.SUBVERSION;
    public static final int ROOT = Mpi.ROOT, KEYVAL_INVALID = -1, BSEND_OVERHEAD = Mpi.BSEND_OVERHEAD;
    public static final int MAX_OBJECT_NAME = 64, MAX_PORT_NAME = 1024, MAX_DATAREP_STRING = 128;
    public static final int MAX_INFO_KEY = braid.mpi.Info.MAX_INFO_KEY, MAX_INFO_VAL = braid.mpi.Info.MAX_INFO_VAL;
    public static final int ORDER_C = braid.mpi.Datatype.ORDER_C, ORDER_FORTRAN = braid.mpi.Datatype.ORDER_FORTRAN;
    public static final int DISTRIBUTE_BLOCK = braid.mpi.Datatype.DISTRIBUTE_BLOCK,
            DISTRIBUTE_CYCLIC = braid.mpi.Datatype.DISTRIBUTE_CYCLIC,
            DISTRIBUTE_NONE = braid.mpi.Datatype.DISTRIBUTE_NONE,
            DISTRIBUTE_DFLT_DARG = braid.mpi.Datatype.DISTRIBUTE_DFLT_DARG;
    public static final int MODE_CREATE = 1, MODE_RDONLY = 2, MODE_WRONLY = 4, MODE_RDWR = 8,
            MODE_DELETE_ON_CLOSE = 16, MODE_UNIQUE_OPEN = 32, MODE_EXCL = 64, MODE_APPEND = 128,
            MODE_SEQUENTIAL = 256;
    public static final int DISPLACEMENT_CURRENT = -54278278;
    public static final int SEEK_SET = 600, SEEK_CUR = 602, SEEK_END = 604;
    public static final int MODE_NOCHECK = 1, MODE_NOPRECEDE = 2, MODE_NOPUT = 4, MODE_NOSTORE = 8,
            MODE_NOSUCCEED = 16;
    public static final int LOCK_EXCLUSIVE = 1, LOCK_SHARED = 2;

    public static final Errhandler ERRORS_ARE_FATAL = new Errhandler(braid.mpi.ErrorHandler.ERRORS_ARE_FATAL),
            ERRORS_ABORT = new Errhandler(braid.mpi.ErrorHandler.ERRORS_ARE_FATAL),
            ERRORS_RETURN = new Errhandler(braid.mpi.ErrorHandler.ERRORS_RETURN);

    // Error classes, numbered as Open MPI numbers them.
    public static final int SUCCESS = 0;
    public static final int ERR_BUFFER = 1;
    public static final int ERR_COUNT = 2;
    public static final int ERR_TYPE = 3;
    public static final int ERR_TAG = 4;
    public static final int ERR_COMM = 5;
    public static final int ERR_RANK = 6;
    public static final int ERR_REQUEST = 7;
    public static final int ERR_ROOT = 8;
    public static final int ERR_GROUP = 9;
    public static final int ERR_OP = 10;
    public static final int ERR_TOPOLOGY = 11;
    public static final int ERR_DIMS = 12;
    public static final int ERR_ARG = 13;
    public static final int ERR_UNKNOWN = 14;
    public static final int ERR_TRUNCATE = 15;
    public static final int ERR_OTHER = 16;
    public static final int ERR_INTERN = 17;
    public static final int ERR_IN_STATUS = 18;
    public static final int ERR_PENDING = 19;
    public static final int ERR_ACCESS = 20;
    public static final int ERR_AMODE = 21;
    public static final int ERR_ASSERT = 22;
    public static final int ERR_BAD_FILE = 23;
    public static final int ERR_BASE = 24;
    public static final int ERR_CONVERSION = 25;
    public static final int ERR_DISP = 26;
    public static final int ERR_DUP_DATAREP = 27;
    public static final int ERR_FILE_EXISTS = 28;
    public static final int ERR_FILE_IN_USE = 29;
    public static final int ERR_FILE = 30;
    public static final int ERR_INFO_KEY = 31;
    public static final int ERR_INFO_NOKEY = 32;
    public static final int ERR_INFO_VALUE = 33;
    public static final int ERR_INFO = 34;
    public static final int ERR_IO = 35;
    public static final int ERR_KEYVAL = 36;
    public static final int ERR_LOCKTYPE = 37;
    public static final int ERR_NAME = 38;
    public static final int ERR_NO_MEM = 39;
    public static final int ERR_NOT_SAME = 40;
    public static final int ERR_NO_SPACE = 41;
    public static final int ERR_NO_SUCH_FILE = 42;
    public static final int ERR_PORT = 43;
    public static final int ERR_PROC_ABORTED = 74;
    public static final int ERR_QUOTA = 44;
    public static final int ERR_READ_ONLY = 45;
    public static final int ERR_RMA_CONFLICT = 46;
    public static final int ERR_RMA_SYNC = 47;
    public static final int ERR_SERVICE = 48;
    public static final int ERR_SIZE = 49;
    public static final int ERR_SPAWN = 50;
    public static final int ERR_UNSUPPORTED_DATAREP = 51;
    public static final int ERR_UNSUPPORTED_OPERATION = 52;
    public static final int ERR_WIN = 53;
    public static final int ERR_LASTCODE = 92;
    public static final int ERR_SYSRESOURCE = -2;

    // ## Environment ##

    /** {@code MPI_Init}: joins the job the launcher started ({@code mpiexec}, {@code mpirun}, {@code srun}, {@code
     * braid run}, or a singleton); returns [args]. */
    public static String[] Init(String[] args) throws MPIException {
        start(ThreadLevel.SINGLE);
        return args;
    }

    /** {@code MPI_Init_thread}: as {@link #Init} asking for [required]; returns the level provided. */
    public static int InitThread(String[] args, int required) throws MPIException {
        if (required < THREAD_SINGLE || required > THREAD_MULTIPLE)
            throw Err.of(ERR_ARG, "MPI_Init_thread: thread level " + required + " is not one of MPI.THREAD_*");
        return start(ThreadLevel.values()[required]).getThreadLevel().ordinal();
    }

    private static synchronized Mpi start(ThreadLevel level) throws MPIException {
        if (initialized) throw new MPIException(ERR_OTHER, ERR_OTHER, "MPI is already initialized.");
        Mpi m;
        try {
            m = Mpi.initThread(level);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
        mpi = m;
        Buf.threadLevel(m.getThreadLevel() == ThreadLevel.MULTIPLE);
        COMM_WORLD.c = m.getWorld();
        COMM_SELF.c = m.getSelf();
        initialized = true;
        return m;
    }

    public static int queryThread() throws MPIException {
        check();
        return mpi.getThreadLevel().ordinal();
    }

    public static boolean isThreadMain() throws MPIException {
        check();
        return mpi.isThreadMain();
    }

    /** {@code MPI_Finalize}: finishes buffered sends, leaves the job; no MPI call may follow. */
    public static void Finalize() throws MPIException {
        check();
        try {
            mpi.finalizeMpi();
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
        finalized = true;
    }

    public static double wtime() throws MPIException {
        check();
        return Mpi.wtime();
    }

    public static double wtick() throws MPIException {
        check();
        return Mpi.wtick();
    }

    /** The version of the MPI standard implemented; works before {@link #Init}. */
    public static Version getVersion() {
        return new Version(VERSION, SUBVERSION);
    }

    /** {@code MPI_Get_library_version}; works before {@link #Init}. */
    public static String getLibVersion() {
        return Mpi.libraryVersion();
    }

    public static String getProcessorName() throws MPIException {
        check();
        return mpi.processorName();
    }

    /** Whether {@link #Init} was called; works before it. */
    public static boolean isInitialized() throws MPIException {
        return initialized;
    }

    /** Whether {@link #Finalize} was called; works before {@link #Init}. */
    public static boolean isFinalized() throws MPIException {
        return finalized;
    }

    /** {@code MPI_Buffer_attach}: the space {@link Comm#bSend} copies messages into. */
    public static void attachBuffer(byte[] buffer) throws MPIException {
        check();
        try {
            mpi.bufferAttach(ByteBuffer.wrap(buffer));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
        attached = buffer;
    }

    /** {@code MPI_Buffer_detach}: waits for the buffered sends using it, then returns it. */
    public static byte[] detachBuffer() throws MPIException {
        check();
        try {
            mpi.bufferDetach();
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
        byte[] b = attached;
        attached = null;
        return b;
    }

    /** {@code MPI_Pcontrol}: no profiling here to control. */
    public static void pControl(int level, Object obj) {}

    /** Throws unless {@link #Init} was called and {@link #Finalize} was not. */
    protected static void check() throws MPIException {
        if (!initialized) throw new MPIException(ERR_OTHER, ERR_OTHER, "MPI is not initialized: call MPI.Init first");
        if (finalized) throw new MPIException(ERR_OTHER, ERR_OTHER, "MPI is finalized.");
    }

    static Mpi mpi() throws MPIException {
        check();
        return mpi;
    }

    // ## Buffers ##

    private static final ByteOrder NATIVE = ByteOrder.nativeOrder();

    /** A direct buffer in native order, as nonblocking calls need. */
    public static ByteBuffer newByteBuffer(int capacity) {
        return ByteBuffer.allocateDirect(capacity).order(NATIVE);
    }

    public static CharBuffer newCharBuffer(int capacity) {
        return newByteBuffer(capacity * 2).asCharBuffer();
    }

    public static ShortBuffer newShortBuffer(int capacity) {
        return newByteBuffer(capacity * 2).asShortBuffer();
    }

    public static IntBuffer newIntBuffer(int capacity) {
        return newByteBuffer(capacity * 4).asIntBuffer();
    }

    public static LongBuffer newLongBuffer(int capacity) {
        return newByteBuffer(capacity * 8).asLongBuffer();
    }

    public static FloatBuffer newFloatBuffer(int capacity) {
        return newByteBuffer(capacity * 4).asFloatBuffer();
    }

    public static DoubleBuffer newDoubleBuffer(int capacity) {
        return newByteBuffer(capacity * 8).asDoubleBuffer();
    }

    /** The elements of [buf] from [offset] on, as a buffer of its own (what calls take to start mid-buffer). */
    public static ByteBuffer slice(ByteBuffer buf, int offset) {
        return buf.duplicate().clear().position(offset).slice().order(buf.order());
    }

    public static CharBuffer slice(CharBuffer buf, int offset) {
        return buf.duplicate().clear().position(offset).slice();
    }

    public static ShortBuffer slice(ShortBuffer buf, int offset) {
        return buf.duplicate().clear().position(offset).slice();
    }

    public static IntBuffer slice(IntBuffer buf, int offset) {
        return buf.duplicate().clear().position(offset).slice();
    }

    public static LongBuffer slice(LongBuffer buf, int offset) {
        return buf.duplicate().clear().position(offset).slice();
    }

    public static FloatBuffer slice(FloatBuffer buf, int offset) {
        return buf.duplicate().clear().position(offset).slice();
    }

    public static DoubleBuffer slice(DoubleBuffer buf, int offset) {
        return buf.duplicate().clear().position(offset).slice();
    }

    public static ByteBuffer slice(byte[] buf, int offset) {
        return ByteBuffer.wrap(buf, offset, buf.length - offset).slice().order(NATIVE);
    }

    public static CharBuffer slice(char[] buf, int offset) {
        return CharBuffer.wrap(buf, offset, buf.length - offset).slice();
    }

    public static ShortBuffer slice(short[] buf, int offset) {
        return ShortBuffer.wrap(buf, offset, buf.length - offset).slice();
    }

    public static IntBuffer slice(int[] buf, int offset) {
        return IntBuffer.wrap(buf, offset, buf.length - offset).slice();
    }

    public static LongBuffer slice(long[] buf, int offset) {
        return LongBuffer.wrap(buf, offset, buf.length - offset).slice();
    }

    public static FloatBuffer slice(float[] buf, int offset) {
        return FloatBuffer.wrap(buf, offset, buf.length - offset).slice();
    }

    public static DoubleBuffer slice(double[] buf, int offset) {
        return DoubleBuffer.wrap(buf, offset, buf.length - offset).slice();
    }
}
