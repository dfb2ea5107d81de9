#!/usr/bin/env bash
# Where each collective algorithm wins: allreduce (recursive doubling, ring, Rabenseifner),
# broadcast (binomial, scatter + allgather) and allgather (recursive doubling on powers of two,
# ring), each forced in turn at 8 B … 4 MiB, on 2, 3 and 4 processes over shm (one JVM per rank,
# braid.collectives.CollBench crossovers). Prints per operation and group size a table of µs per
# call (the slowest rank's median call, best of three after a warm-up), the winner per size and the
# CollectiveTuning crossover it implies; CollectiveTuning.DEFAULT is set from these lines.
# On a 2-core machine the 3- and 4-process rows share cores (ranks wait with YIELD): they
# measure the idle policy as much as the algorithms. Usage: bench/coll-crossovers.sh [N...]
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
CP=$(braid_jar)   # samples/target/braid.jar, built offline if missing
ns=("$@"); [ ${#ns[@]} -gt 0 ] || ns=(2 3 4)
for n in "${ns[@]}"; do
  java -Xmx1g -cp "$CP" braid.collectives.CollBench crossovers "$n"
done
