#!/usr/bin/env bash
# Rail-level message rate over shm against its floor: `braid bench mbw_mr -p shm` (osu_mbw_mr's shape
# for one pair on rail-core endpoints alone: a window of 64 tagged sends, then a 4-byte acknowledgement;
# two processes) against a C loop over the same ring shape with no matching and no completion queue
# (bench/msg-rate-floor.c), ROUNDS times each, alternating; then the best row of each, in messages/s.
# Also prints the rail's CPU cost per message with one thread playing both sides
# (braid.bench.MessageRateBench: `cpu SIZE NS CQ_READS/MSG BYTES/MSG`), the steadiest number on a
# loaded machine.
# Needs: a C compiler and the README's build (built offline here if missing).
# Usage: bench/msg-rate.sh [ROUNDS] [SIZES]
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
rounds=${1:-3}
sizes=${2:-1,8,64,1024,4096,8192}
jar=$(braid_jar)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -o "$out/msg-rate-floor" bench/msg-rate-floor.c
java -Xmx1g -cp "$jar" braid.bench.MessageRateBench cpu "$sizes"
for r in $(seq "$rounds"); do
  # CSV: benchmark,layer,transport,ranks,size,bandwidth_mb_s,messages_s
  bin/braid bench mbw_mr -p shm -S "$sizes" -W 64 --format csv | awk -F, 'NR > 1 {print "rate", $5, $7}' >> "$out/braid.txt"
  "$out/msg-rate-floor" "$sizes" >> "$out/floor.txt"
done
best() { awk -v k="$1" '$1==k { if ($3 > b[$2]) b[$2] = $3 } END { for (s in b) print s, b[s] }' "$2" | sort -n; }
echo
printf "%-9s %14s %14s %7s\n" bytes braid-msgs/s floor-msgs/s ratio
join <(best rate "$out/braid.txt") <(best floor "$out/floor.txt") | sort -n \
  | awk '{printf "%-9s %14.0f %14.0f %7.2f\n", $1, $2, $3, ($3 > 0 ? $2 / $3 : 0)}'
