/* The loops of braid.mpi.bench.MpiRmaBench, in C against MPICH, in the shapes of the OSU one-sided
 * benchmarks (osu_put_latency, osu_get_latency, osu_put_bw, osu_acc_latency, osu_fop_latency) with
 * passive-target synchronisation: rank 0 locks rank 1's window once (MPI_Win_lock, shared) and times
 *   put/get latency: one MPI_Put/MPI_Get of SIZE bytes then MPI_Win_flush, per iteration (8 B - 1 MiB);
 *   put bandwidth:   a window of 64 MPI_Puts then one MPI_Win_flush (8 B - 1 MiB);
 *   acc latency:     one MPI_Accumulate (MPI_SUM on SIZE/4 MPI_INTs, as OSU) + flush;
 *   fop latency:     one MPI_Fetch_and_op (MPI_SUM, one long) + flush.
 * Rank 1 waits in MPI_Barrier meanwhile. Prints "put SIZE USEC", "get SIZE USEC", "putbw SIZE MBPS",
 * "acc SIZE USEC" and "fop 8 USEC" lines from rank 0.
 * Build: mpicc.mpich -O2; run: mpiexec.mpich -n 2. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX (1 << 20)
#define WINDOW 64

static int iters_for(int size) { return size <= 8192 ? 10000 : size <= 131072 ? 1000 : 200; }

int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *base;
    MPI_Win win;
    MPI_Win_allocate(MAX, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    char *buf = malloc(MAX);
    memset(buf, 1, MAX);
    const char *kinds[] = {"put", "get", "acc"};
    for (int k = 0; k < 3; k++) {
        for (int size = 8; size <= MAX; size *= 2) {
            int iters = iters_for(size), warm = iters / 10;
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
                double t0 = 0;
                for (int i = 0; i < warm + iters; i++) {
                    if (i == warm) t0 = MPI_Wtime();
                    if (k == 0) MPI_Put(buf, size, MPI_BYTE, 1, 0, size, MPI_BYTE, win);
                    else if (k == 1) MPI_Get(buf, size, MPI_BYTE, 1, 0, size, MPI_BYTE, win);
                    else MPI_Accumulate(buf, size / 4, MPI_INT, 1, 0, size / 4, MPI_INT, MPI_SUM, win);
                    MPI_Win_flush(1, win);
                }
                double t = MPI_Wtime() - t0;
                MPI_Win_unlock(1, win);
                printf("%s %d %.2f\n", kinds[k], size, t * 1e6 / iters);
                fflush(stdout);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    for (int size = 8; size <= MAX; size *= 2) {
        int iters = size <= 16384 ? 1000 : 50, warm = iters / 10;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            double t0 = 0;
            for (int i = 0; i < warm + iters; i++) {
                if (i == warm) t0 = MPI_Wtime();
                for (int j = 0; j < WINDOW; j++) MPI_Put(buf, size, MPI_BYTE, 1, 0, size, MPI_BYTE, win);
                MPI_Win_flush(1, win);
            }
            double t = MPI_Wtime() - t0;
            MPI_Win_unlock(1, win);
            printf("putbw %d %.2f\n", size, (double)size * WINDOW * iters / t / 1e6);
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long one = 1, old = 0;
        int iters = 10000, warm = 1000;
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        double t0 = 0;
        for (int i = 0; i < warm + iters; i++) {
            if (i == warm) t0 = MPI_Wtime();
            MPI_Fetch_and_op(&one, &old, MPI_LONG, 1, 0, MPI_SUM, win);
            MPI_Win_flush(1, win);
        }
        double t = MPI_Wtime() - t0;
        MPI_Win_unlock(1, win);
        printf("fop 8 %.2f\n", t * 1e6 / iters);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    free(buf);
    MPI_Finalize();
    return 0;
}
