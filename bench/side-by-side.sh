#!/usr/bin/env bash
# Braid against the tools people trust, in one run on this machine, on the same sizes, interleaved:
#   rails: `braid demo -p RAIL` (fi_pingpong's protocol and table) against `fi_pingpong -p RAIL -e rdm`
#          (usec/xfer and MB/sec of the same runs); RAIL shm, tcp, or the native rail ofi:tcp, ofi:shm
#          (braid -p ofi:tcp:lo, ofi:shm against fi_pingpong -p tcp, shm);
#   MPI:   `braid bench NAME --layer LAYER` (braid.mpi, and package mpi, Open MPI's Java API) against
#          bench/osu-mpich.c, the same OSU loops in C built with mpicc.mpich and run under mpiexec.mpich
#          (latency, bw, mbw_mr message rate, allreduce, bcast, barrier, put_latency, get_latency,
#          put_bw, fop_latency; more with NAMES); the collectives on each of COLL_RANKS process counts.
# Each round runs every case once per tool, the tools taking turns (Braid first in odd rounds, the
# anchor first in even ones); round 0 is a warm-up that is thrown away, and every braid bench run first
# warms its JIT up for WARMUP seconds (10); braid demo warms up until the JIT is quiet, over the control
# connection, or on the native rail (whose fi_pingpong protocol has no room for that) each side alone on
# endpoints that send to themselves, before the control connection (0.2 to 5 s). On a 2-core VM the latency lands on one of two levels per
# launch, so the table gives, per case and size, each tool's best row and its median over the rounds
# and their ratio as Braid's cost over the anchor's (latency: braid/anchor; bandwidth and rate:
# anchor/braid; 1.00 is parity, above is slower). Writes OUT/side-by-side.txt (the table),
# OUT/side-by-side.png (the median ratios against size, one line per case), one plot per case
# (OUT/plots/CASE.png: both tools' medians against size) and OUT/raw.txt.
# --quick: one round after the warm-up round, 2 s of JIT warm-up, fewer cases and sizes: about 3
# minutes on 2 cores (rails: shm; MPI: latency, bw, allreduce and put_latency at both layers).
# The run prints its estimated duration first (everything, three rounds: about 40 minutes on a quiet
# 2-core machine), then one progress line per step. A step that fails or outlives STEP_TIMEOUT
# seconds (600) is noted in OUT/failures.txt and the run goes on; the tables and plots are written
# from what ran, and the exit status is 1 if any step failed.
# Needs: the README's build (mvn -q -B package -DskipTests; built here with the Kotlin daemon off if
# samples/target/braid.jar is missing), fi_pingpong (apt-get install libfabric-bin), mpicc.mpich and
# mpiexec.mpich (apt-get install mpich). Runs offline: nothing is downloaded.
# Usage: bench/side-by-side.sh [--quick] [ROUNDS] [OUT]     (defaults: 3, bench/out)
#   e.g. bench/side-by-side.sh --quick docs/bench           (the committed tables and plots)
#   env: WARMUP=seconds, NAMES="latency bw ..." (the MPI cases; empty: none), LAYERS="mpi java-mpi",
#        RAILS="shm tcp" (empty: none; add ofi:tcp ofi:shm for the native rail), COLL_RANKS="2 4",
#        RAIL_SIZES=64,4k,64k,1m (SMALL_ITERS=20000 up to 64k, LARGE_ITERS=2000 above)
#        P2P_SIZES=1,64,4096,65536,1048576  COLL_SIZES=8,1024,65536  RMA_SIZES=8,4096,65536
#        STEP_TIMEOUT=600 (seconds one launch may take)
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
quick=0
if [[ ${1:-} == --quick ]]; then quick=1; shift; fi
if ((quick)); then
  # A round count may still be given; an OUT alone is taken as OUT.
  if [[ $# -eq 1 && ! $1 =~ ^[0-9]+$ ]]; then set -- 1 "$1"; fi
  rounds=${1:-1}
  warmup=${WARMUP:-2}
  names=${NAMES-latency bw allreduce put_latency}
  rails=${RAILS-shm}
  coll_ranks=${COLL_RANKS:-2}
  rail_sizes=${RAIL_SIZES:-64,64k}
  p2p_sizes=${P2P_SIZES:-8,4096,65536}
  coll_sizes=${COLL_SIZES:-8,4096}
  rma_sizes=${RMA_SIZES:-8,4096}
  export SMALL_ITERS=${SMALL_ITERS:-5000} LARGE_ITERS=${LARGE_ITERS:-500}
else
  rounds=${1:-3}
  warmup=${WARMUP:-10}
  names=${NAMES-latency bw mbw_mr allreduce bcast barrier put_latency get_latency put_bw fop_latency}
  rails=${RAILS-shm tcp}
  coll_ranks=${COLL_RANKS:-2 4}
  rail_sizes=${RAIL_SIZES:-64,4k,64k,1m}
  p2p_sizes=${P2P_SIZES:-1,64,4096,65536,1048576}
  coll_sizes=${COLL_SIZES:-8,1024,65536}
  rma_sizes=${RMA_SIZES:-8,4096,65536}
fi
out=${2:-bench/out}
layers=${LAYERS-mpi java-mpi}
mkdir -p "$out"
work=$(mktemp -d) # the C anchor's binary and the scratch files, kept out of OUT
trap 'rm -rf "$work"' EXIT
raw="$out/raw.txt"
: > "$raw"
failures="$out/failures.txt"
rm -f "$failures"
step_timeout=${STEP_TIMEOUT:-600}
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
mpicc.mpich -O2 -Wno-stringop-overflow -o "$work/osu-mpich" bench/osu-mpich.c

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

braid_rail() { case $1 in ofi:tcp) echo ofi:tcp:lo ;; *) echo "$1" ;; esac; } # -p for braid
fi_rail() { echo "${1#ofi:}"; }                                                   # -p for fi_pingpong

step_no=0
started=$SECONDS
progress() { # what: one line per step, with how far the run is
  step_no=$((step_no + 1))
  local t=$((SECONDS - started))
  printf 'side-by-side: [%d/%d] %02d:%02d %s\n' "$step_no" "$steps" $((t / 60)) $((t % 60)) "$1" >&2
}

fail() { # what rc errfile: notes a failed step in OUT/failures.txt; the run goes on without its rows
  local why="exit $2"
  (($2 == 124 || $2 == 137)) && why="timed out after ${step_timeout}s"
  { echo "$1: $why"; head -n 6 "$3" 2>/dev/null | sed 's/^/    /'; } >> "$failures"
  echo "side-by-side: FAILED ($why): $1; going on without it" >&2
}

# step WHAT CMD...: runs CMD within STEP_TIMEOUT, its stdout to $work/step.txt; false (and noted) if it failed.
step() {
  local what=$1 rc=0
  shift
  timeout --kill-after=10 "$step_timeout" "$@" > "$work/step.txt" 2> "$work/step.err" || rc=$?
  ((rc == 0)) || fail "$what" "$rc" "$work/step.err"
  return "$rc"
}

rail_braid() { # rail round: one launch per size, as for fi_pingpong
  for s in ${rail_sizes//,/ }; do
    progress "round $2: braid demo -p $(braid_rail "$1") -S $s"
    if step "round $2: braid demo -p $(braid_rail "$1") -S $s" \
      bin/braid demo -p "$(braid_rail "$1")" -S "$(bytes "$s")" -I "$(iters_of "$s")"; then
      record braid "$1" "$2" < "$work/step.txt"
    fi
  done
}

listening() { # port: true once something listens on it (at most 10 s)
  local i
  for i in $(seq 50); do
    [[ -n $(ss -Hltn "sport = :$1" 2>/dev/null) ]] && return 0
    sleep 0.2
  done
  return 1
}

rail_anchor() { # rail round: fi_pingpong takes one size per launch; a second try on another port
  local s try port server rc what
  for s in ${rail_sizes//,/ }; do
    what="round $2: fi_pingpong -p $(fi_rail "$1") -S $s"
    progress "$what"
    for try in 1 2; do
      port=$((20000 + RANDOM % 20000))
      timeout --kill-after=10 "$step_timeout" fi_pingpong -p "$(fi_rail "$1")" -e rdm -S "$(bytes "$s")" \
        -I "$(iters_of "$s")" -B "$port" > "$work/fi_pingpong-server.txt" 2>&1 &
      server=$!
      listening "$port" || true
      rc=0
      timeout --kill-after=10 "$step_timeout" fi_pingpong -p "$(fi_rail "$1")" -e rdm -S "$(bytes "$s")" \
        -I "$(iters_of "$s")" -P "$port" 127.0.0.1 > "$work/step.txt" 2> "$work/step.err" || rc=$?
      if ((rc == 0)); then
        wait "$server" || true
        record fi_pingpong "$1" "$2" < "$work/step.txt"
        break
      fi
      kill "$server" 2>/dev/null || true
      wait "$server" 2>/dev/null || true
      cat "$work/fi_pingpong-server.txt" >> "$work/step.err"
      if ((try == 2)); then fail "$what" "$rc" "$work/step.err"; fi
    done
  done
}

sizes_of() {
  case $1 in
    allreduce | reduce | bcast | allgather | alltoall) echo "$coll_sizes" ;;
    barrier) echo 0 ;;
    fop_latency) echo 8 ;;
    put_latency | get_latency | put_bw) echo "$rma_sizes" ;;
    *) echo "$p2p_sizes" ;;
  esac
}
collective() { case $1 in allreduce | reduce | bcast | allgather | alltoall | barrier) return 0 ;; *) return 1 ;; esac; }
unit_of() { case $1 in mbw_mr) echo msgs/s ;; bw | bibw | put_bw) echo MB/s ;; *) echo usec ;; esac; }
# The case's name in the table: NAME[-nRANKS for collectives on more than 2][@java-mpi]-UNIT.
case_of() { # name ranks layer
  local c=$1
  if collective "$1" && (($2 != 2)); then c="$c-n$2"; fi
  [[ $3 == mpi ]] || c="$c@$3"
  echo "$c-$(unit_of "$1")"
}

mpi_braid() { # name ranks layer round
  local what="round $4: braid bench $1 --layer $3 -n $2"
  progress "$what"
  step "$what" bin/braid bench "$1" --layer "$3" -n "$2" -S "$(sizes_of "$1")" --warmup "$warmup" --format csv ||
    return 0
  awk -F, -v c="$(case_of "$1" "$2" "$3")" -v mr="$([[ $1 == mbw_mr ]] && echo 1 || echo 0)" -v r="$4" \
    'NR > 1 {print c, "braid", r, $5, (mr ? $7 : $6)}' "$work/step.txt" >> "$raw"
}

mpi_anchor() { # name ranks round: one MPICH run, recorded under every layer's case
  local rows what="round $3: mpiexec.mpich -n $2 osu-mpich $1"
  progress "$what"
  step "$what" mpiexec.mpich -n "$2" "$work/osu-mpich" "$1" "$(sizes_of "$1")" 0 "" 64 || return 0
  rows=$(cat "$work/step.txt")
  for layer in $layers; do
    awk -v c="$(case_of "$1" "$2" "$layer")" -v mr="$([[ $1 == mbw_mr ]] && echo 1 || echo 0)" -v r="$3" \
      '{print c, "mpich", r, $1, (mr ? $3 : $2)}' <<< "$rows" >> "$raw"
  done
}

mpi_case() { # name ranks round: both tools, taking turns
  if (($3 % 2)); then
    for layer in $layers; do mpi_braid "$1" "$2" "$layer" "$3"; done
    mpi_anchor "$1" "$2" "$3"
  else
    mpi_anchor "$1" "$2" "$3"
    for layer in $layers; do mpi_braid "$1" "$2" "$layer" "$3"; done
  fi
}

# The steps, and what they take on a quiet 2-core machine (measured per launch; the JIT warm-up of
# every braid bench run included), for the estimate printed before the first.
n_rails=$(wc -w <<< "$rails")
n_rail_sizes=$(wc -w <<< "${rail_sizes//,/ }")
n_layers=$(wc -w <<< "$layers")
n_cases=0
n_coll4=0 # collectives on more than 2 ranks: on 2 cores each rank has half a core, and the runs are slower
for name in $names; do
  if collective "$name"; then
    for n in $coll_ranks; do
      n_cases=$((n_cases + 1))
      ((n > 2)) && n_coll4=$((n_coll4 + 1))
    done
  else
    n_cases=$((n_cases + 1))
  fi
done
((n_layers > 0)) || { n_cases=0; n_coll4=0; }
steps=$(((rounds + 1) * (n_rails * n_rail_sizes * 2 + n_cases * (n_layers + 1))))
per_round=$((n_rails * n_rail_sizes * (4 + 2) + n_cases * (n_layers * (5 + warmup) + 2) + n_coll4 * (n_layers + 1) * 10))
estimate=$(((rounds + 1) * per_round + 20))
echo "side-by-side: $((rounds + 1)) rounds (round 0 a warm-up), $steps steps; about $(((estimate + 59) / 60)) minutes on a quiet 2-core machine" >&2

for r in $(seq 0 "$rounds"); do
  if ((r == 0)); then echo "side-by-side: round 0 (warm-up, thrown away)" >&2; else echo "side-by-side: round $r of $rounds" >&2; fi
  for rail in $rails; do
    if ((r % 2)); then rail_braid "$rail" "$r"; rail_anchor "$rail" "$r"; else rail_anchor "$rail" "$r"; rail_braid "$rail" "$r"; fi
  done
  [[ -n $layers ]] || continue
  for name in $names; do
    if collective "$name"; then
      for n in $coll_ranks; do mpi_case "$name" "$n" "$r"; done
    else
      mpi_case "$name" 2 "$r"
    fi
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
plot_table="$work/plot-table.txt"
awk 'NR > 2 && $2 > 0 {cost[$1, $2] = $8; cs[$1] = 1; ss[$2] = 1}
  END {
    printf "size"; for (c in cs) printf " %s", c; printf "\n"
    for (s in ss) { printf "%s", s; for (c in cs) printf " %s", ((c, s) in cost ? cost[c, s] : "-"); printf "\n" }
  }' "$table" > "$plot_table"
java -cp samples/target/braid.jar braid.samples.bench.BenchPlot "$out/side-by-side.png" \
  "Braid's cost over fi_pingpong and MPICH (median over $rounds round(s))" "cost (1 = parity, above = slower)" \
  "$plot_table" 2> "$work/plot.err" || fail "the plot of the costs" $? "$work/plot.err"
# One plot per case: each tool's median against size (log axes).
mkdir -p "$out/plots"
rm -f "$out"/plots/*.png
awk 'NR > 2 && $2 > 0 {print $1}' "$table" | sort -u | while read -r c; do
  file=${c//\//_} # bw-MB/s -> bw-MB_s
  awk -v c="$c" 'NR > 2 && $1 == c && $2 > 0 {if (!h++) printf "size braid %s\n", $9; printf "%s %s %s\n", $2, $6, $7}' "$table" > "$work/$file.txt"
  java -cp samples/target/braid.jar braid.samples.bench.BenchPlot "$out/plots/$file.png" \
    "$c: Braid and its anchor (median over $rounds round(s))" "${c##*-}" "$work/$file.txt" 2> "$work/plot.err" ||
    fail "the plot of $c" $? "$work/plot.err"
done
t=$((SECONDS - started))
echo "side-by-side: wrote $table, $out/side-by-side.png and $out/plots/ in $((t / 60)) min $((t % 60)) s" >&2
if [[ -s $failures ]]; then
  echo "side-by-side: some steps failed (their rows are missing from the table); $failures:" >&2
  cat "$failures" >&2
  exit 1
fi
