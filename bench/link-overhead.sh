#!/usr/bin/env bash
# The link's overhead, on this machine, one after the other, ROUNDS times:
#   same host:  braid pingpong -p link  vs  -p shm   (the link picks shm for a same-host peer)
#   cross host: braid pingpong -p link  vs  -p tcp   (server and client get different
#               BRAID_HOST_IDs, so the link treats the peer as remote and picks tcp on loopback)
# one-way latency at 64 B and bandwidth at 1 MiB. Needs: mvn -q -B package -DskipTests.
# Usage: bench/link-overhead.sh [ROUNDS] [ITERS_64B] [ITERS_1MIB]
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
rounds=${1:-3}
small=${2:-100000}
large=${3:-2000}
export BRAID_TCP_IFACE=lo BRAID_LINKS=shm+tcp:lo

pair() { # SERVER_HOST_ID CLIENT_HOST_ID braid-args...
  local sid=$1 cid=$2; shift 2
  local port=$((20000 + RANDOM % 20000))
  BRAID_HOST_ID=$sid bin/braid pingpong "$@" -B "$port" > /tmp/braid-link-bench-server.txt 2>&1 &
  local server=$!
  sleep 1
  BRAID_HOST_ID=$cid bin/braid pingpong "$@" -P "$port" 127.0.0.1 | grep -v '^#' | tail -n +2
  wait "$server"
}

echo "bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec   path"
for r in $(seq "$rounds"); do
  for size in 64 1048576; do
    iters=$small; [[ $size == 1048576 ]] && iters=$large
    pair h h -p shm  -I "$iters" -S "$size" | sed 's/$/   shm/'
    pair h h -p link -I "$iters" -S "$size" | sed 's/$/   link, same host (shm)/'
  done
  for size in 64 1048576; do
    iters=$((small / 5)); [[ $size == 1048576 ]] && iters=$large
    pair a b -p tcp  -I "$iters" -S "$size" | sed 's/$/   tcp/'
    pair a b -p link -I "$iters" -S "$size" | sed 's/$/   link, cross host (tcp)/'
  done
done
