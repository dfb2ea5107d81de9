/* The floor under `braid bench mbw_mr -p shm` (bench/msg-rate.sh): the same shape (one sender, one receiver,
 * a window of 64 messages, then a 4-byte acknowledgement) in C over the ring shape Braid's shm rail uses
 * (one single-producer single-consumer ring of length-prefixed records per direction in shared memory,
 * records 8-byte aligned, the consumer reading up to a batch limit and publishing its head once per batch,
 * as Agrona's OneToOneRingBuffer.controlledRead does). The sender copies each payload into the ring, the
 * receiver copies it out into its own buffer: two copies per message, as an eager shm message costs.
 * No matching, no completion queue: what is left is the rings and the copies.
 * Two processes (fork) sharing one anonymous mapping. Prints "floor SIZE MSGS_PER_S" (best of 7 batches).
 * Build: cc -O2 -o msg-rate-floor bench/msg-rate-floor.c; run: ./msg-rate-floor [SIZES, comma-separated] */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WINDOW 64
#define CAPACITY (1 << 20) /* bytes of records per ring, a power of two */
#define READ_LIMIT 64      /* records per controlled read, as ShmInChannel's */
#define BATCHES 7
#define WARM 5

struct ring {
    _Alignas(128) _Atomic uint64_t tail; /* producer's position */
    _Alignas(128) _Atomic uint64_t head; /* consumer's position, published once per batch */
    _Alignas(128) uint8_t data[CAPACITY];
};

static size_t aligned(size_t n) { return (n + 7) & ~(size_t)7; }

/* Writes one record (an 8-byte length, then the payload); spins while the ring is full. */
static void put(struct ring *r, const void *src, uint32_t len) {
    size_t need = aligned(8 + len);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    size_t at = tail & (CAPACITY - 1);
    size_t pad = (at + need > CAPACITY) ? CAPACITY - at : 0; /* a record never wraps: pad to the end */
    while (tail + pad + need - atomic_load_explicit(&r->head, memory_order_acquire) > CAPACITY) {}
    if (pad) {
        *(uint64_t *)(r->data + at) = UINT64_MAX; /* padding marker */
        tail += pad;
        at = 0;
    }
    *(uint64_t *)(r->data + at) = len;
    memcpy(r->data + at + 8, src, len);
    atomic_store_explicit(&r->tail, tail + need, memory_order_release);
}

/* Reads up to READ_LIMIT records into dst (each overwrites it, as a receive into one buffer per message
 * would); publishes the head once; returns the records read. */
static int take(struct ring *r, uint8_t *dst) {
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    int n = 0;
    while (head < tail && n < READ_LIMIT) {
        size_t at = head & (CAPACITY - 1);
        uint64_t len = *(uint64_t *)(r->data + at);
        if (len == UINT64_MAX) { head += CAPACITY - at; continue; }
        memcpy(dst, r->data + at + 8, len);
        head += aligned(8 + len);
        n++;
    }
    if (n) atomic_store_explicit(&r->head, head, memory_order_release);
    return n;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    int sizes[32], nsizes = 0;
    char *list = strdup(argc > 1 ? argv[1] : "1,8,64,1024,4096,8192");
    for (char *s = strtok(list, ","); s && nsizes < 32; s = strtok(NULL, ",")) sizes[nsizes++] = atoi(s);
    struct ring *rings = mmap(NULL, 2 * sizeof(struct ring), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (rings == MAP_FAILED) { perror("mmap"); return 1; }
    struct ring *data = &rings[0], *acks = &rings[1];
    uint8_t *buf = calloc(1, 1 << 16);
    for (int s = 0; s < nsizes; s++) {
        int size = sizes[s];
        int windows = size <= 8192 ? 5000 : 500;
        pid_t child = fork();
        if (child == 0) { /* the receiver */
            uint32_t ack = 0;
            for (int i = 0; i < (WARM + BATCHES) * windows; i++) {
                for (int got = 0; got < WINDOW;) got += take(data, buf);
                put(acks, &ack, 4);
            }
            _exit(0);
        }
        double best = 1e30;
        for (int b = 0; b < WARM + BATCHES; b++) {
            double t0 = now();
            for (int w = 0; w < windows; w++) {
                for (int k = 0; k < WINDOW; k++) put(data, buf, size);
                while (take(acks, buf + 32768) == 0) {}
            }
            double t = now() - t0;
            if (b >= WARM && t < best) best = t;
        }
        waitpid(child, NULL, 0);
        printf("floor %d %.0f\n", size, (double)windows * WINDOW / best);
        fflush(stdout);
    }
    return 0;
}
