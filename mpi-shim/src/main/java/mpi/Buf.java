package mpi;

import com.sun.jna.Native;
import com.sun.jna.Pointer;
import java.lang.ref.Reference;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.CharBuffer;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.ShortBuffer;

/**
 * How the {@code mpi} package hands a caller's buffer to {@code braid.mpi}, whose calls take a {@link ByteBuffer}
 * whose data starts at byte 0:
 * <ul>
 *   <li>a direct buffer of any element type is used in place: a {@code ByteBuffer} as it is (a duplicate in native
 *       order if it has another), an {@code IntBuffer} (…) as a byte view over the same memory, from its address;
 *   <li>a Java array, or a heap buffer (a wrapped array, or {@link MPI#slice} of one), is copied into a direct staging
 *       buffer of the calling thread before the call and, for what the call writes, copied back after it.
 * </ul>
 * As in Open MPI's bindings, a buffer's position is not looked at: data starts at its first element (slice it to
 * start elsewhere).
 */
final class Buf {
    static final ByteOrder NATIVE = ByteOrder.nativeOrder();

    private Buf() {}

    // ## Direct buffers ##

    private static final int VIEWS = 8;
    private static final Buffer[] viewKeys = new Buffer[VIEWS];
    private static final ByteBuffer[] viewValues = new ByteBuffer[VIEWS];
    private static int nextView;

    /** The bytes of direct [buf] from its first element to its capacity, in native order. */
    static ByteBuffer direct(Buffer buf) {
        if (buf instanceof ByteBuffer) {
            ByteBuffer b = (ByteBuffer) buf;
            return b.order() == NATIVE ? b : b.duplicate().order(NATIVE);
        }
        synchronized (viewKeys) {
            for (int i = 0; i < VIEWS; i++) if (viewKeys[i] == buf) return viewValues[i];
        }
        Pointer p = Native.getDirectBufferPointer(buf);
        ByteBuffer view = p.getByteBuffer(0, (long) buf.capacity() * elementSize(buf)).order(NATIVE);
        synchronized (viewKeys) {
            viewKeys[nextView] = buf;
            viewValues[nextView] = view;
            nextView = (nextView + 1) % VIEWS;
        }
        return view;
    }

    /** Open MPI's rule for nonblocking calls: their buffers are direct. */
    static void assertDirect(Buffer buf) {
        if (buf != null && !buf.isDirect()) throw new IllegalArgumentException("The buffer must be direct.");
    }

    static ByteBuffer directOrNull(Buffer buf) {
        if (buf == null) return null;
        assertDirect(buf);
        return direct(buf);
    }

    static int elementSize(Object buf) {
        if (buf instanceof ByteBuffer || buf instanceof byte[] || buf instanceof boolean[]) return 1;
        if (buf instanceof CharBuffer || buf instanceof char[]) return 2;
        if (buf instanceof ShortBuffer || buf instanceof short[]) return 2;
        if (buf instanceof IntBuffer || buf instanceof int[]) return 4;
        if (buf instanceof LongBuffer || buf instanceof long[]) return 8;
        if (buf instanceof FloatBuffer || buf instanceof float[]) return 4;
        if (buf instanceof DoubleBuffer || buf instanceof double[]) return 8;
        throw new IllegalArgumentException(
                "buffer of type " + (buf == null ? "null" : buf.getClass().getName())
                        + " is not supported: pass a Java primitive array or a java.nio buffer");
    }

    // ## Staging of arrays and heap buffers ##

    /**
     * A thread's staging, made once: two direct buffers (slot 0 a call reads from, slot 1 one it writes into), their
     * typed views, and the two {@link Staged} records a call hands back, so a warm blocking call with an array
     * allocates nothing.
     */
    private static final class Stage {
        final ByteBuffer[] bytes = new ByteBuffer[2];
        final Buffer[][] views = new Buffer[2][8];
        final Staged[] staged = {new Staged(), new Staged()};
        final braid.mpi.Status status = new braid.mpi.Status();
        braid.mpi.Request[] requests = new braid.mpi.Request[0];
    }

    private static final ThreadLocal<Stage> staging = ThreadLocal.withInitial(Stage::new);

    /**
     * The one staging below {@code MPI_THREAD_MULTIPLE}, where no two threads are in the package at once (a field, not
     * a thread-local lookup on every call); null under {@code MPI_THREAD_MULTIPLE}, where each thread has its own.
     */
    private static volatile Stage shared = new Stage();

    /** {@link MPI#Init}: whether threads may call the package at once ([multiple]: each gets its own staging). */
    static void threadLevel(boolean multiple) {
        shared = multiple ? null : new Stage();
    }

    private static Stage stage() {
        Stage s = shared;
        return s != null ? s : staging.get();
    }

    /**
     * The calling thread's status for the braid.mpi calls that fill one: read it before the thread's next call (a
     * receive builds the caller's {@link Status} from it), so a warm receive needs no braid.mpi status object.
     */
    static braid.mpi.Status scratchStatus() {
        return stage().status;
    }

    /**
     * [buf] as braid.mpi takes it when it can be used in place, with no staging: a direct buffer (a {@code
     * ByteBuffer} in native order as it is); null for an array or a heap buffer, which {@link #stage} copies.
     */
    static ByteBuffer inPlace(Object buf) {
        if (buf instanceof ByteBuffer) {
            ByteBuffer b = (ByteBuffer) buf;
            if (b.isDirect()) return b.order() == NATIVE ? b : b.duplicate().order(NATIVE);
            return null;
        }
        return buf instanceof Buffer && ((Buffer) buf).isDirect() ? direct((Buffer) buf) : null;
    }

    /**
     * The calling thread's array of at least [n] braid.mpi requests, every entry null: for a wait on an array of
     * requests, which puts the first [n] in, makes the call and nulls them again.
     */
    static braid.mpi.Request[] scratchRequests(int n) {
        Stage st = stage();
        if (st.requests.length < n) st.requests = new braid.mpi.Request[Math.max(n, 2 * st.requests.length)];
        return st.requests;
    }

    private static ByteBuffer scratch(Stage st, int slot, int bytes) {
        ByteBuffer b = st.bytes[slot];
        if (b == null || b.capacity() < bytes) {
            b = ByteBuffer.allocateDirect(Math.max(bytes, 64)).order(NATIVE);
            st.bytes[slot] = b;
            java.util.Arrays.fill(st.views[slot], null);
        }
        return b;
    }

    /** The view of slot [slot]'s staging buffer for elements of kind [k] (see {@link #kind}), made once per buffer. */
    private static Buffer view(Stage st, int slot, int k) {
        Buffer v = st.views[slot][k];
        if (v == null) {
            ByteBuffer b = st.bytes[slot];
            switch (k) {
                case CHAR: v = b.asCharBuffer(); break;
                case SHORT: v = b.asShortBuffer(); break;
                case INT: v = b.asIntBuffer(); break;
                case LONG: v = b.asLongBuffer(); break;
                case FLOAT: v = b.asFloatBuffer(); break;
                case DOUBLE: v = b.asDoubleBuffer(); break;
                default: v = b;
            }
            st.views[slot][k] = v;
        }
        return v;
    }

    private static final int BYTE = 0, BOOLEAN = 1, CHAR = 2, SHORT = 3, INT = 4, LONG = 5, FLOAT = 6, DOUBLE = 7;

    /** The element kind of Java array [a], or -1 when it is not a primitive array. */
    private static int kind(Object a) {
        if (a instanceof byte[]) return BYTE;
        if (a instanceof int[]) return INT;
        if (a instanceof double[]) return DOUBLE;
        if (a instanceof long[]) return LONG;
        if (a instanceof float[]) return FLOAT;
        if (a instanceof char[]) return CHAR;
        if (a instanceof short[]) return SHORT;
        if (a instanceof boolean[]) return BOOLEAN;
        return -1;
    }

    /**
     * {@link #stage(Object, long, boolean, int)} for [count] elements of [t] (null: the whole buffer); a direct buffer
     * skips working out the reach.
     */
    static Staged stage(Object buf, Datatype t, int count, boolean out, int slot) {
        if (t == null || buf instanceof Buffer && ((Buffer) buf).isDirect()) return stage(buf, -1, out, slot);
        return stage(buf, t.spanBytes(count), out, slot);
    }

    /**
     * A caller's buffer as the bytes a blocking call uses: [Staged#bytes] to pass, [Staged#done] after the call
     * (copies back what was received when [out]). [spanBytes] is how far the call reaches from the first element, -1
     * for the whole buffer. The record returned is the thread's own for [slot]: one call uses a slot once.
     */
    static Staged stage(Object buf, long spanBytes, boolean out, int slot) {
        if (buf == null) return Staged.NONE;
        Stage st = stage();
        Staged s = st.staged[slot];
        if (buf instanceof Buffer && ((Buffer) buf).isDirect())
            return s.set(buf, direct((Buffer) buf), null, null, 0, 0, -1, false);
        Object array = buf;
        int offset = 0, available;
        if (buf instanceof Buffer) {
            Buffer hb = (Buffer) buf;
            available = hb.capacity();
            if (hb.hasArray()) {
                array = hb.array();
                offset = hb.arrayOffset();
            } else array = null; // a read-only heap buffer: copied through its own views
        } else available = arrayLength(buf);
        int k = array == null ? -1 : kind(array);
        int elem = elementSize(buf);
        int n = spanBytes < 0 ? available : (int) Math.min(available, (spanBytes + elem - 1) / elem);
        ByteBuffer b = scratch(st, slot, n * elem);
        Buffer v = k >= 0 ? view(st, slot, k) : null;
        if (v != null) copyIn(array, offset, v, k, n);
        else copyInBuffer((Buffer) buf, b, n);
        return s.set(buf, b, v, k >= 0 ? array : null, offset, n, k, out);
    }

    /** What one call staged (the thread's record for one slot; see {@link #stage}). */
    static final class Staged {
        static final Staged NONE = new Staged();
        Object user;
        ByteBuffer bytes;
        private Object array;
        private int offset, elements, kind;
        private boolean out;
        private Buffer outView;

        Staged set(Object user, ByteBuffer bytes, Buffer view, Object array, int offset, int elements, int kind,
                boolean out) {
            this.user = user;
            this.bytes = bytes;
            this.outView = view;
            this.array = array;
            this.offset = offset;
            this.elements = elements;
            this.kind = kind;
            this.out = out;
            return this;
        }

        /** After the call: what was received goes back to the caller's array; the record lets go of it. */
        void done() {
            if (this == NONE) return;
            Object u = user;
            if (out && u != null) {
                if (array != null) copyOut(outView, kind, array, offset, elements);
                else copyOutBuffer(bytes, u, elements);
            }
            user = null;
            array = null;
            outView = null;
            Reference.reachabilityFence(u);
        }
    }

    private static int arrayLength(Object buf) {
        if (buf instanceof byte[]) return ((byte[]) buf).length;
        if (buf instanceof int[]) return ((int[]) buf).length;
        if (buf instanceof double[]) return ((double[]) buf).length;
        if (buf instanceof long[]) return ((long[]) buf).length;
        if (buf instanceof float[]) return ((float[]) buf).length;
        if (buf instanceof char[]) return ((char[]) buf).length;
        if (buf instanceof short[]) return ((short[]) buf).length;
        if (buf instanceof boolean[]) return ((boolean[]) buf).length;
        return elementSize(buf); // throws
    }

    /** Copies [n] elements of array [src] (kind [k]) from [off] into [view] (the staging buffer's) from index 0. */
    private static void copyIn(Object src, int off, Buffer view, int k, int n) {
        switch (k) {
            case BYTE: ((ByteBuffer) view).put(0, (byte[]) src, off, n); break;
            case BOOLEAN: {
                boolean[] a = (boolean[]) src;
                ByteBuffer d = (ByteBuffer) view;
                for (int i = 0; i < n; i++) d.put(i, a[off + i] ? (byte) 1 : (byte) 0);
                break;
            }
            case CHAR: ((CharBuffer) view).put(0, (char[]) src, off, n); break;
            case SHORT: ((ShortBuffer) view).put(0, (short[]) src, off, n); break;
            case INT: ((IntBuffer) view).put(0, (int[]) src, off, n); break;
            case LONG: ((LongBuffer) view).put(0, (long[]) src, off, n); break;
            case FLOAT: ((FloatBuffer) view).put(0, (float[]) src, off, n); break;
            default: ((DoubleBuffer) view).put(0, (double[]) src, off, n);
        }
    }

    /** Copies [n] elements from index 0 of [view] (the staging buffer's) into array [dst] (kind [k]) from [off]. */
    private static void copyOut(Buffer view, int k, Object dst, int off, int n) {
        switch (k) {
            case BYTE: ((ByteBuffer) view).get(0, (byte[]) dst, off, n); break;
            case BOOLEAN: {
                boolean[] a = (boolean[]) dst;
                ByteBuffer s = (ByteBuffer) view;
                for (int i = 0; i < n; i++) a[off + i] = s.get(i) != 0;
                break;
            }
            case CHAR: ((CharBuffer) view).get(0, (char[]) dst, off, n); break;
            case SHORT: ((ShortBuffer) view).get(0, (short[]) dst, off, n); break;
            case INT: ((IntBuffer) view).get(0, (int[]) dst, off, n); break;
            case LONG: ((LongBuffer) view).get(0, (long[]) dst, off, n); break;
            case FLOAT: ((FloatBuffer) view).get(0, (float[]) dst, off, n); break;
            default: ((DoubleBuffer) view).get(0, (double[]) dst, off, n);
        }
    }

    /** Copies the first [n] elements of a heap buffer without an accessible array into [dst] from byte 0. */
    private static void copyInBuffer(Buffer src, ByteBuffer dst, int n) {
        ByteBuffer d = dst.duplicate().order(NATIVE);
        d.clear();
        Buffer b = src.duplicate();
        b.clear();
        b.limit(n);
        if (b instanceof ByteBuffer) d.put((ByteBuffer) b);
        else if (b instanceof CharBuffer) d.asCharBuffer().put((CharBuffer) b);
        else if (b instanceof ShortBuffer) d.asShortBuffer().put((ShortBuffer) b);
        else if (b instanceof IntBuffer) d.asIntBuffer().put((IntBuffer) b);
        else if (b instanceof LongBuffer) d.asLongBuffer().put((LongBuffer) b);
        else if (b instanceof FloatBuffer) d.asFloatBuffer().put((FloatBuffer) b);
        else if (b instanceof DoubleBuffer) d.asDoubleBuffer().put((DoubleBuffer) b);
    }

    /** Copies the first [n] elements from [src]'s byte 0 into a heap buffer without an accessible array. */
    private static void copyOutBuffer(ByteBuffer src, Object dst, int n) {
        ByteBuffer s = src.duplicate().order(NATIVE);
        s.clear();
        Buffer b = ((Buffer) dst).duplicate();
        b.clear();
        if (b instanceof ByteBuffer) ((ByteBuffer) b).put((ByteBuffer) s.limit(n));
        else if (b instanceof CharBuffer) ((CharBuffer) b).put((CharBuffer) s.asCharBuffer().limit(n));
        else if (b instanceof ShortBuffer) ((ShortBuffer) b).put((ShortBuffer) s.asShortBuffer().limit(n));
        else if (b instanceof IntBuffer) ((IntBuffer) b).put((IntBuffer) s.asIntBuffer().limit(n));
        else if (b instanceof LongBuffer) ((LongBuffer) b).put((LongBuffer) s.asLongBuffer().limit(n));
        else if (b instanceof FloatBuffer) ((FloatBuffer) b).put((FloatBuffer) s.asFloatBuffer().limit(n));
        else if (b instanceof DoubleBuffer) ((DoubleBuffer) b).put((DoubleBuffer) s.asDoubleBuffer().limit(n));
    }
}
