#!/usr/bin/env bash
# A local Redis Cluster for the sharding benchmark: M masters (no replicas, or one each
# with --replicas), whose slots are cut so that each shard of namespace NS lands on its
# own master (shard i on master i mod M) — what `redis-cli --cluster rebalance` and
# moving slots by hand give a team in production, done here at creation on empty nodes.
#
#   bench/cluster/cluster.sh start DIR MASTERS SHARDS [NS] [--replicas]
#       starts the nodes under DIR (ports from 30001), prints the redis+cluster:// URL
#   bench/cluster/cluster.sh ports DIR      # the masters' ports, one a line
#   bench/cluster/cluster.sh stop DIR
#
# NS defaults to {bench}; shard i's namespace is as PROTOCOL §27.1 names it.
set -euo pipefail

cmd=${1:?usage: cluster.sh start|ports|stop DIR ...}
dir=${2:?usage: cluster.sh start|ports|stop DIR ...}

stop() {
    for f in "$dir"/*.pid; do
        [ -e "$f" ] || continue
        kill -9 "$(cat "$f")" 2>/dev/null || true
        rm -f "$f"
    done
}

# The slot of shard i of ns: its keys are "<shard ns>:…", tagged.
shard_slot() {
    local ns=$1 i=$2 base name
    base=${ns#\{}
    base=${base%\}}
    if [ "$i" -eq 0 ]; then name=$ns; else name="{$base.$i}"; fi
    redis-cli -p "$first_port" CLUSTER KEYSLOT "$name:x"
}

start() {
    local masters=${3:?masters} shards=${4:?shards} ns=${5:-"{bench}"} replicas=0
    [ "${6:-}" = "--replicas" ] && replicas=1
    mkdir -p "$dir"
    stop
    local nodes=$((masters * (1 + replicas))) port=30001 i
    first_port=$port
    for ((i = 0; i < nodes; i++)); do
        local p=$((port + i))
        redis-server --port "$p" --bind 127.0.0.1 --cluster-enabled yes \
            --cluster-config-file "nodes-$p.conf" --cluster-node-timeout 2000 \
            --save '' --appendonly no --dir "$dir" --dbfilename "dump-$p.rdb" \
            --daemonize yes --pidfile "$dir/$p.pid" --logfile "$dir/$p.log"
    done
    for ((i = 0; i < nodes; i++)); do
        until redis-cli -p $((port + i)) PING >/dev/null 2>&1; do sleep 0.05; done
        redis-cli -p $((port + i)) FLUSHALL >/dev/null
        redis-cli -p $((port + i)) CLUSTER RESET HARD >/dev/null
    done
    for ((i = 1; i < nodes; i++)); do
        redis-cli -p "$port" CLUSTER MEET 127.0.0.1 $((port + i)) >/dev/null
    done
    # Master m owns the shards i with i mod M = m: every slot goes to the master of the
    # nearest shard slot at or below it (the lowest shard's master takes the start).
    local -a owner
    local pairs
    pairs=$(for ((i = 0; i < shards; i++)); do echo "$(shard_slot "$ns" "$i") $((i % masters))"; done | sort -n)
    local start_slot=0 prev_master="" slot m
    local -a ranges=()
    while read -r slot m; do
        if [ -z "$prev_master" ]; then prev_master=$m; continue; fi
        ranges+=("$start_slot $((slot - 1)) $prev_master")
        start_slot=$slot
        prev_master=$m
    done <<<"$pairs"
    ranges+=("$start_slot 16383 $prev_master")
    local r
    for r in "${ranges[@]}"; do
        set -- $r
        [ "$1" -le "$2" ] || continue
        redis-cli -p $((port + $3)) CLUSTER ADDSLOTSRANGE "$1" "$2" >/dev/null
    done
    if [ "$replicas" = 1 ]; then
        sleep 1
        for ((i = 0; i < masters; i++)); do
            local id
            id=$(redis-cli -p $((port + i)) CLUSTER MYID)
            until redis-cli -p $((port + masters + i)) CLUSTER REPLICATE "$id" >/dev/null 2>&1; do sleep 0.1; done
        done
    fi
    for ((i = 0; i < nodes; i++)); do
        until redis-cli -p $((port + i)) CLUSTER INFO | grep -q 'cluster_state:ok'; do sleep 0.1; done
    done
    sleep 1 # (every node's view of the slots settles: a client asks any of them)
    : >"$dir/masters"
    for ((i = 0; i < masters; i++)); do echo $((port + i)) >>"$dir/masters"; done
    local url="redis+cluster://" sep=""
    for ((i = 0; i < masters; i++)); do url+="${sep}127.0.0.1:$((port + i))"; sep=,; done
    echo "$url"
}

case $cmd in
start) start "$@" ;;
ports) cat "$dir/masters" ;;
stop) stop; rm -rf "$dir" ;;
*) echo "usage: cluster.sh start|ports|stop DIR ..." >&2; exit 2 ;;
esac
