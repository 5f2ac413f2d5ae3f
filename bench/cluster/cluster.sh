#!/usr/bin/env bash
# A local Redis Cluster for the sharding benchmark: M masters (no replicas, or one each
# with --replicas), whose slots are cut so that each shard of namespace NS lands on its
# own master (shard i on master i mod M) — what `redis-cli --cluster rebalance` and
# moving slots by hand give a team in production, done here at creation on empty nodes.
#
#   bench/cluster/cluster.sh start DIR MASTERS SHARDS [NS] [--replicas] [--port BASE]
#       starts the nodes under DIR on ports BASE, BASE+1, … (masters first, then their
#       replicas; each node's cluster bus on its port + 10000), prints the
#       redis+cluster:// URL
#   bench/cluster/cluster.sh ports DIR      # the masters' ports, one a line
#   bench/cluster/cluster.sh stop DIR
#
# NS defaults to {bench}; shard i's namespace is as PROTOCOL §27.1 names it. BASE is
# --port, else $CWORK_CLUSTER_PORT, else 30001: two clusters at once (two benchmarks,
# or one beside a test's) need bases at least their node count apart. A port of the
# range (or its bus port) that something already listens on is refused before any node
# starts: the script would otherwise FLUSHALL whatever server answers there.
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

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start() {
    local masters=${3:?masters} shards=${4:?shards} ns="{bench}" replicas=0
    local port=${CWORK_CLUSTER_PORT:-30001} i
    shift 4
    if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then ns=$1; shift; fi
    while [ $# -gt 0 ]; do
        case $1 in
        --replicas) replicas=1 ;;
        --port) port=${2:?--port needs a base port}; shift ;;
        *) echo "cluster.sh start: unknown option $1" >&2; exit 2 ;;
        esac
        shift
    done
    local nodes=$((masters * (1 + replicas)))
    if ! [[ $port =~ ^[0-9]+$ ]] || [ "$port" -lt 1024 ] || [ $((port + nodes - 1 + 10000)) -gt 65535 ]; then
        echo "cluster.sh start: base port '$port' must be a number from 1024 with its $nodes ports + 10000 (the bus) below 65536" >&2
        exit 2
    fi
    mkdir -p "$dir"
    stop
    for ((i = 0; i < nodes; i++)); do
        local p=$((port + i)) b=$((port + i + 10000)) k
        for ((k = 0; k < 40; k++)); do # (a node of this DIR just killed lets go of its port)
            port_in_use "$p" || port_in_use "$b" || break
            sleep 0.05
        done
        if port_in_use "$p" || port_in_use "$b"; then
            echo "cluster.sh start: port $p or its bus port $b is in use: choose another base with --port or CWORK_CLUSTER_PORT" >&2
            exit 1
        fi
    done
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
