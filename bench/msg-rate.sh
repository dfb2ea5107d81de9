#!/usr/bin/env bash
# Rail-level message rate over shm against its floor: `braid bench mbw_mr -p shm` (osu_mbw_mr's shape
# for one pair on rail-core endpoints alone: a window of 64 tagged sends, then a 4-byte acknowledgement;
# two processes, after 3 s of untimed passes for the JIT) against a C loop over the same ring shape with
# no matching and no completion queue
# (bench/msg-rate-floor.c), ROUNDS times each, alternating; then the best row of each, in messages/s.
# Also prints the rail's CPU cost per message with one thread playing both sides
# (braid.bench.MessageRateBench: `cpu SIZE NS CQ_READS/MSG BYTES/MSG`), the steadiest number on a
# loaded machine, with thread-safe domains (a lock per post, read and progress round) and with
# Threading.DOMAIN ones (no lock: what `braid bench` and braid.mpi below MULTIPLE open).
# `profile [SIZE] [core|mpi]` instead samples that one-thread loop with JFR (64 B by default), thread-safe
# and Threading.DOMAIN (`mpi`: braid.mpi's window of 64 isend/irecv/waitAll, MpiWindowCpu, at SINGLE),
# and prints the 15 hottest methods by own samples (where the time per message goes).
# Needs: a C compiler and the README's build (built offline here if missing); `jfr` (the JDK's) for profile.
# Usage: bench/msg-rate.sh [ROUNDS] [SIZES]      bench/msg-rate.sh profile [SIZE] [core|mpi]
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
if [[ ${1:-} == profile ]]; then
  jar=$(braid_jar)
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
  size=${2:-64}
  if [[ ${3:-core} == mpi ]]; then runs=("braid.mpi.bench.MpiWindowCpu $size 20000"); else
    runs=("braid.bench.MessageRateBench cpu $size safe" "braid.bench.MessageRateBench cpu $size threading=domain"); fi
  for run in "${runs[@]}"; do
    echo "# $run"
    # shellcheck disable=SC2086
    # DebugNonSafepoints: without it JFR charges a sample to the nearest safepoint's method (an earlier profile
    # blamed matching for ~24% that way); a 1 ms period gives a 20,000-window run ~1,000 samples, not ~180.
    java -Xmx1g -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints \
      -XX:StartFlightRecording=filename="$out/rate.jfr",settings=profile,jdk.ExecutionSample#period=1ms \
      -cp "$jar" $run 2>/dev/null \
      | grep -v '^\[' || true
    # The top frame of every sample of the main thread, with its line number left off: own time per method.
    jfr print --events jdk.ExecutionSample "$out/rate.jfr" \
      | awk '/sampledThread = "main"/ {m = 1} /stackTrace = \[/ {t = m; m = 0; next}
             t { sub(/^ +/, ""); sub(/ +line:.*/, ""); n[$0]++; all++; t = 0 }
             END { for (f in n) printf "%6.1f%%  %s\n", 100 * n[f] / all, f; printf "%6d samples\n", all }' \
      | sort -rn | head -16
    echo
  done
  exit 0
fi
rounds=${1:-3}
sizes=${2:-1,8,64,1024,4096,8192}
jar=$(braid_jar)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -o "$out/msg-rate-floor" bench/msg-rate-floor.c
java -Xmx1g -cp "$jar" braid.bench.MessageRateBench cpu "$sizes"
java -Xmx1g -cp "$jar" braid.bench.MessageRateBench cpu "$sizes" threading=domain
for r in $(seq "$rounds"); do
  # CSV: benchmark,layer,transport,ranks,size,bandwidth_mb_s,messages_s
  bin/braid bench mbw_mr -p shm -S "$sizes" -W 64 --warmup 3 --format csv | awk -F, 'NR > 1 {print "rate", $5, $7}' >> "$out/braid.txt"
  "$out/msg-rate-floor" "$sizes" >> "$out/floor.txt"
done
best() { awk -v k="$1" '$1==k { if ($3 > b[$2]) b[$2] = $3 } END { for (s in b) print s, b[s] }' "$2" | sort -n; }
echo
printf "%-9s %14s %14s %7s\n" bytes braid-msgs/s floor-msgs/s ratio
join <(best rate "$out/braid.txt") <(best floor "$out/floor.txt") | sort -n \
  | awk '{printf "%-9s %14.0f %14.0f %7.2f\n", $1, $2, $3, ($3 > 0 ? $2 / $3 : 0)}'
