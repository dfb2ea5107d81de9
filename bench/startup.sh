#!/usr/bin/env bash
# Startup time of a job: from the launcher's start to every rank having received its first
# message (HelloJob: bootstrap, open an shm endpoint, publish and fetch addresses, one message
# around the ring), at 2 and 8 ranks, under 'braid run' and under MPICH's Hydra (mpiexec.mpich).
# Each cell is ROUNDS launches; the table shows the median and the slowest of the per-job times
# (a job's time: its slowest rank's first message). Needs: mvn -q -B package -DskipTests.
# Usage: bench/startup.sh [ROUNDS] [RANKS...]
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
rounds=${1:-5}
shift || true
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(2 8)
jar=samples/target/braid.jar
[ -f "$jar" ] || { echo "startup.sh: $jar is missing; run: mvn -q -B package -DskipTests" >&2; exit 1; }
java=${JAVA_HOME:+$JAVA_HOME/bin/}java
rank_cmd=("$java" -Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$jar" braid.samples.HelloJob)

one() { # launcher ranks -> ms of the job (slowest rank's first message)
  local launcher=$1 n=$2 out t0
  t0=$(date +%s%3N)
  case "$launcher" in
    "braid run") out=$(BRAID_STARTUP_T0=$t0 bin/braid run -n "$n" "${rank_cmd[@]}") ;;
    mpiexec) out=$(BRAID_STARTUP_T0=$t0 mpiexec.mpich -n "$n" "${rank_cmd[@]}") ;;
  esac
  local got
  got=$(grep -c 'startup-ms' <<<"$out" || true)
  [ "$got" -eq "$n" ] || { echo "startup.sh: $launcher -n $n: $got of $n ranks reported:" >&2; echo "$out" >&2; exit 1; }
  grep -o 'startup-ms [0-9]* [0-9]*' <<<"$out" | awk '{print $3}' | sort -n | tail -1
}

printf '%-10s %6s %10s %10s %s\n' launcher ranks median_ms max_ms "runs(ms)"
for launcher in "braid run" mpiexec; do
  if [ "$launcher" = mpiexec ] && ! command -v mpiexec.mpich >/dev/null; then
    echo "mpiexec.mpich not installed: skipped"; continue
  fi
  for n in "${ranks[@]}"; do
    times=()
    for _ in $(seq "$rounds"); do times+=("$(one "$launcher" "$n")"); done
    sorted=$(printf '%s\n' "${times[@]}" | sort -n)
    median=$(sed -n "$(( (rounds + 1) / 2 ))p" <<<"$sorted")
    max=$(tail -1 <<<"$sorted")
    printf '%-10s %6s %10s %10s %s\n' "$launcher" "$n" "$median" "$max" "${times[*]}"
  done
done
