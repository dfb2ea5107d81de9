#!/usr/bin/env bash
# braid pingpong over shm at 64 B through the three APIs, interleaved, ROUNDS times:
# --api raw (polling try* calls), --api suspend (coroutines), --api future (CompletableFuture).
# Each launch runs the size RUNS times (-S 64,64,...), so every row is one warm, timed run.
# Needs: mvn -q -B package -DskipTests. Usage: bench/api-overhead.sh [ROUNDS] [ITERS] [RUNS]
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
rounds=${1:-3}
iters=${2:-200000}
runs=${3:-3}
sizes=$(printf '64,%.0s' $(seq "$runs")); sizes=${sizes%,}

pair() { # braid-args...
  local port=$((20000 + RANDOM % 20000))
  bin/braid pingpong "$@" -B "$port" > /tmp/braid-api-bench-server.txt 2>&1 &
  local server=$!
  sleep 1
  bin/braid pingpong "$@" -P "$port" 127.0.0.1 | grep -v '^#' | tail -n +2
  wait "$server"
}

echo "bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec   api"
for r in $(seq "$rounds"); do
  for api in raw suspend future; do
    pair -p shm -I "$iters" -S "$sizes" --api "$api" | sed "s/\$/   $api/"
  done
done
