package mpi;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;

/** A view of one complex number (real, imaginary) of {@link MPI#FLOAT_COMPLEX} elements in a buffer or array. */
public final class FloatComplex {
    private final int offset;
    private final FloatBuffer buffer;

    private FloatComplex(FloatBuffer buffer, int index) {
        this.buffer = buffer;
        this.offset = index * 2;
    }

    public static FloatComplex get(FloatBuffer buffer) {
        return new FloatComplex(buffer, 0);
    }

    public static FloatComplex get(FloatBuffer buffer, int index) {
        return new FloatComplex(buffer, index);
    }

    public static FloatComplex get(float[] array) {
        return new FloatComplex(FloatBuffer.wrap(array), 0);
    }

    public static FloatComplex get(float[] array, int index) {
        return new FloatComplex(FloatBuffer.wrap(array), index);
    }

    public static FloatComplex get(ByteBuffer buffer) {
        return new FloatComplex(buffer.asFloatBuffer(), 0);
    }

    public static FloatComplex get(ByteBuffer buffer, int index) {
        return new FloatComplex(buffer.asFloatBuffer(), index);
    }

    public float getReal() {
        return buffer.get(offset);
    }

    public float getImag() {
        return buffer.get(offset + 1);
    }

    public void putReal(float real) {
        buffer.put(offset, real);
    }

    public void putImag(float imag) {
        buffer.put(offset + 1, imag);
    }

    /** The buffer from this number on. */
    public FloatBuffer getBuffer() {
        return offset == 0 ? buffer : MPI.slice(buffer, offset);
    }
}
