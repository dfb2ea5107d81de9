package braid.samples.mpi;

import java.nio.ByteBuffer;
import mpi.MPI;
import mpi.MPIException;
import mpi.Struct;

/**
 * A derived datatype built with {@link Struct}: particles (position, velocity, id) gathered at rank 0 as records,
 * read back through the struct's typed view.
 */
public class StructExchange {
    /** One particle: three doubles of position, three of velocity, and an int id. */
    static final class Particle extends Struct {
        final int pos = addDouble(3), vel = addDouble(3), id = addInt();

        @Override
        protected Data newData() {
            return new Data();
        }

        final class Data extends Struct.Data {
            double pos(int i) {
                return getDouble(pos, i);
            }

            void pos(int i, double v) {
                putDouble(pos, i, v);
            }

            void vel(int i, double v) {
                putDouble(vel, i, v);
            }

            int id() {
                return getInt(id);
            }

            void id(int v) {
                putInt(id, v);
            }
        }
    }

    public static void main(String[] args) throws MPIException {
        MPI.Init(args);
        int rank = MPI.COMM_WORLD.getRank(), size = MPI.COMM_WORLD.getSize();
        Particle type = new Particle();
        int mine = 2;
        ByteBuffer out = MPI.newByteBuffer(mine * type.getExtent());
        for (int k = 0; k < mine; k++) {
            Particle.Data p = type.getData(out, k);
            p.id(rank * mine + k);
            for (int i = 0; i < 3; i++) {
                p.pos(i, rank + k + 0.1 * i);
                p.vel(i, -i);
            }
        }
        ByteBuffer all = rank == 0 ? MPI.newByteBuffer(size * mine * type.getExtent()) : null;
        MPI.COMM_WORLD.gather(out, mine, type.getType(), all, mine, type.getType(), 0);
        if (rank == 0) {
            int good = 0;
            for (int k = 0; k < size * mine; k++) {
                Particle.Data p = type.getData(all, k);
                if (p.id() == k && p.pos(2) == k / mine + k % mine + 0.2) good++;
            }
            System.out.println("gathered " + good + " of " + size * mine + " particles intact (record extent "
                    + type.getExtent() + " bytes)");
        }
        MPI.Finalize();
    }
}
