#!/usr/bin/env bash
# Rail-level message rate over shm (osu_mbw_mr's shape for one pair, on endpoints alone: a window of
# 64 tagged sends, then a 4-byte acknowledgement; braid.bench.MessageRateBench) against its floor, a C
# loop over the same ring shape with no matching and no completion queue (bench/msg-rate-floor.c),
# ROUNDS times each, alternating; then the best row of each, in messages/s. Also prints the rail's
# CPU cost per message with one thread playing both sides (`cpu SIZE NS CQ_READS/MSG BYTES/MSG`), the
# steadiest number on a loaded machine.
# Needs: a C compiler. Usage: bench/msg-rate.sh [ROUNDS] [SIZES]
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
rounds=${1:-3}
sizes=${2:-1,8,64,1024,4096,8192}
mvn -q -B -Dkotlin.compiler.daemon=false -pl rail-core -am test-compile org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath -Dmdep.outputFile="$PWD/rail-core/target/bench-classpath.txt" -Dmdep.includeScope=test
CP="rail-core/target/classes:rail-core/target/test-classes:$(cat rail-core/target/bench-classpath.txt)"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -o "$out/msg-rate-floor" bench/msg-rate-floor.c
for r in $(seq "$rounds"); do
  java -Xmx1g -cp "$CP" braid.bench.MessageRateBench rate,cpu "$sizes" | tee -a "$out/braid.txt" | grep '^cpu'
  "$out/msg-rate-floor" "$sizes" >> "$out/floor.txt"
done
best() { awk -v k="$1" '$1==k { if ($3 > b[$2]) b[$2] = $3 } END { for (s in b) print s, b[s] }' "$2" | sort -n; }
echo
printf "%-9s %14s %14s %7s\n" bytes braid-msgs/s floor-msgs/s ratio
join <(best rate "$out/braid.txt") <(best floor "$out/floor.txt") | sort -n \
  | awk '{printf "%-9s %14.0f %14.0f %7.2f\n", $1, $2, $3, ($3 > 0 ? $2 / $3 : 0)}'
