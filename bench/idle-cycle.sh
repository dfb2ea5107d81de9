#!/usr/bin/env bash
# What one idle duty cycle costs on shm and tcp: Domain.progress() with nothing arriving, an endpoint
# with one connected peer (braid.bench.IdleCycleBench). The rails' timers (shm liveness, tcp
# keepalive) must not add to it. Usage: bench/idle-cycle.sh [CYCLES] [ROUNDS]
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
cp=$(bench/rail-core-cp.sh)
export BRAID_TCP_IFACE=lo
exec java -Xmx1g -cp "$cp" braid.bench.IdleCycleBench "${1:-2000000}" "${2:-7}"
