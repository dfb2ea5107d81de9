#!/usr/bin/env bash
# Small-message latency of the mpi package (Open MPI's Java API) and braid.mpi against MPICH's C,
# two ranks on this machine, compared level for level. This VM's two vCPUs move between host cores:
# a cache line crosses between them in ~55 ns some of the time and ~260 ns the rest, for seconds to
# minutes at a stretch, and every ping-pong lands on one level for a whole launch. So each launch
# (MPICH's bench/osu-mpich.c under mpiexec.mpich; braid bench --layer java-mpi and --layer mpi, warmed
# for WARMUP s) runs between two probes of bench/core-level.c, and counts for a level only when the
# probes before and after it agree. Prints every launch, then per level the best mean of each and its
# ratio to MPICH's.
# Usage: bench/mpi-latency.sh [ROUNDS] [SIZES]    (defaults 5 and 8,64; WARMUP=10)
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
rounds=${1:-5}
sizes=${2:-8,64}
warmup=${WARMUP:-10}
braid_jar > /dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export IPATH_NO_BACKTRACE=1 BRAID_TCP_IFACE=lo FI_TCP_IFACE=lo
gcc -O2 -o "$out/core-level" bench/core-level.c
mpicc.mpich -O2 -o "$out/osu" bench/osu-mpich.c 2> /dev/null

level() { "$out/core-level" | awk '{print $2}'; }

# One launch of $1 (mpich, java-mpi or mpi); prints "TOOL LEVEL SIZE MEAN" per size.
launch() {
  local tool=$1 before after rows
  before=$(level)
  if [[ $tool == mpich ]]; then
    rows=$(mpiexec.mpich -n 2 "$out/osu" latency "$sizes" 0 "" 64)
  else
    rows=$(bin/braid bench latency --layer "$tool" -n 2 -S "$sizes" --warmup "$warmup" --format csv 2> /dev/null \
      | awk -F, '$1=="latency"{print $5, $6}')
  fi
  after=$(level)
  local lv=$before
  [[ $before == "$after" ]] || lv="changed"
  awk -v t="$tool" -v l="$lv" '{print t, l, $1, $2}' <<< "$rows"
}

printf "%-6s %-9s %-8s %-8s %s\n" round tool level bytes "mean (us)"
for ((r = 1; r <= rounds; r++)); do
  for tool in mpich java-mpi mpi; do
    launch "$tool" | tee -a "$out/all.txt" | awk -v r="$r" '{printf "%-6s %-9s %-8s %-8s %s\n", r, $1, $2, $3, $4}'
  done
done

echo
echo "best mean per level (us), and its ratio to MPICH's on the same level"
printf "%-6s %-8s %10s %10s %10s %9s %9s\n" level bytes mpich java-mpi braid.mpi "java/C" "braid/C"
awk '$2=="fast"||$2=="slow" {k=$2" "$3" "$1; if (!(k in b) || $4 < b[k]) b[k]=$4; seen[$2" "$3]=1}
  END {
    for (s in seen) {
      split(s, p, " "); m=b[s" mpich"]; j=b[s" java-mpi"]; q=b[s" mpi"]
      printf "%-6s %-8s %10s %10s %10s %9s %9s\n", p[1], p[2], (m==""?"-":m), (j==""?"-":j), (q==""?"-":q),
        (m>0&&j>0?sprintf("%.2f", j/m):"-"), (m>0&&q>0?sprintf("%.2f", q/m):"-")
    }
  }' "$out/all.txt" | sort -k1,1 -k2,2n
