#!/usr/bin/env bash
# Collectives through the intra-node offload provider (one shared-memory segment per host, every
# size sent through it) against the same calls through the main provider (shm point-to-point
# schedules), in one run: allreduce and broadcast at 8 B … 1 MiB of doubles and barrier, 2 and 4
# processes on this host, the two paths taking turns; the slowest rank's mean and median call
# (best of two rounds after a warm-up; braid.collectives.offload.OffloadBench). ShmOffload.DEFAULT's
# maxBytes (the largest one-host call it takes) comes from here. On a 2-core machine the
# 4-process rows measure the idle policy (ranks share 2 cores) as much as the paths.
# Then braid.mpi's 8 B allreduce beside a braid.collectives user's, both through the offload, on two
# ranks (threads of one process; braid.mpi.bench.MpiAllreduceOffload): the same loop shape, then OSU's
# (a barrier after each call), best p50 and mean of the slower rank.
# Usage: bench/coll-offload.sh [N...]
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
CP=$(braid_jar)   # samples/target/braid.jar, built offline if missing
ns=("$@"); [ ${#ns[@]} -gt 0 ] || ns=(2 4)
for n in "${ns[@]}"; do
  echo "== $n processes (usec per call, slowest rank; ratio = offload / main, medians) =="
  printf '%-10s %9s %10s %10s %10s %10s %7s\n' op bytes 'main mean' 'main p50' 'off mean' 'off p50' ratio
  java -Xmx1g -cp "$CP" braid.collectives.offload.OffloadBench run "$n" |
    awk '{ printf "%-10s %9s %10.2f %10.2f %10.2f %10.2f %7.2f\n", $1, $2, $3, $4, $5, $6, $6 / $4 }'
done
echo "== braid.mpi against braid.collectives, 2 ranks, 8 B allreduce through the offload =="
java -Xmx1g -cp "$CP" braid.mpi.bench.MpiAllreduceOffload 10000 3
