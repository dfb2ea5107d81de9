#!/usr/bin/env bash
# Allreduce through the intra-node offload provider (one shared-memory segment per host) against
# the same allreduce through the main provider (shm point-to-point schedules), in one run: 2 and 4
# processes on this host, 8 B, 4 KiB, 64 KiB and 1 MiB of doubles (SUM), OSU-style averages, the
# slowest rank's (braid.collectives.offload.OffloadBench). On a 2-core machine the 4-process rows
# measure the idle policy (ranks share 2 cores) as much as the paths. Usage: bench/coll-offload.sh
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -q -B -o -pl collectives -am test-compile
CP="collectives/target/classes:collectives/target/test-classes:$(bench/rail-core-cp.sh)"
for n in 2 4; do
  echo "== $n processes (usec per allreduce, slowest rank; ratio = offload / main) =="
  printf '%-10s %9s %12s %12s %7s\n' op bytes main offload ratio
  java -Xmx1g -cp "$CP" braid.collectives.offload.OffloadBench run "$n" |
    awk '{ printf "%-10s %9s %12.2f %12.2f %7.2f\n", $1, $2, $3, $4, $4 / $3 }'
done
