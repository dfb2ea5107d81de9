#!/usr/bin/env bash
# Braid against the tools people trust, in one run on this machine, on the same sizes, interleaved:
#   rails: `braid demo -p shm|tcp` (fi_pingpong's protocol and table) against `fi_pingpong -p shm|tcp -e rdm`
#          (usec/xfer and MB/sec of the same runs);
#   MPI:   `braid bench NAME --layer mpi` against bench/osu-mpich.c, the same OSU loops in C built with
#          mpicc.mpich and run under mpiexec.mpich -n 2 (latency, bw, mbw_mr message rate, allreduce,
#          bcast, barrier; more with NAMES).
# Each round runs every case once per tool, the tools taking turns (Braid first in odd rounds, the
# anchor first in even ones); round 0 is a warm-up that is thrown away, and every braid bench run first
# warms its JIT up for WARMUP seconds (10). On a 2-core VM the latency lands on one of two levels per
# launch, so the table gives, per case and size, each tool's best row and its median over the rounds
# and their ratio as Braid's cost over the anchor's (latency: braid/anchor; bandwidth and rate:
# anchor/braid; 1.00 is parity, above is slower). Writes OUT/side-by-side.txt (the table),
# OUT/side-by-side.png (the median ratios against size, one line per case) and OUT/raw.txt.
# Needs: the README's build (mvn -q -B package -DskipTests; built here with the Kotlin daemon off if
# samples/target/braid.jar is missing), fi_pingpong (apt-get install libfabric-bin), mpicc.mpich and
# mpiexec.mpich (apt-get install mpich). Runs offline.
# Usage: bench/side-by-side.sh [ROUNDS] [OUT]     (defaults: 3, bench/out)
#   env: WARMUP=seconds, NAMES="latency bw ..." (the MPI cases; empty: none), RAILS="shm tcp" (empty: none),
#        RAIL_SIZES=64,4k,64k,1m (SMALL_ITERS=20000 up to 64k, LARGE_ITERS=2000 above)  P2P_SIZES=1,64,4096,65536,1048576  COLL_SIZES=8,1024,65536
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
rounds=${1:-3}
out=${2:-bench/out}
warmup=${WARMUP:-10}
names=${NAMES-latency bw mbw_mr allreduce bcast barrier}
rails=${RAILS-shm tcp}
rail_sizes=${RAIL_SIZES:-64,4k,64k,1m}
p2p_sizes=${P2P_SIZES:-1,64,4096,65536,1048576}
coll_sizes=${COLL_SIZES:-8,1024,65536}
mkdir -p "$out"
raw="$out/raw.txt"
: > "$raw"
export BRAID_TCP_IFACE=lo FI_TCP_IFACE=lo
# MPICH polls without ever sleeping; so do braid.mpi's waits here.
export BRAID_MPI_SPIN_POLLS="${BRAID_MPI_SPIN_POLLS:-2000000000}"

for tool in fi_pingpong mpicc.mpich mpiexec.mpich; do
  command -v "$tool" >/dev/null || { echo "side-by-side: $tool is missing (apt-get install libfabric-bin mpich)" >&2; exit 1; }
done
if [[ ! -f samples/target/braid.jar ]]; then
  # Without the Kotlin daemon: a daemon left behind by the build would take a core from the runs.
  mvn -o -q -B -Dkotlin.compiler.daemon=false package -DskipTests
fi
if pgrep -f KotlinCompileDaemon >/dev/null; then
  echo "side-by-side: a Kotlin compile daemon is running and takes a core from these runs; stop it first (pkill -f KotlinCompileDaemon)" >&2
fi
mpicc.mpich -O2 -o "$out/osu-mpich" bench/osu-mpich.c

bytes() { # 64 4k 1m -> bytes
  local s=${1,,}
  case $s in *k) echo $((${s%k} * 1024)) ;; *m) echo $((${s%m} * 1048576)) ;; *) echo "$s" ;; esac
}

# fi_pingpong's table (braid demo prints the same): size MB/sec usec/xfer per line.
pingpong_rows() { awk '$1 ~ /^[0-9]+[kmg]?$/ && NF >= 8 {print $1, $6, $7}'; }

record() { # tool rail round: fi_pingpong rows on stdin -> raw lines
  pingpong_rows | while read -r s mb us; do
    echo "$2-pingpong-usec $1 $3 $(bytes "$s") $us"
    echo "$2-pingpong-MB/s $1 $3 $(bytes "$s") $mb"
  done >> "$raw"
}

iters_of() { local b; b=$(bytes "$1"); if ((b <= 65536)); then echo "${SMALL_ITERS:-20000}"; else echo "${LARGE_ITERS:-2000}"; fi; }

rail_braid() { # rail round: one launch per size, as for fi_pingpong
  for s in ${rail_sizes//,/ }; do
    bin/braid demo -p "$1" -S "$(bytes "$s")" -I "$(iters_of "$s")" | record braid "$1" "$2"
  done
}

rail_anchor() { # rail round: fi_pingpong takes one size per launch
  for s in ${rail_sizes//,/ }; do
    local port=$((20000 + RANDOM % 20000))
    fi_pingpong -p "$1" -e rdm -S "$(bytes "$s")" -I "$(iters_of "$s")" -B "$port" > "$out/fi_pingpong-server.txt" 2>&1 &
    local server=$!
    sleep 1
    fi_pingpong -p "$1" -e rdm -S "$(bytes "$s")" -I "$(iters_of "$s")" -P "$port" 127.0.0.1 | record fi_pingpong "$1" "$2"
    wait "$server"
  done
}

sizes_of() { case $1 in allreduce | reduce | bcast | allgather | alltoall) echo "$coll_sizes" ;; barrier) echo 0 ;; *) echo "$p2p_sizes" ;; esac; }

mpi_braid() { # name round
  bin/braid bench "$1" --layer mpi -S "$(sizes_of "$1")" --warmup "$warmup" --format csv |
    awk -F, -v n="$1" -v r="$2" 'NR > 1 {print n "-" (n == "mbw_mr" ? "msgs/s" : (n == "bw" ? "MB/s" : "usec")), "braid", r, $5, (n == "mbw_mr" ? $7 : $6)}' >> "$raw"
}

mpi_anchor() { # name round
  mpiexec.mpich -n 2 "$out/osu-mpich" "$1" "$(sizes_of "$1")" 0 "" 64 |
    awk -v n="$1" -v r="$2" '{print n "-" (n == "mbw_mr" ? "msgs/s" : (n == "bw" ? "MB/s" : "usec")), "mpich", r, $1, (n == "mbw_mr" ? $3 : $2)}' >> "$raw"
}

for r in $(seq 0 "$rounds"); do
  if ((r == 0)); then echo "side-by-side: round 0 (warm-up, thrown away)" >&2; else echo "side-by-side: round $r of $rounds" >&2; fi
  for rail in $rails; do
    if ((r % 2)); then rail_braid "$rail" "$r"; rail_anchor "$rail" "$r"; else rail_anchor "$rail" "$r"; rail_braid "$rail" "$r"; fi
  done
  for name in $names; do
    if ((r % 2)); then mpi_braid "$name" "$r"; mpi_anchor "$name" "$r"; else mpi_anchor "$name" "$r"; mpi_braid "$name" "$r"; fi
  done
done

# Best and median per case, tool and size (round 0 left out), then Braid's cost over the anchor's.
table="$out/side-by-side.txt"
awk '$3 > 0 {k = $1 SUBSEP $2 SUBSEP $4; v[k] = v[k] " " $5; cases[$1] = 1; sizes[$1 SUBSEP $4] = $4; tools[$1 SUBSEP $2] = 1}
  function stat(list, which,   a, n, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    if (which == "min") return a[1]; if (which == "max") return a[n]
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  END {
    printf "# Braid against its anchors: best row and median of each over the rounds; cost = Braid over anchor (1.00 parity, above slower)\n"
    printf "%-22s %9s %12s %12s %7s %12s %12s %7s  %s\n", "case", "bytes", "braid best", "anchor best", "cost", "braid med", "anchor med", "cost", "anchor"
    for (ks in sizes) {
      split(ks, p, SUBSEP); c = p[1]; s = p[2]
      anchor = ((c SUBSEP "mpich") in tools) ? "mpich" : "fi_pingpong"
      b = v[c SUBSEP "braid" SUBSEP s]; a = v[c SUBSEP anchor SUBSEP s]
      if (b == "" || a == "") continue
      lower = (c ~ /usec$/)
      bb = stat(b, lower ? "min" : "max"); ab = stat(a, lower ? "min" : "max"); bm = stat(b, "med"); am = stat(a, "med")
      cb = lower ? (ab > 0 ? bb / ab : 0) : (bb > 0 ? ab / bb : 0)
      cm = lower ? (am > 0 ? bm / am : 0) : (bm > 0 ? am / bm : 0)
      printf "%-22s %9d %12.2f %12.2f %7.3g %12.2f %12.2f %7.3g  %s\n", c, s, bb, ab, cb, bm, am, cm, anchor
    }
  }' "$raw" | { read -r title; read -r header; echo "$title"; echo "$header"; sort -k1,1 -k2,2n; } > "$table"
cat "$table"

# One plot: the median cost against size, one line per case (the barrier has no size: left out).
plot_table="$out/plot-table.txt"
awk 'NR > 2 && $2 > 0 {cost[$1, $2] = $8; cs[$1] = 1; ss[$2] = 1}
  END {
    printf "size"; for (c in cs) printf " %s", c; printf "\n"
    for (s in ss) { printf "%s", s; for (c in cs) printf " %s", ((c, s) in cost ? cost[c, s] : "-"); printf "\n" }
  }' "$table" > "$plot_table"
java -cp samples/target/braid.jar braid.samples.bench.BenchPlot "$out/side-by-side.png" \
  "Braid's cost over fi_pingpong and MPICH (median over $rounds round(s))" "cost (1 = parity, above = slower)" "$plot_table"
echo "side-by-side: wrote $table and $out/side-by-side.png" >&2
