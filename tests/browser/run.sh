#!/bin/sh
# CTest driver of the browser test: runs ui.test.mjs, features.test.mjs, story.test.mjs,
# doctor.test.mjs, damage.test.mjs, periodic.test.mjs and shards.test.mjs in headless
# Chromium against the test Redis; the tests write their namespaces themselves and start their own `cwork web`
# servers. Skips (77) when node, chromium or playwright-core is missing (scripts/test.sh
# installs them). The screenshots (every page at 1280 and 400 px) go to
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
export CWORK_TEST_REDIS_URL
: "${CWORK_CLI:?is not set (ctest sets it)}"
artifacts=${CWORK_BINARY_DIR:-.}/tests/browser-artifacts
mkdir -p "$artifacts"

CWORK_CHROMIUM=$chromium node "$here/ui.test.mjs" "$artifacts"
status=$?
# cwork's own features (rate limits, batches, kept successes): their own namespaces.
CWORK_CHROMIUM=$chromium node "$here/features.test.mjs" "$artifacts" || status=1
# The job page's story (PROTOCOL §26): its own namespaces.
CWORK_CHROMIUM=$chromium node "$here/story.test.mjs" "$artifacts" || status=1
# The Doctor page (cwork doctor): its own namespaces.
CWORK_CHROMIUM=$chromium node "$here/doctor.test.mjs" "$artifacts" || status=1
# A namespace with damaged keys: every page under one banner, the switcher kept.
CWORK_CHROMIUM=$chromium node "$here/damage.test.mjs" "$artifacts" || status=1
# The Scheduled page's "Hide periodic" switch: its own namespaces.
CWORK_CHROMIUM=$chromium node "$here/periodic.test.mjs" "$artifacts" || status=1
# A sharded namespace: the dashboard's Shards panel and the shard picker.
CWORK_CHROMIUM=$chromium node "$here/shards.test.mjs" "$artifacts" || status=1
echo "screenshots: $artifacts"
exit $status
