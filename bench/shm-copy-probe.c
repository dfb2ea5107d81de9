/* How a large message should cross shared memory on this machine: two processes, a window of 64
 * messages of SIZE bytes in distinct buffers (as bench/mpi-vs-mpich.sh's bandwidth loop), moved
 * (a) by process_vm_readv, the receiver alone copying straight from the sender, and (b) through a
 * ring of SLOTS fragments of FRAG bytes, the sender copying in while the receiver copies out.
 * Prints MB/s of each, best of ROUNDS. Braid's shm rail pulls from shm.pull_size on and streams
 * fragments of shm.frag_size below it; this says where the line belongs.
 * Build: cc -O2; run: shm-copy-probe SIZE FRAG SLOTS REPS ROUNDS (bench/shm-copy-probe.sh). */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#define WINDOW 64
#define MAX_SLOTS 1024

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

struct shared { _Atomic long seq[MAX_SLOTS]; _Atomic int ready; char *src; };

int main(int argc, char **argv) {
    size_t size = argc > 1 ? strtoul(argv[1], 0, 10) : 1 << 20, frag = argc > 2 ? strtoul(argv[2], 0, 10) : 64 << 10;
    int slots = argc > 3 ? atoi(argv[3]) : 32, reps = argc > 4 ? atoi(argv[4]) : 4, rounds = argc > 5 ? atoi(argv[5]) : 20;
    if (slots < 1 || slots > MAX_SLOTS || frag == 0 || size == 0) { fprintf(stderr, "usage: %s SIZE FRAG SLOTS(1..%d) REPS ROUNDS\n", argv[0], MAX_SLOTS); return 2; }
    struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char *ring = mmap(NULL, (size_t)slots * frag, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED || ring == MAP_FAILED) { perror("mmap"); return 1; }
    memset(ring, 0, (size_t)slots * frag);
    size_t per = (size + frag - 1) / frag;
    pid_t sender = fork();
    if (sender == 0) { /* the sender: its own buffers, streamed fragment by fragment when the receiver asks */
        char *s = malloc(WINDOW * size);
        memset(s, 2, WINDOW * size);
        sh->src = s;
        atomic_store(&sh->ready, 1);
        long n = 0;
        for (long r = 0; r < (long)reps * rounds; r++)
            for (int k = 0; k < WINDOW; k++)
                for (size_t f = 0; f < per; f++, n++) {
                    int slot = n % slots;
                    while (atomic_load_explicit(&sh->seq[slot], memory_order_acquire) != n / slots * 2) ;
                    size_t len = (f + 1) * frag > size ? size - f * frag : frag;
                    memcpy(ring + (size_t)slot * frag, s + k * size + f * frag, len);
                    atomic_store_explicit(&sh->seq[slot], n / slots * 2 + 1, memory_order_release);
                }
        pause();
        return 0;
    }
    while (!atomic_load(&sh->ready)) ;
    char *dst = malloc(WINDOW * size);
    memset(dst, 0, WINDOW * size);
    double bestPull = 1e9, bestStream = 1e9;
    long n = 0;
    for (int round = 0; round < rounds; round++) {
        double t0 = now();
        for (int r = 0; r < reps; r++)
            for (int k = 0; k < WINDOW; k++) {
                struct iovec local = { dst + k * size, size }, remote = { sh->src + k * size, size };
                if (process_vm_readv(sender, &local, 1, &remote, 1, 0) != (ssize_t)size) { perror("process_vm_readv"); kill(sender, SIGKILL); return 1; }
            }
        double t = now() - t0;
        if (t < bestPull) bestPull = t;
        t0 = now();
        for (int r = 0; r < reps; r++)
            for (int k = 0; k < WINDOW; k++)
                for (size_t f = 0; f < per; f++, n++) {
                    int slot = n % slots;
                    while (atomic_load_explicit(&sh->seq[slot], memory_order_acquire) != n / slots * 2 + 1) ;
                    size_t len = (f + 1) * frag > size ? size - f * frag : frag;
                    memcpy(dst + k * size + f * frag, ring + (size_t)slot * frag, len);
                    atomic_store_explicit(&sh->seq[slot], n / slots * 2 + 2, memory_order_release);
                }
        t = now() - t0;
        if (t < bestStream) bestStream = t;
    }
    double bytes = (double)size * WINDOW * reps;
    printf("%9zu B  frag %7zu x %4d  pull (process_vm_readv) %7.0f MB/s  stream (2 copies at once) %7.0f MB/s\n",
           size, frag, slots, bytes / bestPull / 1e6, bytes / bestStream / 1e6);
    kill(sender, SIGKILL);
    waitpid(sender, NULL, 0);
    return 0;
}
