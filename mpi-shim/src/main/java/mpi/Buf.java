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

    /** The two staging buffers of a thread: one a call reads from (slot 0), one it writes into (slot 1). */
    private static final ThreadLocal<ByteBuffer[]> staging = ThreadLocal.withInitial(() -> new ByteBuffer[2]);

    static ByteBuffer scratch(int slot, int bytes) {
        ByteBuffer[] slots = staging.get();
        ByteBuffer b = slots[slot];
        if (b == null || b.capacity() < bytes) {
            b = ByteBuffer.allocateDirect(Math.max(bytes, 64)).order(NATIVE);
            slots[slot] = b;
        }
        return b;
    }

    /**
     * A caller's buffer as the bytes a blocking call uses: [Staged#bytes] to pass, [Staged#done] after the call
     * (copies back what was received when [out]). [spanBytes] is how far the call reaches from the first element,
     * -1 for the whole buffer.
     */
    static Staged stage(Object buf, long spanBytes, boolean out, int slot) {
        if (buf == null) return Staged.NONE;
        if (buf instanceof Buffer && ((Buffer) buf).isDirect()) return new Staged(buf, direct((Buffer) buf), false);
        int elem = elementSize(buf);
        int available = arrayLength(buf);
        int n = spanBytes < 0 ? available : (int) Math.min(available, (spanBytes + elem - 1) / elem);
        ByteBuffer b = scratch(slot, n * elem);
        copyIn(buf, b, n);
        Staged s = new Staged(buf, b, out);
        s.elements = n;
        return s;
    }

    static final class Staged {
        static final Staged NONE = new Staged(null, null, false);
        final Object user;
        final ByteBuffer bytes;
        final boolean out;
        int elements;

        Staged(Object user, ByteBuffer bytes, boolean out) {
            this.user = user;
            this.bytes = bytes;
            this.out = out;
        }

        /** After the call: what was received goes back to the caller's array. */
        void done() {
            if (out && user != null) copyOut(bytes, user, elements);
            Reference.reachabilityFence(user);
        }
    }

    private static int arrayLength(Object buf) {
        if (buf instanceof Buffer) return ((Buffer) buf).capacity();
        if (buf instanceof byte[]) return ((byte[]) buf).length;
        if (buf instanceof boolean[]) return ((boolean[]) buf).length;
        if (buf instanceof char[]) return ((char[]) buf).length;
        if (buf instanceof short[]) return ((short[]) buf).length;
        if (buf instanceof int[]) return ((int[]) buf).length;
        if (buf instanceof long[]) return ((long[]) buf).length;
        if (buf instanceof float[]) return ((float[]) buf).length;
        if (buf instanceof double[]) return ((double[]) buf).length;
        return elementSize(buf); // throws
    }

    /** Copies the first [n] elements of array or heap buffer [src] into [dst] from byte 0. */
    static void copyIn(Object src, ByteBuffer dst, int n) {
        ByteBuffer d = dst.duplicate().order(NATIVE);
        d.clear();
        if (src instanceof Buffer) {
            Buffer b = ((Buffer) src).duplicate();
            b.clear();
            b.limit(n);
            if (b instanceof ByteBuffer) d.put((ByteBuffer) b);
            else if (b instanceof CharBuffer) d.asCharBuffer().put((CharBuffer) b);
            else if (b instanceof ShortBuffer) d.asShortBuffer().put((ShortBuffer) b);
            else if (b instanceof IntBuffer) d.asIntBuffer().put((IntBuffer) b);
            else if (b instanceof LongBuffer) d.asLongBuffer().put((LongBuffer) b);
            else if (b instanceof FloatBuffer) d.asFloatBuffer().put((FloatBuffer) b);
            else if (b instanceof DoubleBuffer) d.asDoubleBuffer().put((DoubleBuffer) b);
        } else if (src instanceof byte[]) d.put((byte[]) src, 0, n);
        else if (src instanceof boolean[]) {
            boolean[] a = (boolean[]) src;
            for (int i = 0; i < n; i++) d.put(i, a[i] ? (byte) 1 : (byte) 0);
        } else if (src instanceof char[]) d.asCharBuffer().put((char[]) src, 0, n);
        else if (src instanceof short[]) d.asShortBuffer().put((short[]) src, 0, n);
        else if (src instanceof int[]) d.asIntBuffer().put((int[]) src, 0, n);
        else if (src instanceof long[]) d.asLongBuffer().put((long[]) src, 0, n);
        else if (src instanceof float[]) d.asFloatBuffer().put((float[]) src, 0, n);
        else if (src instanceof double[]) d.asDoubleBuffer().put((double[]) src, 0, n);
    }

    /** Copies the first [n] elements from [src]'s byte 0 into array or heap buffer [dst]. */
    static void copyOut(ByteBuffer src, Object dst, int n) {
        ByteBuffer s = src.duplicate().order(NATIVE);
        s.clear();
        if (dst instanceof Buffer) {
            Buffer b = ((Buffer) dst).duplicate();
            b.clear();
            if (b instanceof ByteBuffer) ((ByteBuffer) b).put((ByteBuffer) s.limit(n));
            else if (b instanceof CharBuffer) ((CharBuffer) b).put((CharBuffer) s.asCharBuffer().limit(n));
            else if (b instanceof ShortBuffer) ((ShortBuffer) b).put((ShortBuffer) s.asShortBuffer().limit(n));
            else if (b instanceof IntBuffer) ((IntBuffer) b).put((IntBuffer) s.asIntBuffer().limit(n));
            else if (b instanceof LongBuffer) ((LongBuffer) b).put((LongBuffer) s.asLongBuffer().limit(n));
            else if (b instanceof FloatBuffer) ((FloatBuffer) b).put((FloatBuffer) s.asFloatBuffer().limit(n));
            else if (b instanceof DoubleBuffer) ((DoubleBuffer) b).put((DoubleBuffer) s.asDoubleBuffer().limit(n));
        } else if (dst instanceof byte[]) s.get((byte[]) dst, 0, n);
        else if (dst instanceof boolean[]) {
            boolean[] a = (boolean[]) dst;
            for (int i = 0; i < n; i++) a[i] = s.get(i) != 0;
        } else if (dst instanceof char[]) s.asCharBuffer().get((char[]) dst, 0, n);
        else if (dst instanceof short[]) s.asShortBuffer().get((short[]) dst, 0, n);
        else if (dst instanceof int[]) s.asIntBuffer().get((int[]) dst, 0, n);
        else if (dst instanceof long[]) s.asLongBuffer().get((long[]) dst, 0, n);
        else if (dst instanceof float[]) s.asFloatBuffer().get((float[]) dst, 0, n);
        else if (dst instanceof double[]) s.asDoubleBuffer().get((double[]) dst, 0, n);
    }
}
