/*
 * The VM's core-to-core latency level, now: two processes pinned to CPUs 0 and 1 pass a counter
 * through one shared cache line and print half the round trip in ns, then "fast" or "slow".
 *
 * This machine's two vCPUs move between host cores: some of the time a cache line crosses between
 * them in about 55 ns, some of the time in about 260 (the level changes every few seconds to minutes,
 * whatever runs). Every ping-pong here lands on one level or the other for a whole launch, so a
 * latency comparison is only fair between launches on the same level; bench/mpi-latency.sh runs this
 * before and after each launch to say which.
 *
 * Build and run: gcc -O2 -o /tmp/core-level bench/core-level.c && /tmp/core-level [ITERATIONS]
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Half a round trip at or under this is the fast level; at or over SLOW_NS the slow one. */
#define FAST_NS 120.0
#define SLOW_NS 180.0

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        perror("core-level: sched_setaffinity (needs CPUs 0 and 1)");
        exit(2);
    }
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
    long iterations = argc > 1 ? atol(argv[1]) : 100000;
    /* ping and pong on separate cache lines of one shared page */
    volatile uint64_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) {
        perror("core-level: mmap");
        return 2;
    }
    volatile uint64_t *ping = page, *pong = page + 8;
    pid_t child = fork();
    if (child == 0) {
        pin(1);
        for (uint64_t i = 1; i <= (uint64_t)iterations; i++) {
            while (*ping != i) {
            }
            *pong = i;
        }
        _exit(0);
    }
    pin(0);
    double t0 = now_ns();
    for (uint64_t i = 1; i <= (uint64_t)iterations; i++) {
        *ping = i;
        while (*pong != i) {
        }
    }
    double ns = (now_ns() - t0) / iterations / 2;
    waitpid(child, NULL, 0);
    printf("%.0f %s\n", ns, ns <= FAST_NS ? "fast" : ns >= SLOW_NS ? "slow" : "between");
    return 0;
}
