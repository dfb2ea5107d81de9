#!/usr/bin/env bash
# Held bytes under a flood of unexpected 16 KiB messages on shm, tcp (loopback) and the link:
# four senders, one receiver that posts nothing until the flood is over, the receiver's
# endpoint-wide held unexpected bytes (braid.bench.UnexpectedFloodBench), then every message
# received. BRAID_UNEXPECTED_BYTES sets the bound (default: an eighth of the heap, at most 64 MiB).
# Usage: bench/unexpected-flood.sh [MESSAGES_PER_SENDER]
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
cp=$(bench/rail-core-cp.sh)
export BRAID_TCP_IFACE=lo
exec java -Xmx1g -cp "$cp" braid.bench.UnexpectedFloodBench "${1:-2000}"
