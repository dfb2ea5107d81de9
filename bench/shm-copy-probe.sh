#!/usr/bin/env bash
# process_vm_readv pulls against fragments streamed through a ring (two processes, window of 64
# distinct buffers), 64 KiB to 4 MiB, at a few fragment sizes with a 2 MiB ring: where
# shm.pull_size and shm.frag_size belong on this machine. Best of ROUNDS (default 20); run it on a
# quiet machine (a two-process stream needs both cores at once, a pull only one).
# Usage: bench/shm-copy-probe.sh [ROUNDS]
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -o "$out/probe" shm-copy-probe.c
rounds=${1:-20}
for size in 65536 262144 1048576 4194304; do
  for frag in 16384 65536 262144; do
    (( frag > size )) && continue
    reps=$(( (64 << 20) / (size * 64) )); (( reps < 1 )) && reps=1
    "$out/probe" "$size" "$frag" $(( (2 << 20) / frag )) "$reps" "$rounds"
  done
done
