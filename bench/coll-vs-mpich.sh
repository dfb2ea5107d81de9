#!/usr/bin/env bash
# Collectives against MPICH in one run: allreduce (8 B, 4 KiB, 64 KiB, 1 MiB of doubles, SUM),
# broadcast at the same sizes and barrier, OSU-style averages (the slowest rank's), with 2 and 4
# processes: MPICH's MPI_* (mpicc.mpich, mpiexec.mpich) and Braid's collectives over shm, one
# JVM per rank (braid.collectives.CollBench). Then the time to build the schedule of a 1024-rank
# allreduce and alltoall (a simulated group: nothing is sent) and the memory per cached schedule.
# On a 2-core machine the 4-process rows measure the idle policy (spinning ranks share 2 cores)
# as much as the algorithms. Every Braid row is printed twice: through the main provider's
# point-to-point schedules (p2p) and through a group paired with the shm offload (offload). Braid's loops run passes for at least 10 s (at least 5) and report the last (the others warm
# the JIT up; MPICH's C needs none; BRAID_BENCH_WARMUP_SECONDS, BRAID_BENCH_PASSES change them). Usage: bench/coll-vs-mpich.sh
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
mvn -q -B -Dkotlin.compiler.daemon=false -o -pl collectives -am test-compile
# collectives adds no library of its own: rail-core's class path serves, with collectives' classes in front.
CP="collectives/target/classes:collectives/target/test-classes:$(bench/rail-core-cp.sh)"
mkdir -p collectives/target/bench
mpicc.mpich -O2 -o collectives/target/bench/osu_coll bench/coll/osu_coll.c
for n in 2 4; do
  mpiexec.mpich -n "$n" collectives/target/bench/osu_coll > "collectives/target/bench/mpich-$n.txt"
  java -Xmx1g -cp "$CP" braid.collectives.CollBench run "$n" > "collectives/target/bench/braid-$n.txt"
  echo "== $n processes (usec per call, slowest rank; ratio = Braid mean / MPICH mean) =="
  echo "   p2p: the main provider's schedules; offload: every call through the shm offload's segment (ShmOffload.DEFAULT.withMaxBytes(Int.MAX_VALUE))"
  printf '%-10s %9s %-8s %10s %10s %7s %10s %10s\n' op bytes path mpich braid ratio 'braid p50' 'braid p99'
  awk 'NR==FNR { m[$1" "$2] = $3; next } ($1" "$2) in m { printf "%-10s %9s %-8s %10.2f %10.2f %7.2f %10.2f %10.2f\n", $1, $2, $3, m[$1" "$2], $4, $4 / m[$1" "$2], $5, $6 }' \
    "collectives/target/bench/mpich-$n.txt" "collectives/target/bench/braid-$n.txt"
done
echo "== schedule build (simulated group; nothing sent) =="
java -Xmx2g -cp "$CP" braid.collectives.CollBench build
