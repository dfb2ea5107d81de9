#!/usr/bin/env bash
# The link's same-host overhead at 64 B as quantiles: this machine's latency jumps between two
# levels from one launch to the next (a 2-core VM), so single rows of bench/link-overhead.sh
# mostly show which level a launch got. Here each launch prints several timed rows
# (-S 64,64,64,64,64), -p shm and -p link alternate, ROUNDS times, and the 10th, 25th and 50th
# percentiles of each path's one-way latency are compared. Needs: mvn -q -B package -DskipTests.
# Usage: bench/link-quantiles.sh [ROUNDS] [ITERS]
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
rounds=${1:-6}
iters=${2:-100000}
export BRAID_TCP_IFACE=lo BRAID_LINKS=shm+tcp:lo BRAID_HOST_ID=bench
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
for r in $(seq "$rounds"); do
  for path in shm link; do
    port=$((20000 + RANDOM % 20000))
    bin/braid pingpong -p "$path" -I "$iters" -S 64,64,64,64,64 -B "$port" > /dev/null 2>&1 &
    server=$!
    sleep 1
    bin/braid pingpong -p "$path" -I "$iters" -S 64,64,64,64,64 -P "$port" 127.0.0.1 | grep -v '^#' | tail -n +2 | awk -v p="$path" '{ print p, $7 }' >> "$rows"
    wait "$server"
  done
done
quantiles() { # PATH -> "p10 p25 p50"
  grep "^$1 " "$rows" | awk '{ print $2 }' | sort -g | awk '{ v[NR] = $1 }
    function q(p,  i, lo) { i = (NR - 1) * p + 1; lo = int(i); return v[lo] + (v[lo + (lo < NR)] - v[lo]) * (i - lo) }
    END { printf "%.3f %.3f %.3f", q(0.10), q(0.25), q(0.50) }'
}
read -r s10 s25 s50 <<< "$(quantiles shm)"
read -r l10 l25 l50 <<< "$(quantiles link)"
echo "usec/xfer at 64 B, $((rounds * 5)) timed runs of $iters round trips per path"
echo "path     p10     p25     median"
printf "shm      %-7s %-7s %s\n" "$s10" "$s25" "$s50"
printf "link     %-7s %-7s %s\n" "$l10" "$l25" "$l50"
awk -v a="$l10" -v b="$s10" -v c="$l25" -v d="$s25" -v e="$l50" -v f="$s50" 'BEGIN { printf "link/shm %.2f    %.2f    %.2f\n", a / b, c / d, e / f }'
