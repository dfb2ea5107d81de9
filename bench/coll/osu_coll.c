/* OSU-style collective latency loop for MPICH: prints "OP BYTES USEC" lines from rank 0.
 * Average over ITERS calls after WARMUP, a barrier before each size (as osu_allreduce does). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int iters_for(size_t bytes) { return bytes <= 4096 ? 10000 : bytes <= 65536 ? 1000 : 100; }

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t sizes[] = {8, 4096, 65536, 1048576};
    double *send = malloc(1048576), *recv = malloc(1048576);
    memset(send, 1, 1048576);
    for (int k = 0; k < 4; k++) {
        size_t bytes = sizes[k];
        int count = (int)(bytes / sizeof(double)), iters = iters_for(bytes), warm = iters / 10;
        for (int op = 0; op < 2; op++) {
            double t = 0;
            for (int i = 0; i < iters + warm; i++) {
                if (i == warm) { MPI_Barrier(MPI_COMM_WORLD); t = MPI_Wtime(); }
                if (op == 0) MPI_Allreduce(send, recv, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                else MPI_Bcast(send, count, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            }
            double us = (MPI_Wtime() - t) * 1e6 / iters, max;
            MPI_Reduce(&us, &max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (rank == 0) printf("%s %zu %.2f\n", op == 0 ? "allreduce" : "broadcast", bytes, max);
        }
    }
    int iters = 10000;
    double t = 0;
    for (int i = 0; i < iters + 1000; i++) { if (i == 1000) t = MPI_Wtime(); MPI_Barrier(MPI_COMM_WORLD); }
    double us = (MPI_Wtime() - t) * 1e6 / iters, max;
    MPI_Reduce(&us, &max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("barrier 0 %.2f\n", max);
    free(send); free(recv);
    MPI_Finalize();
    return 0;
}
