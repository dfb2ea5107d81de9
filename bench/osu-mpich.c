/* The loops of `braid bench --layer mpi` in C against MPICH, for bench/side-by-side.sh: the same
 * OSU definitions (warm-up iterations, iterations per size, window, which rank times what) and the
 * same sizes, so each row compares like with like. Prints "SIZE VALUE" lines from rank 0: the mean
 * latency in microseconds (latency: half the round trip; collectives: the average over the ranks of
 * each rank's mean call time, a barrier after each call), or MB/s (bw, bibw), or MB/s and
 * messages/s (mbw_mr).
 * Build: mpicc.mpich -O2 -o osu-mpich bench/osu-mpich.c
 * Run:   mpiexec.mpich -n 2 ./osu-mpich NAME SIZES ITERS SKIP WINDOW   (ITERS, SKIP 0: OSU's)
 *        NAME: latency bw bibw mbw_mr allreduce reduce bcast barrier allgather alltoall
 *              put_latency get_latency put_bw fop_latency (OSU's defaults: MPI_Win_allocate, rank 0
 *              holding a shared lock on rank 1, a flush after each operation, after each window for put_bw)
 *        SIZES: comma-separated bytes */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LARGE 8192

static void plan(const char *name, int size, int iters_arg, int skip_arg, int *iters, int *skip) {
    int large = size > LARGE;
    if (!strcmp(name, "bw") || !strcmp(name, "bibw") || !strcmp(name, "mbw_mr") || !strcmp(name, "put_bw")) {
        *iters = large ? 20 : 100; *skip = large ? 2 : 10;
    } else if (!strcmp(name, "latency") || strstr(name, "_latency")) {
        *iters = large ? 1000 : 10000; *skip = large ? 10 : 100;
    } else {
        *iters = large ? 100 : 1000; *skip = large ? 10 : 100;
    }
    if (iters_arg > 0) *iters = iters_arg;
    if (skip_arg >= 0) *skip = skip_arg;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc != 6) {
        if (rank == 0) fprintf(stderr, "usage: osu-mpich NAME SIZES ITERS SKIP WINDOW\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *name = argv[1];
    int iters_arg = atoi(argv[3]), skip_arg = argv[4][0] ? atoi(argv[4]) : -1, window = atoi(argv[5]);
    int sizes[64], nsizes = 0, max = 64;
    for (char *s = strtok(argv[2], ","); s && nsizes < 64; s = strtok(NULL, ",")) {
        sizes[nsizes] = atoi(s);
        if (sizes[nsizes] > max) max = sizes[nsizes];
        nsizes++;
    }
    char *sbuf = calloc(1, (size_t)max * n), *rbuf = calloc(1, (size_t)max * n), ack[4];
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * window);
    int pairs = n / 2;
    int one_sided = !strncmp(name, "put_", 4) || !strncmp(name, "get_", 4) || !strncmp(name, "fop_", 4);
    char *base = NULL;
    MPI_Win win = MPI_WIN_NULL;
    long one = 1, old = 0;
    if (one_sided) MPI_Win_allocate(max, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    for (int k = 0; k < nsizes; k++) {
        int size = sizes[k], iters, skip;
        plan(name, size, iters_arg, skip_arg, &iters, &skip);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = 0, timed = 0;
        if (!strcmp(name, "latency")) {
            int peer = 1 - rank;
            for (int i = 0; i < skip + iters && rank < 2; i++) {
                if (i == skip) t0 = MPI_Wtime();
                if (rank == 0) {
                    MPI_Send(sbuf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                    MPI_Recv(rbuf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(rbuf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(sbuf, size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                }
            }
            if (rank == 0) printf("%d %.2f\n", size, (MPI_Wtime() - t0) * 1e6 / (2.0 * iters));
        } else if (!strcmp(name, "bw") || !strcmp(name, "mbw_mr")) {
            int sender = !strcmp(name, "bw") ? rank == 0 : rank < pairs;
            int partner = !strcmp(name, "bw") ? (rank < 2 ? 1 - rank : -1) : (rank < pairs ? rank + pairs : rank - pairs);
            double t = 0;
            for (int i = 0; i < skip + iters && partner >= 0; i++) {
                if (i == skip) t0 = MPI_Wtime();
                if (sender) {
                    for (int w = 0; w < window; w++) MPI_Isend(sbuf, size, MPI_BYTE, partner, 100, MPI_COMM_WORLD, &reqs[w]);
                    MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
                    MPI_Recv(ack, 4, MPI_BYTE, partner, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    for (int w = 0; w < window; w++) MPI_Irecv(rbuf, size, MPI_BYTE, partner, 100, MPI_COMM_WORLD, &reqs[w]);
                    MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
                    MPI_Send(ack, 4, MPI_BYTE, partner, 101, MPI_COMM_WORLD);
                }
            }
            if (sender) t = MPI_Wtime() - t0;
            if (!strcmp(name, "bw")) {
                if (rank == 0) printf("%d %.2f\n", size, (double)size * window * iters / t / 1e6);
            } else {
                double sum = 0;
                MPI_Reduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
                double rate = pairs * (double)iters * window / (sum / pairs);
                if (rank == 0) printf("%d %.2f %.2f\n", size, rate * size / 1e6, rate);
            }
        } else if (!strcmp(name, "bibw")) {
            int peer = 1 - rank;
            for (int i = 0; i < skip + iters && rank < 2; i++) {
                if (i == skip) t0 = MPI_Wtime();
                for (int w = 0; w < window; w++) MPI_Irecv(rbuf, size, MPI_BYTE, peer, 100, MPI_COMM_WORLD, &reqs[w]);
                for (int w = 0; w < window; w++) MPI_Isend(sbuf, size, MPI_BYTE, peer, 100, MPI_COMM_WORLD, &reqs[window + w]);
                MPI_Waitall(2 * window, reqs, MPI_STATUSES_IGNORE);
            }
            if (rank == 0) printf("%d %.2f\n", size, 2.0 * size * window * iters / (MPI_Wtime() - t0) / 1e6);
        } else if (one_sided) {
            if (rank == 0) {
                int put_bw = !strcmp(name, "put_bw");
                MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
                for (int i = 0; i < skip + iters; i++) {
                    if (i == skip) t0 = MPI_Wtime();
                    if (!strcmp(name, "put_latency")) MPI_Put(sbuf, size, MPI_BYTE, 1, 0, size, MPI_BYTE, win);
                    else if (!strcmp(name, "get_latency")) MPI_Get(rbuf, size, MPI_BYTE, 1, 0, size, MPI_BYTE, win);
                    else if (put_bw) for (int w = 0; w < window; w++) MPI_Put(sbuf, size, MPI_BYTE, 1, 0, size, MPI_BYTE, win);
                    else MPI_Fetch_and_op(&one, &old, MPI_LONG, 1, 0, MPI_SUM, win);
                    MPI_Win_flush(1, win);
                }
                double t = MPI_Wtime() - t0;
                MPI_Win_unlock(1, win);
                if (put_bw) printf("%d %.2f\n", size, (double)size * window * iters / t / 1e6);
                else printf("%d %.2f\n", size, t * 1e6 / iters);
            }
        } else {
            for (int i = 0; i < skip + iters; i++) {
                double start = MPI_Wtime();
                if (!strcmp(name, "allreduce")) MPI_Allreduce(sbuf, rbuf, size / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
                else if (!strcmp(name, "reduce")) MPI_Reduce(sbuf, rbuf, size / 4, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
                else if (!strcmp(name, "bcast")) MPI_Bcast(sbuf, size, MPI_BYTE, 0, MPI_COMM_WORLD);
                else if (!strcmp(name, "allgather")) MPI_Allgather(sbuf, size, MPI_BYTE, rbuf, size, MPI_BYTE, MPI_COMM_WORLD);
                else if (!strcmp(name, "alltoall")) MPI_Alltoall(sbuf, size, MPI_BYTE, rbuf, size, MPI_BYTE, MPI_COMM_WORLD);
                else if (!strcmp(name, "barrier")) MPI_Barrier(MPI_COMM_WORLD);
                else { if (rank == 0) fprintf(stderr, "osu-mpich: unknown benchmark %s\n", name); MPI_Abort(MPI_COMM_WORLD, 2); }
                if (i >= skip) timed += MPI_Wtime() - start;
                MPI_Barrier(MPI_COMM_WORLD);
            }
            double mean = timed * 1e6 / iters, sum = 0;
            MPI_Reduce(&mean, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            if (rank == 0) printf("%d %.2f\n", size, sum / n);
        }
        fflush(stdout);
    }
    if (one_sided) MPI_Win_free(&win);
    free(sbuf); free(rbuf); free(reqs);
    MPI_Finalize();
    return 0;
}
