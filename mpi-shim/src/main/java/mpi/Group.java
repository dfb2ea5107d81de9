package mpi;

/** An ordered set of processes ({@code MPI_Group}) over {@code braid.mpi.Group}. */
public final class Group implements Freeable {
    braid.mpi.Group g;

    Group(braid.mpi.Group g) {
        this.g = g;
    }

    braid.mpi.Group braid() throws MPIException {
        if (g == null) throw Err.of(MPI.ERR_GROUP, "the group has been freed (MPI_GROUP_NULL)");
        return g;
    }

    public int getSize() throws MPIException {
        MPI.check();
        return braid().getSize();
    }

    public int getRank() throws MPIException {
        MPI.check();
        return braid().getRank();
    }

    @Override
    public void free() throws MPIException {
        MPI.check();
        g = null;
    }

    public boolean isNull() {
        return g == null;
    }

    public static int[] translateRanks(Group group1, int[] ranks1, Group group2) throws MPIException {
        MPI.check();
        try {
            return group1.braid().translateRanks(ranks1, group2.braid());
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    public static int compare(Group group1, Group group2) throws MPIException {
        MPI.check();
        return group1.braid().compare(group2.braid());
    }

    public static Group union(Group group1, Group group2) throws MPIException {
        MPI.check();
        return new Group(braid.mpi.Group.union(group1.braid(), group2.braid()));
    }

    public static Group intersection(Group group1, Group group2) throws MPIException {
        MPI.check();
        return new Group(braid.mpi.Group.intersection(group1.braid(), group2.braid()));
    }

    public static Group difference(Group group1, Group group2) throws MPIException {
        MPI.check();
        return new Group(braid.mpi.Group.difference(group1.braid(), group2.braid()));
    }

    public Group incl(int[] ranks) throws MPIException {
        MPI.check();
        try {
            return new Group(braid().incl(ranks));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    public Group excl(int[] ranks) throws MPIException {
        MPI.check();
        try {
            return new Group(braid().excl(ranks));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    public Group rangeIncl(int[][] ranges) throws MPIException {
        MPI.check();
        try {
            return new Group(braid().rangeIncl(ranges));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    public Group rangeExcl(int[][] ranges) throws MPIException {
        MPI.check();
        try {
            return new Group(braid().rangeExcl(ranges));
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }
}
