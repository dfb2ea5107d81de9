#!/usr/bin/env bash
# Multi-rail links between two hosts: network namespaces, each with two veth NICs (braid0 on
# 10.88.1.0/24, braid1 on 10.88.2.0/24, each pair of NICs on a bridge of its own), every NIC
# rate-limited with tc tbf (tbf works on veth here; netem does not). braid pingpong, one after
# the other, ROUNDS times, every figure of a round from that one run:
#   equal rails (both RATE Mbit/s): a link of one rail (tcp:braid0) against a link of two
#     (tcp:braid0+tcp:braid1) under STRIPE: 4 MiB bandwidth (target: two rails >= 1.9x one) and
#     64 B latency (target: two rails <= 1.1x one; 64 B messages go whole, round robin, each with
#     the link's sequence number); PER_PEER alongside (one pingpong pair rides one rail);
#   rails limited 2:1 (braid0 at 2*RATE/3, braid1 at RATE/3) with weights 2:1 (a topology file,
#     policy STRIPE): the 4 MiB bandwidth against the sum of the rates (target >= 0.9x RATE).
# The last lines print the ratios. Then the cost of a failover, unlimited rails, ROUND_ROBIN: a
# stream of FAILOVER_MSGS (default 1000000) 32 B messages from one host to the other, cut a quarter
# of the way, once by resetting rail braid1's connections (ss -K) and once by taking the receiver's
# braid1 NIC down (the tcp keepalive, BRAID_TCP_TIMEOUT_MS=1500 here, notices); the receiver checks
# every message once and in order and prints its longest stall: the time from the cut until
# traffic flows again. Needs root, iproute2 (ip, ss) and tc, and mvn -q -B package -DskipTests
# (braid.jar and rail-core's test classes, where the stream's programs are).
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
  name = weighted, policy = STRIPE
  rails = [
    { name = a, provider = tcp, domain = braid0, weight = 2 }
    { name = b, provider = tcp, domain = braid1, weight = 1 }
  ]
}]
CONF

echo "bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec   link"
results=$(mktemp /tmp/braid-rails-results-XXXX.txt)
trap 'cleanup; rm -f "$weighted" "$results"' EXIT
for r in $(seq "$rounds"); do
  limit 0 "$rate"
  limit 1 "$rate"
  for size in 64 4194304; do
    iters=$small; [[ $size == 4194304 ]] && iters=$large
    run "one rail (tcp:braid0), ${rate} Mbit/s" "tcp:braid0" "$size" "$iters" | tee -a "$results"
    run "two rails, ${rate}+${rate} Mbit/s, STRIPE" "tcp:braid0+tcp:braid1" "$size" "$iters" BRAID_LINK_POLICY=STRIPE | tee -a "$results"
    run "two rails, ${rate}+${rate} Mbit/s, PER_PEER" "tcp:braid0+tcp:braid1" "$size" "$iters" BRAID_LINK_POLICY=PER_PEER
  done
  limit 0 $((rate * 2 / 3))
  limit 1 $((rate / 3))
  label="two rails, $((rate * 2 / 3))+$((rate / 3)) Mbit/s (sum ${rate}), weights 2:1, STRIPE"
  pair "" --config "$weighted" -I "$large" -S 4194304 | sed "s|\$|   $label|" | tee -a "$results"
done
# Ratios over the rounds' means: column 6 is MB/sec, column 7 usec/xfer.
awk -v rate="$rate" '
  /one rail/ && $1 == "64" { l1 += $7; n1++ }
  /STRIPE/ && !/weights/ && $1 == "64" { l2 += $7; n2++ }
  /one rail/ && $1 == "4m" { b1 += $6; m1++ }
  /STRIPE/ && !/weights/ && $1 == "4m" { b2 += $6; m2++ }
  /weights 2:1/ { bw += $6; mw++ }
  END {
    if (n1 && n2) printf "64 B latency, two rails / one rail:          %.3f (target <= 1.1)\n", (l2 / n2) / (l1 / n1)
    if (m1 && m2) printf "4 MiB bandwidth, two striped rails / one:    %.3f (target >= 1.9)\n", (b2 / m2) / (b1 / m1)
    if (mw) printf "4 MiB bandwidth, 2:1 rails / sum of rates:   %.3f (target >= 0.9; sum %d Mbit/s = %.1f MB/s)\n", (bw / mw) / (rate / 8), rate, rate / 8
  }' "$results"

# The cost of a failover: the stream programs of MultiRailCrossHostIT (rail-core's test classes).
for k in 0 1; do
  for h in 0 1; do
    tc -n "${ns[$h]}" qdisc del dev "braid$k" root 2>/dev/null || true
    tc qdisc del dev "${tag}v$h$k" root 2>/dev/null || true
  done
done
cp="$(braid_jar):rail-core/target/test-classes:test-support/target/classes"
msgs=${FAILOVER_MSGS:-1000000}
for cut in reset down; do
  dir=$(mktemp -d /tmp/braid-rails-cut-XXXX)
  envs=(BRAID_TCP_TIMEOUT_MS=1500 BRAID_LINK_POLICY=ROUND_ROBIN BRAID_TCP_IFACE=braid0)
  links=link:tcp:braid0+tcp:braid1
  ip netns exec "${ns[1]}" env BRAID_HOST_ID=b "${envs[@]}" java -Xmx256m -cp "$cp" braid.it.PeerMain \
    "$links" stream-recv "$dir" r s "$msgs" 32 > "$dir/r.log" 2>&1 &
  receiver=$!
  ip netns exec "${ns[0]}" env BRAID_HOST_ID=a "${envs[@]}" java -Xmx256m -cp "$cp" braid.it.PeerMain \
    "$links" stream-send "$dir" s r "$msgs" 32 whole > "$dir/s.log" 2>&1 &
  sender=$!
  until [[ -e "$dir/s-phase1.done" ]]; do
    kill -0 "$sender" 2>/dev/null || { cat "$dir/s.log" >&2; exit 1; }
    sleep 0.005
  done
  if [[ $cut == reset ]]; then
    ip netns exec "${ns[0]}" ss -K dst 10.88.2.2 > /dev/null
  else
    ip link set "${tag}v11" down
  fi
  wait "$sender" || { cat "$dir/s.log" >&2; exit 1; }
  wait "$receiver" || { cat "$dir/r.log" >&2; exit 1; }
  ip link set "${tag}v11" up
  stall=$(sed -n 's/^longest stall \([0-9]*\) ms.*/\1/p' "$dir/r.log")
  # Counted from the right: the table's first headings are two words each.
  resent=$(awk '/^rail/ { for (i = 1; i <= NF; i++) if ($i == "resent") c = NF - i } /^tcp:braid0 / && c != "" { print $(NF - c) }' "$dir/s.log")
  printf "failover cost, %-5s %s 32 B messages, ROUND_ROBIN: %s ms from the cut until traffic flows again (%s resent)\n" \
    "$cut:" "$msgs" "$stall" "${resent:-?}"
  rm -rf "$dir"
done
