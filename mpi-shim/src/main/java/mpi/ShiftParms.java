package mpi;

/** What {@link CartComm#shift} reports: the rank to receive from and the rank to send to. */
public final class ShiftParms {
    private final int rankSource;
    private final int rankDest;

    protected ShiftParms(int rankSource, int rankDest) {
        this.rankSource = rankSource;
        this.rankDest = rankDest;
    }

    public int getRankSource() {
        return rankSource;
    }

    public int getRankDest() {
        return rankDest;
    }
}
