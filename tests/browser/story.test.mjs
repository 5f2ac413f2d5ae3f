// The job page tells a job's whole story (PROTOCOL §26), in headless Chromium at 1280
// and 400 px: a running job (its pool, host, pid, worker, start and live check-in), a
// retry job and a dead job (first enqueue and last requeue, every failure kept, the time
// in each state), and a "more" on every piece of text that is cut at the width it gets,
// short args included. The namespace is written as pools write it: a heartbeat, an
// in-progress list and an observer's hash for the running job; retry and dead members
// with their <p>cwork:failures:<id> lists as the cycle script writes them. Times are
// fixed offsets from one moment t0, and the browser runs in the zone where t0 is midday
// (middayZone), so that what the page shows does not depend on the hour.
//
//   CWORK_CLI=… CWORK_TEST_REDIS_URL=… node story.test.mjs ARTIFACT_DIR
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from './redis.mjs';
import { setup, results, check, startWeb, stopWeb, shot, middayZone, nowS } from './harness.mjs';

const [artifacts] = process.argv.slice(2);
const cli = process.env.CWORK_CLI;
const redisUrl = process.env.CWORK_TEST_REDIS_URL;
if (!artifacts || !cli || !redisUrl) {
  console.error('usage: CWORK_CLI=… CWORK_TEST_REDIS_URL=… node story.test.mjs ARTIFACT_DIR');
  process.exit(2);
}
setup({ artifacts, cli, redisUrl });

const POOL = 'a1b2c3d4e5f6a7b8c9d0e1f2';
const WORKER = 'f00dcafe0000000000000001';
// 130 characters without a comma: one line at 1280 px, more than three at 400 px.
const SHORT_ARGS = { text: 'lorem-ipsum-dolor-sit-amet-consectetur-adipiscing-elit-sed-do-eiusmod-tempor-incididunt-ut-labore-et-dolore-magna-aliqua-ut' };
const LONG_ERR = `upstream answered 503 Service Unavailable: ${'retry later; '.repeat(80)}the end`;

function failure(f) {
  const retry = f.retry_at ? `,"retry_at":${f.retry_at}` : '';
  return `{"failed_at":${f.failed_at},"fails":${f.fails},"err":${JSON.stringify(f.err)},"t":${f.t},"ran_at":${f.ran_at},"took_us":${f.took_us}${retry},"first_t":${f.first_t}}`;
}

async function seedStory(redis, ns, t0) {
  await redis.cmd('SADD', `${ns}:known_jobs`, 'report', 'mail');
  // running: a pool's heartbeat, its in-progress list and its worker's observer hash
  await redis.cmd('SADD', `${ns}:worker_pools`, POOL);
  await redis.cmd('HSET', `${ns}:worker_pools:${POOL}`, 'heartbeat_at', String(nowS()), 'started_at', String(t0 - 600),
    'job_names', 'mail,report', 'concurrency', '4', 'worker_ids', WORKER, 'host', 'web-7', 'pid', '4242', 'cwork', '1.0.0');
  const running = { name: 'report', id: 'run1', t: t0 - 120, args: SHORT_ARGS };
  await redis.cmd('LPUSH', `${ns}:jobs:report:${POOL}:inprogress`, JSON.stringify(running));
  await redis.cmd('HSET', `${ns}:worker:${WORKER}`, 'job_name', 'report', 'job_id', 'run1', 'started_at', String(t0 - 90),
    'args', JSON.stringify(SHORT_ARGS), 'checkin', 'page 3 of 10', 'checkin_at', String(t0 - 5));
  // retry: failed twice, requeued once in between
  const r1 = { failed_at: t0 - 3500, fails: 1, err: 'smtp timeout', t: t0 - 3600, ran_at: (t0 - 3540) * 1000, took_us: 40000000, retry_at: t0 - 3400, first_t: t0 - 3600 };
  const r2 = { failed_at: t0 - 3000, fails: 2, err: 'smtp timeout again', t: t0 - 3400, ran_at: (t0 - 3100) * 1000, took_us: 100000000, retry_at: t0 + 600, first_t: t0 - 3600 };
  const retry = { name: 'mail', id: 'retry1', t: t0 - 3400, args: { to: 'a@example.com' }, fails: 2, err: r2.err, failed_at: r2.failed_at };
  await redis.cmd('ZADD', `${ns}:retry`, String(t0 + 600), JSON.stringify(retry));
  await redis.cmd('RPUSH', `${ns}:cwork:failures:retry1`, failure(r2), failure(r1));
  // dead: three failures, the last with a long error; short args that 400 px cuts
  const d1 = { failed_at: t0 - 7000, fails: 1, err: 'db locked', t: t0 - 7200, ran_at: (t0 - 7100) * 1000, took_us: 2000000, retry_at: t0 - 6900, first_t: t0 - 7200 };
  const d2 = { failed_at: t0 - 6000, fails: 2, err: 'db locked', t: t0 - 6900, ran_at: (t0 - 6800) * 1000, took_us: 3000000, retry_at: t0 - 5800, first_t: t0 - 7200 };
  const d3 = { failed_at: t0 - 5000, fails: 3, err: LONG_ERR, t: t0 - 5800, ran_at: (t0 - 5700) * 1000, took_us: 4000000, first_t: t0 - 7200 };
  const dead = { name: 'report', id: 'dead1', t: t0 - 5800, args: SHORT_ARGS, fails: 3, err: LONG_ERR, failed_at: d3.failed_at };
  await redis.cmd('ZADD', `${ns}:dead`, String(d3.failed_at), JSON.stringify(dead));
  await redis.cmd('RPUSH', `${ns}:cwork:failures:dead1`, failure(d3), failure(d2), failure(d1));
}

// The text of the fact labelled label (dt), or '' when there is none.
async function fact(page, label) {
  const dt = page.locator('dl.facts dt', { hasText: new RegExp(`^${label}$`) });
  if (!(await dt.count())) return '';
  return dt.locator('xpath=following-sibling::dd[1]').textContent();
}

// The exact local time the page shows for unix seconds t in the midday zone (today's
// times without the date).
function exact(t, zone) {
  return new Intl.DateTimeFormat('en-US', { timeZone: zone, hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false }).format(new Date(t * 1000));
}

async function moreShown(box) {
  return box.locator('button.more').isVisible();
}

async function suite(redis, width) {
  const ns = `cwt-story-${process.pid}-${width}`;
  await redis.deleteNamespace(ns);
  const t0 = nowS();
  const zone = middayZone(t0);
  await seedStory(redis, ns, t0);
  const web = await startWeb(['--ns', ns]);
  const dir = mkdtempSync(path.join(tmpdir(), 'cwork-chromium-'));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: process.env.CWORK_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: { width, height: 860 },
    timezoneId: zone,
    locale: 'en-US',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  const problems = [];
  try {
    const page = context.pages()[0] || (await context.newPage());
    page.setDefaultTimeout(10000);
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' && !/status of 404/.test(m.text())) problems.push(`console: ${m.text()}`);
    });

    // ---- running
    await page.goto(`${web.url}#/job/run1`);
    await page.locator('main h2', { hasText: 'Job run1' }).waitFor();
    await page.locator('dl.facts dt', { hasText: 'Check-in' }).waitFor();
    const pool = await fact(page, 'Pool');
    check(pool.includes(POOL) && pool.includes('web-7') && pool.includes('4242'), `${width}: the running job names its pool, host and pid (${pool})`);
    check((await fact(page, 'Worker')) === WORKER, `${width}: and its worker`);
    check((await fact(page, 'Started')).includes(exact(t0 - 90, zone)), `${width}: and when it started (${await fact(page, 'Started')})`);
    check((await fact(page, 'Check-in')).includes('page 3 of 10'), `${width}: and its live check-in`);
    check((await fact(page, 'Enqueued')).includes(exact(t0 - 120, zone)), `${width}: and when it was enqueued`);
    const runPhases = await page.locator('main tr', { has: page.locator('td[data-label="State"]') }).allTextContents();
    check(runPhases.length === 2 && runPhases[0].startsWith('waiting') && runPhases[0].endsWith('30s') && runPhases[1].startsWith('running') && runPhases[1].includes('so far'),
      `${width}: waiting 30 s, then running so far (${runPhases.join(' | ')})`);
    const runArgs = page.locator('dl.facts dd .args .clamp');
    check((await moreShown(runArgs)) === (width < 600), `${width}: args of ${JSON.stringify(SHORT_ARGS).length} characters get a "more" exactly where they are cut`);
    await shot(page, 'story-running', width);
    if (width < 600) {
      await runArgs.locator('button.more').click();
      await page.locator('dl.facts dd .args .clamp.open').waitFor();
      const h = await runArgs.locator('.clamp-text').evaluate((n) => n.scrollHeight <= n.clientHeight + 1);
      check(h, `${width}: "more" shows the args whole`);
      await shot(page, 'story-running-args-open', width);
    }

    // ---- retry
    await page.goto(`${web.url}#/job/retry1`);
    await page.locator('main h2', { hasText: 'Job retry1' }).waitFor();
    await page.locator('main h3', { hasText: 'Failures' }).waitFor();
    check((await fact(page, 'Enqueued')).includes(exact(t0 - 3600, zone)), `${width}: the retry job's first enqueue, not its t (${await fact(page, 'Enqueued')})`);
    check((await fact(page, 'Requeued')).includes(exact(t0 - 3400, zone)), `${width}: and its last requeue`);
    const retryFails = await page.locator('main td[data-label="Error"]').allTextContents();
    check(retryFails.length === 2 && retryFails[0].startsWith('smtp timeout again') && retryFails[1].startsWith('smtp timeout'), `${width}: both failures are kept, newest first (${retryFails})`);
    const retryPhases = (await page.locator('main td[data-label="State"]').allTextContents());
    check(retryPhases.join(' ') === 'waiting running retry waiting running retry', `${width}: the states of the retry job (${retryPhases})`);
    const retryFor = await page.locator('main td[data-label="For"]').allTextContents();
    check(retryFor.slice(0, 5).join(' ') === '1m 0s 40s 1m 40s 5m 0s 1m 40s', `${width}: and the time in each (${retryFor})`);
    await shot(page, 'story-retry', width);

    // ---- dead
    await page.goto(`${web.url}#/job/dead1`);
    await page.locator('main h2', { hasText: 'Job dead1' }).waitFor();
    await page.locator('main td[data-label="Error"]').first().waitFor();
    check((await fact(page, 'Enqueued')).includes(exact(t0 - 7200, zone)), `${width}: the dead job's first enqueue (${await fact(page, 'Enqueued')})`);
    check((await fact(page, 'Requeued')).includes(exact(t0 - 5800, zone)), `${width}: and its last requeue, its t`);
    const deadPhases = await page.locator('main td[data-label="State"]').allTextContents();
    check(deadPhases.join(' ') === 'waiting running retry waiting running retry waiting running dead', `${width}: the states of the dead job (${deadPhases})`);
    const errBox = page.locator('main td[data-label="Error"] .clamp').first();
    check(await moreShown(errBox), `${width}: a long error has a "more"`);
    const shortErr = page.locator('main td[data-label="Error"] .clamp').nth(1);
    check(!(await moreShown(shortErr)), `${width}: a short error has none`);
    const factErr = page.locator('dl.facts dd .err .clamp');
    check(await moreShown(factErr), `${width}: the last error in the facts has a "more"`);
    await shot(page, 'story-dead', width);
    await errBox.locator('button.more').click();
    await page.locator('main td[data-label="Error"] .clamp.open').waitFor();
    check((await errBox.locator('.clamp-text').textContent()).endsWith('the end'), `${width}: "more" shows the whole error`);
    await page.waitForTimeout(2600); // a refresh patches the page
    check((await page.locator('main td[data-label="Error"] .clamp.open').count()) === 1, `${width}: and it stays open across a refresh`);
    check(await moreShown(factErr), `${width}: the other "more" stays after the refresh`);
    await shot(page, 'story-dead-open', width);
    check(problems.length === 0, `${width}: no page errors (${problems.join('; ')})`);
  } finally {
    await context.close();
    rmSync(dir, { recursive: true, force: true });
    await stopWeb(web);
    await redis.deleteNamespace(ns);
  }
}

const redis = await Redis.connect(redisUrl);
try {
  for (const width of [1280, 400]) await suite(redis, width);
} catch (e) {
  check(false, `the suite ran to its end (${e.stack || e})`);
}
redis.close?.();
console.log(`${results.passed} passed, ${results.failed} failed`);
process.exit(results.failed ? 1 : 0);
