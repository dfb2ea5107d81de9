#!/usr/bin/env bash
# The split copy's settings on Braid itself: braid.mpi's bandwidth rows (window of 64, two JVM
# ranks over shm, MpiPingPong's bw loop) with sharing off (shm.share_size 0: the receiver pulls
# alone) and with each chunk size of shm.share_chunk, ROUNDS times, alternating.
# Usage: bench/shm-share-sweep.sh [ROUNDS] [CHUNKS] [SIZES]
#   e.g. bench/shm-share-sweep.sh 2 "65536 131072 262144 524288" 262144,524288,1048576
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
rounds=${1:-2}
chunks=${2:-65536 131072 262144 524288}
sizes=${3:-262144,524288,1048576}
CP=$(braid_jar)   # samples/target/braid.jar, built offline if missing
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export BRAID_MPI_SPIN_POLLS="${BRAID_MPI_SPIN_POLLS:-2000000000}"

run() { # label, then env assignments
  local label=$1; shift
  rm -rf "$out/boot"; mkdir "$out/boot"
  env "$@" java -Xmx1g -cp "$CP" braid.mpi.bench.MpiPingPong "$out/boot" 1 bw "$sizes" > "$out/peer.txt" 2>&1 &
  local peer=$!
  env "$@" java -Xmx1g -cp "$CP" braid.mpi.bench.MpiPingPong "$out/boot" 0 bw "$sizes" > "$out/rank0.txt"
  wait $peer
  awk -v l="$label" '$1=="bw"{printf "%-14s %9s %10s\n", l, $2, $3}' "$out/rank0.txt"
}

printf "%-14s %9s %10s\n" setting bytes "MB/s"
for r in $(seq "$rounds"); do
  run "pull-alone" BRAID_SHM_SHARE_SIZE=0
  for c in $chunks; do run "chunk-$((c / 1024))K" BRAID_SHM_SHARE_SIZE=65536 BRAID_SHM_SHARE_CHUNK="$c"; done
done
