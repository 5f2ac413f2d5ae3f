#!/usr/bin/env bash
# The private redis-server of a CTest run (the "redis" fixture, tests/CMakeLists.txt):
#
#   redis_fixture.sh start DIR   starts redis-server on a free loopback port, with DIR as
#                                its working directory, and writes redis://127.0.0.1:PORT
#                                to DIR/url once it answers PING
#   redis_fixture.sh stop DIR    stops it and removes DIR
#
# Tests read CWORK_TEST_REDIS_URL when it is set (then start does nothing), else DIR/url
# (tests/testlib.c tl_redis_url). The server runs daemonized so that CTest does not wait
# for it; a server left behind by an interrupted run (its pid file is in DIR) is stopped
# before a new one starts. Nothing is persisted: no RDB, no AOF.
set -u
cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

# Stops the server whose pid file is in DIR, if that pid is still a redis-server of ours.
stop_server() {
    local pid
    pid=$(cat "$dir/redis.pid" 2>/dev/null) || return 0
    if [ -n "$pid" ] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q '^redis-server '; then
        kill "$pid" 2>/dev/null
        for _ in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.05
        done
        kill -9 "$pid" 2>/dev/null
    fi
    rm -f "$dir/redis.pid"
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

case $cmd in
start)
    if [ -n "${CWORK_TEST_REDIS_URL:-}" ]; then
        echo "CWORK_TEST_REDIS_URL is set: the tests use $CWORK_TEST_REDIS_URL"
        exit 0
    fi
    command -v redis-server >/dev/null 2>&1 || { echo "redis-server is not installed" >&2; exit 1; }
    mkdir -p "$dir"
    stop_server
    rm -f "$dir/url"
    for _ in $(seq 1 50); do
        port=$((20000 + RANDOM % 30000))
        port_in_use "$port" && continue
        redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save '' --appendonly no \
            --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" \
            --loglevel warning </dev/null >/dev/null 2>&1 || continue
        # Up when the server on that port is the one whose pid we hold (another process
        # may have taken the port in between: then ours exits, and whatever listens
        # there gets a second to answer).
        for _ in $(seq 1 100); do
            pid=$(cat "$dir/redis.pid" 2>/dev/null)
            if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
                break
            fi
            if [ -n "$pid" ] && timeout 1 redis-cli -p "$port" info server 2>/dev/null |
                grep -q "^process_id:$pid"; then
                echo "redis://127.0.0.1:$port" >"$dir/url.tmp" && mv "$dir/url.tmp" "$dir/url"
                echo "redis-server $(redis-server --version | awk '{print $3}') on 127.0.0.1:$port (pid $pid)"
                exit 0
            fi
            sleep 0.05
        done
        stop_server
    done
    echo "could not start redis-server (log: $dir/redis.log)" >&2
    cat "$dir/redis.log" >&2 2>/dev/null
    exit 1
    ;;
stop)
    stop_server
    rm -rf "$dir"
    exit 0
    ;;
*)
    echo "usage: $0 start|stop DIR" >&2
    exit 2
    ;;
esac
