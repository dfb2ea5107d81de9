package mpi;

/** An element count as a long ({@code MPI_Count}), for {@link Status#getElementsX}. */
public final class Count implements Comparable {
    private long count;

    public Count(long count) {
        this.count = count;
    }

    public long getCount() {
        return count;
    }

    public void setCount(long count) {
        this.count = count;
    }

    @Override
    public boolean equals(Object obj) {
        return obj instanceof Count && ((Count) obj).count == count;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(count);
    }

    @Override
    public int compareTo(Object obj) {
        return Long.compare(count, ((Count) obj).count);
    }
}
