#!/usr/bin/env bash
# Scale numbers (issue 11): heap per address-vector entry at 1,000,000 entries for shm, tcp and
# the link, and the bulk insert rate; the any-source match time behind 1,000,000 unexpected
# messages of other tags. Needs: mvn -q -B test-compile -pl rail-core -am.
# Usage: bench/scale-bench.sh [av,anysource]
set -euo pipefail
cd "$(dirname "$0")/.."
cp=/tmp/braid-scale-bench.cp
mvn -q -B -pl rail-core dependency:build-classpath -Dmdep.outputFile="$cp" -Dmdep.includeScope=test >/dev/null
exec java -Xmx3g -cp "rail-core/target/classes:rail-core/target/test-classes:$(cat "$cp")" braid.bench.ScaleBench "${1:-av,anysource}"
