#!/usr/bin/env bash
# Held bytes under a flood of unexpected 16 KiB messages on shm, tcp (loopback) and the link:
# four senders, one receiver that posts nothing until the flood is over, the receiver's
# endpoint-wide held unexpected bytes (braid.bench.UnexpectedFloodBench), then every message
# received. BRAID_UNEXPECTED_BYTES sets the bound (default: an eighth of the heap, at most 64 MiB).
# Usage: bench/unexpected-flood.sh [MESSAGES_PER_SENDER]
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -q -B -pl rail-core -am test-compile
mvn -q -B -pl rail-core dependency:build-classpath -Dmdep.outputFile="$PWD/rail-core/target/bench-classpath.txt" -Dmdep.includeScope=test
export BRAID_TCP_IFACE=lo
exec java -Xmx1g -cp "rail-core/target/classes:rail-core/target/test-classes:$(cat rail-core/target/bench-classpath.txt)" \
  braid.bench.UnexpectedFloodBench "${1:-2000}"
