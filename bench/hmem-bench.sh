#!/usr/bin/env bash
# Device memory and override ops (braid.bench.HmemBench): host ping-pong with and without a trivial
# override set (64 B, 1 MiB; the ratio should stay ≤ 1.05), the same through test-device memory,
# and 64 MiB device-to-device messages staged through bounce buffers.
# Usage: bench/hmem-bench.sh [ROUNDS]
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
cp="$(braid_jar):rail-core/target/test-classes"   # HmemBench uses the tests' TestDevice and TestFabric
exec java -Xmx2g -XX:MaxDirectMemorySize=2g -cp "$cp" braid.bench.HmemBench "${1:-20000}"
