package mpi;

/** A communicator with a graph or distributed-graph topology; ranks are those of its parent. */
public final class GraphComm extends Intracomm {
    GraphComm(braid.mpi.Intracomm c) {
        super(c);
    }

    private braid.mpi.Topology topo() throws MPIException {
        braid.mpi.Topology t = braid().getTopology();
        if (t == null || t instanceof braid.mpi.CartTopology)
            throw Err.of(MPI.ERR_TOPOLOGY, "the communicator has no graph topology");
        return t;
    }

    @Override
    int topology() {
        return c != null && c.getTopology() instanceof braid.mpi.DistGraphTopology ? MPI.DIST_GRAPH : MPI.GRAPH;
    }

    @Override
    public GraphComm clone() {
        return (GraphComm) super.clone();
    }

    @Override
    public GraphComm dup() throws MPIException {
        return (GraphComm) super.dup();
    }

    @Override
    public GraphComm iDup() throws MPIException {
        return (GraphComm) super.iDup();
    }

    @Override
    public GraphComm dupWithInfo(Info info) throws MPIException {
        return (GraphComm) super.dupWithInfo(info);
    }

    /** {@code MPI_Graph_get}: the whole graph (index and edges). */
    public GraphParms getDims() throws MPIException {
        braid.mpi.Topology t = topo();
        if (!(t instanceof braid.mpi.GraphTopology))
            throw Err.of(MPI.ERR_TOPOLOGY, "MPI_Graph_get: a distributed graph is not known whole");
        braid.mpi.GraphTopology g = (braid.mpi.GraphTopology) t;
        return new GraphParms(g.getIndex(), g.getEdges());
    }

    /** {@code MPI_Graph_neighbors}. */
    public int[] getNeighbors(int rank) throws MPIException {
        braid.mpi.Topology t = topo();
        try {
            return t instanceof braid.mpi.GraphTopology
                    ? ((braid.mpi.GraphTopology) t).neighbors(rank)
                    : t.destinations(rank);
        } catch (braid.mpi.MPIException e) {
            throw Err.of(e);
        }
    }

    /** {@code MPI_Dist_graph_neighbors}: this process's in- and out-edges, with weights. */
    public DistGraphNeighbors getDistGraphNeighbors() throws MPIException {
        braid.mpi.Topology t = topo();
        int rank = getRank();
        if (t instanceof braid.mpi.DistGraphTopology) {
            braid.mpi.DistGraphTopology d = (braid.mpi.DistGraphTopology) t;
            return new DistGraphNeighbors(d.getSources(), d.getSourceWeights(), d.getDestinations(),
                    d.getDestWeights(), d.getWeighted());
        }
        int[] in = t.sources(rank), out = t.destinations(rank);
        return new DistGraphNeighbors(in, null, out, null, false);
    }

    /** {@code MPI_Graph_map}: this process's rank in such a graph (its own), or UNDEFINED. */
    public int map(int[] index, int[] edges) throws MPIException {
        int r = getRank();
        return r < index.length ? r : MPI.UNDEFINED;
    }
}
