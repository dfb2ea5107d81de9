#!/usr/bin/env bash
# Point-to-point latency (0 B - 1 MiB), bandwidth (window of 64) and message rate (osu_mbw_mr's
# shape for one pair: the same windows, 1 B - 8 KiB, messages/s) between 2 ranks on this machine:
# braid.mpi over shm (two JVMs, file bootstrap) against MPICH's C (mpicc.mpich, mpiexec.mpich -n 2),
# the same loops, printed side by side.
# Usage: bench/mpi-vs-mpich.sh        (BRAID_MPI_PROVIDER=link|tcp to measure another rail)
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
CP=$(braid_jar)   # samples/target/braid.jar, built offline if missing
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export BRAID_TCP_IFACE=lo FI_TCP_IFACE=lo
# MPICH polls without ever sleeping; so do braid.mpi's waits here unless told otherwise.
export BRAID_MPI_SPIN_POLLS="${BRAID_MPI_SPIN_POLLS:-2000000000}"

mpicc.mpich -O2 -o "$out/mpi-pingpong" bench/mpi-pingpong.c
mpiexec.mpich -n 2 "$out/mpi-pingpong" > "$out/mpich.txt"

mkdir "$out/boot"
java -Xmx1g -cp "$CP" braid.mpi.bench.MpiPingPong "$out/boot" 1 > "$out/braid1.txt" 2>&1 &
peer=$!
java -Xmx1g -cp "$CP" braid.mpi.bench.MpiPingPong "$out/boot" 0 > "$out/braid.txt"
wait $peer

echo "latency (usec, half round trip)          bandwidth (MB/s, window 64)"
printf "%-9s %10s %10s %7s\n" bytes braid.mpi mpich ratio
join -j 1 <(awk '$1=="lat"{print $2, $3}' "$out/braid.txt" | sort -k1,1) <(awk '$1=="lat"{print $2, $3}' "$out/mpich.txt" | sort -k1,1) \
  | sort -n | awk '{printf "%-9s %10s %10s %7.2f\n", $1, $2, $3, ($3 > 0 ? $2 / $3 : 0)}'
echo
printf "%-9s %10s %10s %7s\n" bytes braid.mpi mpich ratio
join -j 1 <(awk '$1=="bw"{print $2, $3}' "$out/braid.txt" | sort -k1,1) <(awk '$1=="bw"{print $2, $3}' "$out/mpich.txt" | sort -k1,1) \
  | sort -n | awk '{printf "%-9s %10s %10s %7.2f\n", $1, $2, $3, ($3 > 0 ? $2 / $3 : 0)}'
echo
echo "message rate (messages/s, osu_mbw_mr's shape: 1 pair, window 64)"
printf "%-9s %10s %10s %7s\n" bytes braid.mpi mpich ratio
join -j 1 <(awk '$1=="mr"{print $2, $3}' "$out/braid.txt" | sort -k1,1) <(awk '$1=="mr"{print $2, $3}' "$out/mpich.txt" | sort -k1,1) \
  | sort -n | awk '{printf "%-9s %10s %10s %7.2f\n", $1, $2, $3, ($3 > 0 ? $2 / $3 : 0)}'
