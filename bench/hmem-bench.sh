#!/usr/bin/env bash
# Device memory and override ops (braid.bench.HmemBench): host ping-pong with and without a trivial
# override set (64 B, 1 MiB; the ratio should stay ≤ 1.05), the same through the memory of a device
# reached only by copy functions (braid.bench.SegmentDevice), and 64 MiB device-to-device messages
# over shm and tcp, staged whole and chunk by chunk. With `mpi`: braid.mpi's calls on device memory
# against host memory (braid.mpi.bench.MpiHmemBench, two rank processes over shm): ping-pong at 64 B
# and 1 MiB, a 64 MiB stream and allreduce at 64 B and 1 MiB (ROUNDS: the 64 B rounds, default 2000).
# Usage: bench/hmem-bench.sh [ROUNDS] [stream|mpi]   (stream: the 64 MiB part alone, staged whole against in chunks)
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
if [[ ${2:-} == mpi ]]; then
  jar=$(braid_jar)
  boot=$(mktemp -d)
  trap 'rm -rf "$boot"' EXIT
  java -Xmx1g -XX:MaxDirectMemorySize=2g -cp "$jar" braid.mpi.bench.MpiHmemBench "$boot" 1 "${1:-2000}" &
  peer=$!
  java -Xmx1g -XX:MaxDirectMemorySize=2g -cp "$jar" braid.mpi.bench.MpiHmemBench "$boot" 0 "${1:-2000}"
  wait "$peer"
  exit 0
fi
exec java -Xmx2g -XX:MaxDirectMemorySize=2g -cp "$(braid_jar)" braid.bench.HmemBench "${1:-20000}" ${2:+"$2"}
