#!/usr/bin/env bash
# Hierarchical collectives (the offload provider's segment inside each host, tcp among one leader
# per host) against the same collectives flat over tcp, in one run: N processes on this machine
# made into HOSTS hosts by BRAID_HOST_ID (rank r on host r mod HOSTS), tcp on loopback; allreduce,
# reduce (to the last rank, not a leader), allgather and broadcast (from the last rank) of 8 B,
# 4 KiB, 64 KiB and 1 MiB of doubles per rank, OSU-style averages, the slowest rank's
# (braid.collectives.offload.HierBench). Loopback tcp is much cheaper than a network between hosts,
# and on a 2-core machine more than 2 processes measure the idle policy as much as the paths.
# Usage: bench/coll-hier.sh [N=4] [HOSTS=2]
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
n=${1:-4}; hosts=${2:-2}
CP=$(braid_jar)   # samples/target/braid.jar, built offline if missing
echo "== $n processes on $hosts hosts (usec per call, slowest rank; ratio = hierarchical / flat) =="
printf '%-10s %9s %12s %12s %7s\n' op bytes flat hier ratio
java -Xmx256m -cp "$CP" braid.collectives.offload.HierBench run "$n" "$hosts" |
  awk '$2 ~ /^[0-9]+$/ { printf "%-10s %9s %12.2f %12.2f %7.2f\n", $1, $2, $3, $4, $4 / $3 }'
