#!/usr/bin/env bash
# One-sided latency (put, get, accumulate: 8 B - 1 MiB; fetch-and-op) and put bandwidth (64 puts per
# flush) between 2 ranks on this machine, passive target (lock, op, flush): braid.mpi's Window over
# shm (two JVMs, file bootstrap) against MPICH's C (mpicc.mpich, mpiexec.mpich -n 2), the same loops
# (bench/mpi-rma.c, OSU's shapes), printed side by side with the ratio braid.mpi / MPICH.
# Usage: bench/rma-vs-mpich.sh        (BRAID_MPI_PROVIDER=link|tcp to measure another rail)
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
CP=$(braid_jar)   # samples/target/braid.jar, built offline if missing
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export BRAID_TCP_IFACE=lo FI_TCP_IFACE=lo
# MPICH polls without ever sleeping; so do braid.mpi's waits here unless told otherwise.
export BRAID_MPI_SPIN_POLLS="${BRAID_MPI_SPIN_POLLS:-2000000000}"

mpicc.mpich -O2 -o "$out/mpi-rma" bench/mpi-rma.c
mpiexec.mpich -n 2 "$out/mpi-rma" > "$out/mpich.txt"

mkdir "$out/boot"
java -Xmx1g -cp "$CP" braid.mpi.bench.MpiRmaBench "$out/boot" 1 > "$out/braid1.txt" 2>&1 &
peer=$!
java -Xmx1g -cp "$CP" braid.mpi.bench.MpiRmaBench "$out/boot" 0 > "$out/braid.txt"
wait $peer

for kind in put get acc putbw fop; do
  case $kind in putbw) unit="MB/s, 64 puts per flush";; *) unit="usec per op + flush";; esac
  echo "$kind ($unit)"
  printf "%-9s %10s %10s %7s\n" bytes braid.mpi mpich ratio
  join -j 1 <(awk -v k=$kind '$1==k{print $2, $3}' "$out/braid.txt" | sort -k1,1) <(awk -v k=$kind '$1==k{print $2, $3}' "$out/mpich.txt" | sort -k1,1) \
    | sort -n | awk '{printf "%-9s %10s %10s %7.2f\n", $1, $2, $3, ($3 > 0 ? $2 / $3 : 0)}'
  echo
done
