#!/usr/bin/env bash
# Triggered operations, deferred work and atomics: issue latency from a counter reaching its
# threshold vs posting directly, a triggered echo, queue+fire with 100,000 pending, and the
# fetch-add round trip to another process over shm, tcp and the link (braid.bench.TriggerBench).
# Usage: bench/trigger-bench.sh [ITERATIONS]
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
cp=$(bench/rail-core-cp.sh)
export BRAID_TCP_IFACE=lo
exec java -Xmx2g -cp "$cp" braid.bench.TriggerBench "${1:-200000}"
