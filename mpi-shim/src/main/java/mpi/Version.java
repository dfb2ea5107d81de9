package mpi;

/** The version of the MPI standard implemented ({@link MPI#getVersion}). */
public final class Version {
    private final int version, subVersion;

    protected Version(int version, int subVersion) {
        this.version = version;
        this.subVersion = subVersion;
    }

    public int getVersion() {
        return version;
    }

    public int getSubVersion() {
        return subVersion;
    }
}
