/* The loops of braid.mpi.bench.MpiPingPong, in C against MPICH: latency (half round trip,
 * 0 B - 1 MiB), bandwidth (window of 64 isends, then a 4-byte ack) and osu_mbw_mr's message rate
 * (pairs of ranks, the same windows, 1 B - 8 KiB). Prints the same lines: "lat SIZE USEC", "bw SIZE
 * MBPS" and "mr SIZE MSGS_PER_S". Build: mpicc.mpich -O2; run: mpiexec.mpich -n 2. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define WINDOW 64

int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int peer = 1 - rank;
    char *buf = malloc(1 << 20);
    int sizes[22]; sizes[0] = 0;
    for (int i = 0; i <= 20; i++) sizes[i + 1] = 1 << i;
    for (int s = 0; s < 22; s++) {
        int size = sizes[s];
        int iters = size <= 8192 ? 20000 : size <= 131072 ? 2000 : 500, warm = iters / 10;
        double t0 = 0;
        for (int i = 0; i < warm + iters; i++) {
            if (i == warm) { MPI_Barrier(MPI_COMM_WORLD); t0 = MPI_Wtime(); }
            if (rank == 0) {
                MPI_Send(buf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            }
        }
        double t = MPI_Wtime() - t0;
        if (rank == 0) printf("lat %d %.2f\n", size, t * 1e6 / (2.0 * iters));
    }
    char *bufs[WINDOW];
    for (int i = 0; i < WINDOW; i++) bufs[i] = malloc(1 << 20);
    MPI_Request reqs[WINDOW];
    MPI_Status stats[WINDOW];
    int ack = 0;
    int bw_sizes[] = {1, 64, 1024, 4096, 16384, 65536, 262144, 1 << 20};
    for (int s = 0; s < 8; s++) {
        int size = bw_sizes[s];
        int iters = size <= 16384 ? 2000 : 100, warm = size <= 16384 ? 1000 : 20; /* as MpiPingPong (the JVM's JIT needs the warm-up) */
        double t0 = 0;
        for (int i = 0; i < warm + iters; i++) {
            if (i == warm) { MPI_Barrier(MPI_COMM_WORLD); t0 = MPI_Wtime(); }
            if (rank == 0) {
                for (int k = 0; k < WINDOW; k++) MPI_Isend(bufs[k], size, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &reqs[k]);
                MPI_Waitall(WINDOW, reqs, stats);
                MPI_Recv(&ack, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                for (int k = 0; k < WINDOW; k++) MPI_Irecv(bufs[k], size, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &reqs[k]);
                MPI_Waitall(WINDOW, reqs, stats);
                MPI_Send(&ack, 1, MPI_INT, peer, 3, MPI_COMM_WORLD);
            }
        }
        double t = MPI_Wtime() - t0;
        if (rank == 0) printf("bw %d %.1f\n", size, (double)size * WINDOW * iters / t / 1e6);
    }
    /* osu_mbw_mr's shape: the first half of the ranks each send windows to their partner in the second
     * half (rank + n/2), 1 B to 8 KiB; messages/s of all pairs together, over the slowest rank's time. */
    int nranks;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int pairs = nranks / 2;
    for (int size = 1; size <= 8192; size *= 2) {
        int iters = 2000, warm = 1000;
        int sender = rank < pairs, partner = sender ? rank + pairs : rank - pairs;
        double t0 = 0;
        for (int i = 0; i < warm + iters; i++) {
            if (i == warm) { MPI_Barrier(MPI_COMM_WORLD); t0 = MPI_Wtime(); }
            if (rank >= 2 * pairs) continue;
            if (sender) {
                for (int k = 0; k < WINDOW; k++) MPI_Isend(bufs[k], size, MPI_BYTE, partner, 4, MPI_COMM_WORLD, &reqs[k]);
                MPI_Waitall(WINDOW, reqs, stats);
                MPI_Recv(&ack, 1, MPI_INT, partner, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                for (int k = 0; k < WINDOW; k++) MPI_Irecv(bufs[k], size, MPI_BYTE, partner, 4, MPI_COMM_WORLD, &reqs[k]);
                MPI_Waitall(WINDOW, reqs, stats);
                MPI_Send(&ack, 1, MPI_INT, partner, 5, MPI_COMM_WORLD);
            }
        }
        double t = MPI_Wtime() - t0, slowest = 0;
        MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) printf("mr %d %.0f\n", size, (double)pairs * WINDOW * iters / slowest);
    }
    MPI_Finalize();
    return 0;
}
