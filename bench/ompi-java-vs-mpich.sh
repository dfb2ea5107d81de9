#!/usr/bin/env bash
# Point-to-point latency (0 B - 1 MiB) and bandwidth (window of 64) between 2 ranks on this machine,
# the same loops three ways: package mpi (Open MPI's Java API over Braid, OmpiPingPong under
# mpiexec.mpich), braid.mpi itself (MpiPingPong, two JVMs on a file bootstrap), and MPICH's C
# (bench/mpi-pingpong.c under mpiexec.mpich); printed side by side with the facade's ratios.
# Usage: bench/ompi-java-vs-mpich.sh [direct|array]   (array: the latency loop passes byte[]s)
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
mode="${1:-direct}"
mvn -q -B -Dkotlin.compiler.daemon=false -pl mpi-shim -am test-compile org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath -Dmdep.outputFile="$PWD/mpi-shim/target/bench-classpath.txt" -Dmdep.includeScope=test
CP="mpi-shim/target/classes:mpi-shim/target/test-classes:$(cat mpi-shim/target/bench-classpath.txt)"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export BRAID_MPI_SPIN_POLLS="${BRAID_MPI_SPIN_POLLS:-2000000000}"

mpicc.mpich -O2 -o "$out/mpi-pingpong" bench/mpi-pingpong.c
mpiexec.mpich -n 2 "$out/mpi-pingpong" > "$out/mpich.txt"
mpiexec.mpich -n 2 java -Xmx1g -cp "$CP" braid.mpi.ompi.bench.OmpiPingPong "$mode" > "$out/facade.txt"
mkdir "$out/boot"
java -Xmx1g -cp "$CP" braid.mpi.bench.MpiPingPong "$out/boot" 1 > "$out/braid1.txt" 2>&1 &
peer=$!
java -Xmx1g -cp "$CP" braid.mpi.bench.MpiPingPong "$out/boot" 0 > "$out/braid.txt"
wait $peer

table() { # $1: lat or bw
  join -j 1 <(awk -v k="$1" '$1==k{print $2, $3}' "$out/facade.txt" | sort -k1,1) \
    <(awk -v k="$1" '$1==k{print $2, $3}' "$out/braid.txt" | sort -k1,1) \
    | join -j 1 - <(awk -v k="$1" '$1==k{print $2, $3}' "$out/mpich.txt" | sort -k1,1) | sort -n \
    | awk '{printf "%-9s %10s %10s %10s %12.2f %12.2f\n", $1, $2, $3, $4, ($3 > 0 ? $2 / $3 : 0), ($4 > 0 ? $2 / $4 : 0)}'
}
echo "latency (usec, half round trip), package mpi ($mode) vs braid.mpi vs MPICH C"
printf "%-9s %10s %10s %10s %12s %12s\n" bytes mpi braid.mpi mpich mpi/braid mpi/mpich
table lat
echo
echo "bandwidth (MB/s, window 64)"
printf "%-9s %10s %10s %10s %12s %12s\n" bytes mpi braid.mpi mpich mpi/braid mpi/mpich
table bw
