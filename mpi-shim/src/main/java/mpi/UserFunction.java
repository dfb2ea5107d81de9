package mpi;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The body of a user-defined reduction ({@link Op#Op(UserFunction, boolean)}). Override one of the two {@code call}s:
 * the {@code ByteBuffer} form receives the operands in place (native order, starting at position 0); the default
 * {@code ByteBuffer} form copies them into arrays of the datatype's base type and calls the {@code Object} form, as
 * Open MPI's bindings do. For {@link MPI#BOOLEAN} the {@code Object} form is called with {@code boolean[]}s.
 */
public abstract class UserFunction {
    /** {@code inOutVec[i] = inVec[i] op inOutVec[i]} over arrays of the base type ({@code count × extent} of them). */
    public void call(Object inVec, Object inOutVec, int count, Datatype datatype) throws MPIException {
        throw new UnsupportedOperationException("Not supported yet.");
    }

    /** {@code inOut = in op inOut} for [count] elements of [datatype], from position 0 of both buffers. */
    public void call(ByteBuffer in, ByteBuffer inOut, int count, Datatype datatype) throws MPIException {
        int n = count * datatype.getExtent();
        ByteBuffer a = in.duplicate().order(ByteOrder.nativeOrder());
        ByteBuffer b = inOut.duplicate().order(ByteOrder.nativeOrder());
        a.clear();
        b.clear();
        switch (datatype.baseType) {
            case Datatype.BYTE:
            case Datatype.PACKED: {
                byte[] x = new byte[n], y = new byte[n];
                a.get(x);
                b.get(y);
                call(x, y, count, datatype);
                b.clear();
                b.put(y);
                break;
            }
            case Datatype.CHAR: {
                char[] x = new char[n], y = new char[n];
                a.asCharBuffer().get(x);
                b.asCharBuffer().get(y);
                call(x, y, count, datatype);
                b.asCharBuffer().put(y);
                break;
            }
            case Datatype.SHORT: {
                short[] x = new short[n], y = new short[n];
                a.asShortBuffer().get(x);
                b.asShortBuffer().get(y);
                call(x, y, count, datatype);
                b.asShortBuffer().put(y);
                break;
            }
            case Datatype.INT: {
                int[] x = new int[n], y = new int[n];
                a.asIntBuffer().get(x);
                b.asIntBuffer().get(y);
                call(x, y, count, datatype);
                b.asIntBuffer().put(y);
                break;
            }
            case Datatype.LONG: {
                long[] x = new long[n], y = new long[n];
                a.asLongBuffer().get(x);
                b.asLongBuffer().get(y);
                call(x, y, count, datatype);
                b.asLongBuffer().put(y);
                break;
            }
            case Datatype.FLOAT: {
                float[] x = new float[n], y = new float[n];
                a.asFloatBuffer().get(x);
                b.asFloatBuffer().get(y);
                call(x, y, count, datatype);
                b.asFloatBuffer().put(y);
                break;
            }
            case Datatype.DOUBLE: {
                double[] x = new double[n], y = new double[n];
                a.asDoubleBuffer().get(x);
                b.asDoubleBuffer().get(y);
                call(x, y, count, datatype);
                b.asDoubleBuffer().put(y);
                break;
            }
            default:
                throw new IllegalArgumentException("Unsupported datatype.");
        }
    }
}
