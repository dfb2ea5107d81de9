#!/usr/bin/env bash
# The native rail against libfabric itself: braid pingpong -p ofi:PROV and fi_pingpong -p PROV -e rdm
# over the same native provider (tcp on loopback, and shm), one after the other, ROUNDS times each:
# one-way latency at 64 B and bandwidth at 1 MiB. Then what JNA adds per native call, in ns
# (braid.bench.OfiCallCostBench: a direct-mapped call, the same call through an ops-table Function,
# and an empty duty cycle of each native rail).
# Needs: mvn -q -B package -DskipTests (for bin/braid), and fi_pingpong (apt-get install libfabric-bin).
# Usage: bench/ofi-pingpong.sh [ROUNDS] [ITERS_64B] [ITERS_1MIB] [CALLS]
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
rounds=${1:-3}
small=${2:-20000}
large=${3:-1000}
calls=${4:-2000000}
command -v fi_pingpong >/dev/null || { echo "fi_pingpong is missing: apt-get install libfabric-bin" >&2; exit 1; }
# Both tools on loopback: fi_pingpong reads FI_TCP_IFACE, braid names the domain (ofi:tcp:lo).
export FI_TCP_IFACE=lo

pair() { # tool args...
  local tool=$1; shift
  local port=$((20000 + RANDOM % 20000))
  "$tool" "$@" -B "$port" > /tmp/braid-ofi-bench-server.txt 2>&1 &
  local server=$!
  sleep 2
  "$tool" "$@" -P "$port" 127.0.0.1 | grep -v '^#' | tail -n +2
  wait "$server"
}

echo "bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec   tool"
for r in $(seq "$rounds"); do
  for prov in tcp shm; do
    braid_prov="ofi:$prov"; [[ $prov == tcp ]] && braid_prov="ofi:tcp:lo"
    for size in 64 1048576; do
      iters=$small; [[ $size == 1048576 ]] && iters=$large
      pair bin/braid pingpong -p "$braid_prov" -e rdm -I "$iters" -S "$size" | sed "s/\$/   braid $braid_prov/"
      pair fi_pingpong -p "$prov" -e rdm -I "$iters" -S "$size" | sed "s/\$/   fi_pingpong $prov/"
    done
  done
done

echo
echo "JNA cost per native call (braid.bench.OfiCallCostBench)"
cp=$(bench/rail-core-cp.sh)
java -Xmx1g -cp "$cp" braid.bench.OfiCallCostBench "$calls" "$rounds" ofi:tcp:lo ofi:shm
