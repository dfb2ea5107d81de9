#!/usr/bin/env bash
# Device memory and override ops (braid.bench.HmemBench): host ping-pong with and without a trivial
# override set (64 B, 1 MiB; the ratio should stay ≤ 1.05), the same through the memory of a device
# reached only by copy functions (braid.bench.SegmentDevice), and 64 MiB device-to-device messages
# over shm and tcp, staged whole and chunk by chunk.
# Usage: bench/hmem-bench.sh [ROUNDS] [stream]   (stream: the 64 MiB part alone, staged whole against in chunks)
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
exec java -Xmx2g -XX:MaxDirectMemorySize=2g -cp "$(braid_jar)" braid.bench.HmemBench "${1:-20000}" ${2:+"$2"}
