#!/usr/bin/env bash
# braid pingpong -p PROV against libfabric's fi_pingpong -p PROV -e rdm, on this machine, one after
# the other, ROUNDS times each: one-way latency at 64 B and bandwidth at 1 MiB. PROV is shm, or
# tcp over loopback when run as bench/tcp-vs-fi_pingpong.sh (a link to this script).
# Needs: mvn -q -B package -DskipTests (for bin/braid), and fi_pingpong (apt-get install libfabric-bin).
# Usage: bench/shm-vs-fi_pingpong.sh [ROUNDS] [ITERS_64B] [ITERS_1MIB]
set -euo pipefail
. "$(dirname "$0")/usage.sh"
. "$(dirname "$0")/usage.sh"
prov=$(basename "$0"); prov=${prov%%-vs-*}
cd "$(dirname "$0")/.."
export BRAID_TCP_IFACE=lo
rounds=${1:-3}
small=${2:-100000}; [[ $prov == tcp ]] && small=${2:-20000}
large=${3:-2000}
command -v fi_pingpong >/dev/null || { echo "fi_pingpong is missing: apt-get install libfabric-bin" >&2; exit 1; }

pair() { # server-and-client command prefix; args...
  local tool=$1; shift
  local port=$((20000 + RANDOM % 20000))
  "$tool" "$@" -B "$port" > /tmp/braid-bench-server.txt 2>&1 &
  local server=$!
  sleep 1
  "$tool" "$@" -P "$port" 127.0.0.1 | grep -v '^#' | tail -n +2
  wait "$server"
}

echo "bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec   tool"
for r in $(seq "$rounds"); do
  for size in 64 1048576; do
    iters=$small; [[ $size == 1048576 ]] && iters=$large
    pair bin/braid pingpong -p "$prov" -I "$iters" -S "$size" | sed 's/$/   braid/'
    pair fi_pingpong -p "$prov" -e rdm -I "$iters" -S "$size" | sed 's/$/   fi_pingpong/'
  done
done
