#!/bin/sh
# CTest driver of the browser test: prepares a namespace in the test Redis (a queue of
# two send_email jobs and a dead job whose error holds HTML), starts `cwork web` on a
# free port, runs ui.test.mjs in headless Chromium, then checks Redis: the dead job is
# back in its queue. Skips (77) when node, chromium or playwright-core is missing
# (scripts/test.sh installs them). The screenshots go to
# $CWORK_BINARY_DIR/tests/browser-artifacts/.
set -u

here=$(cd "$(dirname "$0")" && pwd)
chromium=${CWORK_CHROMIUM:-/usr/bin/chromium}
skip() {
    echo "skipped: $*"
    exit 77
}
command -v node >/dev/null 2>&1 || skip "node is not installed (apt-get install nodejs)"
[ -x "$chromium" ] || skip "$chromium is not installed (apt-get install chromium)"
[ -d "$here/node_modules/playwright-core" ] ||
    skip "playwright-core is not installed (cd tests/browser && npm ci)"
command -v redis-cli >/dev/null 2>&1 || skip "redis-cli is not installed"
# The server: CWORK_TEST_REDIS_URL, else the URL the CTest fixture wrote (redis_fixture.sh).
if [ -z "${CWORK_TEST_REDIS_URL:-}" ] && [ -n "${CWORK_TEST_REDIS_FILE:-}" ]; then
    CWORK_TEST_REDIS_URL=$(cat "$CWORK_TEST_REDIS_FILE" 2>/dev/null)
fi
: "${CWORK_TEST_REDIS_URL:?is not set and the CTest fixture wrote no URL: run ctest or scripts/test.sh}"
: "${CWORK_CLI:?is not set (ctest sets it)}"
artifacts=${CWORK_BINARY_DIR:-.}/tests/browser-artifacts
mkdir -p "$artifacts"

ns="cwt-browser-$$"
p="$ns:"
# An id browsers would strip from a path ("/retry_dead_job/T/.." becomes
# "/retry_dead_job/T/"): the UI must still address it.
dead_id=".."
now=$(date +%s)
rcli() { redis-cli -u "$CWORK_TEST_REDIS_URL" "$@"; }
cleanup_keys() { rcli --scan --pattern "$ns:*" | while read -r k; do rcli del "$k" >/dev/null; done; }

web_pid=""
tmp=$(mktemp -d)
finish() {
    [ -n "$web_pid" ] && kill "$web_pid" 2>/dev/null
    cleanup_keys
    rm -rf "$tmp"
}
trap finish EXIT

# Jobs in Go's bytes. The dead job's error carries markup that must stay text.
rcli sadd "${p}known_jobs" send_email >/dev/null
rcli lpush "${p}jobs:send_email" \
    "{\"name\":\"send_email\",\"id\":\"aaaa0123456789abcdef0001\",\"t\":$now,\"args\":{\"to\":\"a@b.c\"}}" \
    "{\"name\":\"send_email\",\"id\":\"aaaa0123456789abcdef0002\",\"t\":$now,\"args\":{\"to\":\"<b>bold</b>\"}}" >/dev/null
rcli zadd "${p}dead" "$now" \
    "{\"name\":\"send_email\",\"id\":\"$dead_id\",\"t\":$((now - 60)),\"args\":{\"to\":\"x@y.z\"},\"fails\":4,\"err\":\"boom <script>alert(1)</script> and <img src=x onerror=alert(2)>\",\"failed_at\":$now}" >/dev/null

"$CWORK_CLI" web --redis "$CWORK_TEST_REDIS_URL" --ns "$ns" --listen 127.0.0.1:0 \
    >"$tmp/out" 2>"$tmp/err" &
web_pid=$!
url=""
for _ in $(seq 1 100); do
    url=$(head -n 1 "$tmp/out" 2>/dev/null)
    [ -n "$url" ] && break
    kill -0 "$web_pid" 2>/dev/null || break
    sleep 0.1
done
if [ -z "$url" ]; then
    echo "FAIL cwork web did not print its URL"
    cat "$tmp/err"
    exit 1
fi
echo "cwork web serves $url"

status=0
node "$here/ui.test.mjs" "$url" "$artifacts" "$dead_id" || status=1

# Redis after the clicks: dead set empty, the job back in its queue, no pause left.
check() {
    if [ "$2" = "$3" ]; then
        echo "ok   $1"
    else
        echo "FAIL $1: got '$2', want '$3'"
        status=1
    fi
}
check "dead set is empty" "$(rcli zcard "${p}dead")" 0
check "queue holds 3 jobs" "$(rcli llen "${p}jobs:send_email")" 3
check "the retried job is at the queue's head" \
    "$(rcli lindex "${p}jobs:send_email" 0 | grep -cF "\"id\":\"$dead_id\"")" 1
check "the queue is not paused" "$(rcli exists "${p}jobs:send_email:paused")" 0

kill -TERM "$web_pid"
wait "$web_pid"
check "cwork web stops on SIGTERM with status 0" "$?" 0
web_pid=""
[ -s "$artifacts/ui.png" ] && echo "screenshot: $artifacts/ui.png"
[ $status -eq 0 ] || { echo "cwork web said:"; cat "$tmp/err"; }
exit $status
