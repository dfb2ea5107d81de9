#!/usr/bin/env bash
# Multi-rail links between two hosts: network namespaces, each with two veth NICs (braid0 on
# 10.88.1.0/24, braid1 on 10.88.2.0/24, each pair of NICs on a bridge of its own), every NIC
# rate-limited with tc tbf (tbf works on veth here; netem does not). braid pingpong, one after
# the other, ROUNDS times:
#   equal rails (both RATE Mbit/s): a link of one rail (tcp:braid0) against a link of two
#     (tcp:braid0+tcp:braid1, policy PER_PEER): 64 B one-way latency and 4 MiB bandwidth;
#   rails limited 2:1 (braid0 at 2*RATE/3, braid1 at RATE/3) with weights 2:1 (a topology file),
#     the two-rail link's 4 MiB bandwidth against the sum of the rates (RATE).
# PER_PEER pins each peer to one rail, so one pingpong pair rides one rail: these rows show the
# two-rail link's overhead, and its bandwidth is that of the rail its peer is pinned to, not the
# sum (striping one message over both rails is not built yet; docs/link.md). A failover's cost
# is not measured here: failover moves a peer between operations, and a pingpong in flight on a
# cut rail fails. Needs root, iproute2 and tc, and mvn -q -B package -DskipTests.
# Usage: bench/rails.sh [ROUNDS] [RATE_MBIT] [ITERS_64B] [ITERS_4MIB]   (as root)
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
rounds=${1:-1}
rate=${2:-400}
small=${3:-20000}
large=${4:-40}
tag="br$$"
ns=("${tag}a" "${tag}b")

cleanup() {
  for n in "${ns[@]}"; do ip netns del "$n" 2>/dev/null || true; done
  for k in 0 1; do ip link del "${tag}b$k" 2>/dev/null || true; done
}
trap cleanup EXIT

for k in 0 1; do
  ip link add name "${tag}b$k" type bridge forward_delay 0
  ip link set "${tag}b$k" up
done
for h in 0 1; do
  ip netns add "${ns[$h]}"
  ip -n "${ns[$h]}" link set lo up
  for k in 0 1; do
    ip link add name "${tag}v$h$k" type veth peer name "braid$k" netns "${ns[$h]}"
    ip link set "${tag}v$h$k" master "${tag}b$k" up
    ip -n "${ns[$h]}" addr add "10.88.$((k + 1)).$((h + 1))/24" dev "braid$k"
    ip -n "${ns[$h]}" link set "braid$k" up
  done
done

limit() { # NIC MBIT: both directions of NIC k on both hosts
  local k=$1 mbit=$2
  for h in 0 1; do
    tc -n "${ns[$h]}" qdisc replace dev "braid$k" root tbf rate "${mbit}mbit" burst 256kb latency 50ms
    tc qdisc replace dev "${tag}v$h$k" root tbf rate "${mbit}mbit" burst 256kb latency 50ms
  done
}

extra=() # ENV=VALUE settings for the next pair's processes

pair() { # LINKS braid-pingpong-args...: LINKS empty for a --config run
  local links=$1; shift
  local -a env=(BRAID_TCP_IFACE=braid0 "${extra[@]}")
  [[ -n "$links" ]] && env+=(BRAID_LINKS="$links")
  local port=$((20000 + RANDOM % 20000))
  ip netns exec "${ns[0]}" env BRAID_HOST_ID=a "${env[@]}" \
    bin/braid pingpong "$@" -B "$port" > "/tmp/braid-rails-bench-server.txt" 2>&1 &
  local server=$!
  sleep 2
  ip netns exec "${ns[1]}" env BRAID_HOST_ID=b "${env[@]}" \
    bin/braid pingpong "$@" -P "$port" 10.88.1.1 | grep -v '^#' | tail -n +2
  wait "$server"
}

run() { # LABEL LINKS SIZE ITERS [ENV=VALUE...]: over -p link with BRAID_LINKS=LINKS
  local label=$1 links=$2 size=$3 iters=$4; shift 4
  extra=("$@")
  pair "$links" -p link -I "$iters" -S "$size" | sed "s|\$|   $label|"
  extra=()
}

# The 2:1 link with weights 2:1 comes from a topology file: link strings carry no weights.
weighted=$(mktemp /tmp/braid-rails-XXXX.conf)
trap 'cleanup; rm -f "$weighted"' EXIT
cat > "$weighted" <<CONF
links = [{
  name = weighted, policy = PER_PEER
  rails = [
    { name = a, provider = tcp, domain = braid0, weight = 2 }
    { name = b, provider = tcp, domain = braid1, weight = 1 }
  ]
}]
CONF

echo "bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec   link"
for r in $(seq "$rounds"); do
  limit 0 "$rate"
  limit 1 "$rate"
  for size in 64 4194304; do
    iters=$small; [[ $size == 4194304 ]] && iters=$large
    run "one rail (tcp:braid0), ${rate} Mbit/s" "tcp:braid0" "$size" "$iters"
    run "two rails, ${rate}+${rate} Mbit/s, PER_PEER" "tcp:braid0+tcp:braid1" "$size" "$iters" BRAID_LINK_POLICY=PER_PEER
  done
  limit 0 $((rate * 2 / 3))
  limit 1 $((rate / 3))
  label="two rails, $((rate * 2 / 3))+$((rate / 3)) Mbit/s (sum ${rate}), weights 2:1, PER_PEER"
  pair "" --config "$weighted" -I "$large" -S 4194304 | sed "s|\$|   $label|"
done
