#!/usr/bin/env bash
# Scale numbers (issue 11): heap per address-vector entry at 1,000,000 entries for shm, tcp and
# the link, and the bulk insert rate; the any-source match time behind 1,000,000 unexpected
# messages of other tags.
# Usage: bench/scale-bench.sh [av,anysource]
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
cp=$(bench/rail-core-cp.sh)
exec java -Xmx3g -cp "$cp" braid.bench.ScaleBench "${1:-av,anysource}"
