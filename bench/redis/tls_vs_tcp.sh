#!/usr/bin/env bash
# What TLS costs cwork, with the two ordinary benchmarks: bench_enqueue and bench_pool
# (no-op jobs, 5 queues, concurrency 20) against one private redis-server that listens
# on a plain port and on a TLS port, redis:// beside rediss:// in the same run, round
# by round, the order swapped every round so that a machine getting busier or quieter
# weighs on both alike. Prints each round's figures, then the medians and the median
# of the per-round TLS/TCP ratios.
#
#   bench/redis/tls_vs_tcp.sh [BUILD_DIR] [ROUNDS]     # defaults: build/release, 5
#   CWORK_BENCH_JOBS=… CWORK_BENCH_POOL_JOBS=… bench/redis/tls_vs_tcp.sh   # sizes per round
#
# Needs openssl and redis-server (built with TLS, as Debian's is).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/release}
rounds=${2:-5}
jobs=${CWORK_BENCH_JOBS:-20000}
pool_jobs=${CWORK_BENCH_POOL_JOBS:-200000}
for b in bench_enqueue bench_pool; do
    [ -x "$build/$b" ] || { echo "no $build/$b: build first (cmake --build $build)" >&2; exit 1; }
done

dir=$(mktemp -d /tmp/cwork-tls-vs-tcp.XXXXXX)
redis_pid=""
cleanup() {
    [ -z "$redis_pid" ] || { kill "$redis_pid" 2>/dev/null || true; wait "$redis_pid" 2>/dev/null || true; }
    rm -rf "$dir"
}
trap cleanup EXIT

# A CA and a certificate for 127.0.0.1 and localhost, valid for two days.
(
    cd "$dir"
    k="-newkey rsa:2048 -nodes"
    openssl req -x509 $k -keyout ca.key -out ca.crt -days 2 -subj '/CN=bench CA'
    openssl req $k -keyout server.key -out server.csr -subj '/CN=localhost'
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >san.ext
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
        -out server.crt -days 2 -extfile san.ext
) >"$dir/openssl.log" 2>&1 || { cat "$dir/openssl.log" >&2; exit 1; }

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for _ in $(seq 1 50); do
    plain=$((20000 + RANDOM % 30000))
    tls=$((plain + 1))
    port_in_use "$plain" || port_in_use "$tls" || break
done
redis-server --port "$plain" --tls-port "$tls" --bind 127.0.0.1 \
    --tls-cert-file "$dir/server.crt" --tls-key-file "$dir/server.key" \
    --tls-ca-cert-file "$dir/ca.crt" --tls-auth-clients no \
    --save '' --appendonly no --dir "$dir" --loglevel warning >"$dir/redis.log" 2>&1 &
redis_pid=$!
for _ in $(seq 1 100); do
    redis-cli -p "$plain" ping >/dev/null 2>&1 && break
    sleep 0.05
done

urls=("redis://127.0.0.1:$plain" "rediss://127.0.0.1:$tls?ca=$dir/ca.crt")
names=("TCP" "TLS")
# figures[transport][metric] as "v1 v2 …", metrics: enqueue, batch, pool
declare -A figs
run_one() { # transport index
    local t=$1 out
    out=$("$build/bench_enqueue" --redis "${urls[$t]}" --jobs "$jobs" --bulk-jobs $((jobs * 10)))
    local single batch
    single=$(awk -F: '/^cwork_enqueue, one job per call/ {print $2+0}' <<<"$out")
    batch=$(awk -F: '/^cwork_enqueue_batch:/ {print $2+0}' <<<"$out")
    out=$("$build/bench_pool" --redis "${urls[$t]}" --jobs "$pool_jobs" --queues 5 \
        --workloads none --latency-jobs 0)
    local pool cpu
    pool=$(sed -n 's/.*processing *\([0-9]*\) jobs\/s.*/\1/p' <<<"$out")
    cpu=$(sed -n 's/.*Redis CPU \([0-9.]*\) us\/job.*/\1/p' <<<"$out")
    figs[$t,enqueue]+="$single "
    figs[$t,batch]+="$batch "
    figs[$t,pool]+="$pool "
    figs[$t,cpu]+="$cpu "
    printf '  %-3s cwork_enqueue %7s jobs/s, cwork_enqueue_batch %7s jobs/s, pool no-op %7s jobs/s (Redis CPU %s us/job)\n' \
        "${names[$t]}" "$single" "$batch" "$pool" "$cpu"
}

echo "redis-server $(redis-server --version | awk '{print $3}'): plain 127.0.0.1:$plain, TLS 127.0.0.1:$tls;" \
    "$jobs single jobs, $((jobs * 10)) batched, $pool_jobs pool jobs per round"
for r in $(seq 1 "$rounds"); do
    echo "round $r"
    if [ $((r % 2)) -eq 1 ]; then run_one 0; run_one 1; else run_one 1; run_one 0; fi
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
ratios() { # metric: per-round TLS/TCP in %
    paste -d' ' <(tr ' ' '\n' <<<"${figs[1,$1]}" | grep -v '^$') \
        <(tr ' ' '\n' <<<"${figs[0,$1]}" | grep -v '^$') |
        awk '$2 > 0 {printf "%.1f ", 100 * $1 / $2}'
}
echo
printf '%-38s %12s %12s %16s %s\n' "(medians of $rounds rounds)" "plain TCP" "TLS" "TLS/TCP ratio" "(range)"
for m in enqueue batch pool cpu; do
    case $m in
    enqueue) label="cwork_enqueue, jobs/s (one per call)" ;;
    batch) label="cwork_enqueue_batch, jobs/s" ;;
    pool) label="bench_pool no-op jobs/s (5 queues)" ;;
    cpu) label="Redis CPU per pool job, us" ;;
    esac
    r=$(ratios "$m")
    printf '%-38s %12s %12s %15s%% %s\n' "$label" "$(median <<<"${figs[0,$m]}")" \
        "$(median <<<"${figs[1,$m]}")" "$(median <<<"$r")" \
        "($(tr ' ' '\n' <<<"$r" | grep -v '^$' | sort -g | sed -n '1p;$p' | paste -sd- -)%)"
done
