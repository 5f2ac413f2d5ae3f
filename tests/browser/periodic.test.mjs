// The Scheduled page's "Hide periodic" switch in headless Chromium, at 1280 and 400 px:
// a namespace with a plain scheduled job (cwork enqueue --in) and an instance a periodic
// job enqueued ahead (a pool's bytes, PROTOCOL §10.3); the switch hides the instance
// and keeps the plain job, is in the URL (?periodic=hide), survives a reload, and turned
// off shows both again. Browsing changes nothing in Redis. The times are an hour and two
// ahead of the test's start, in a time zone where both fall on the same afternoon
// (middayZone), so what the page shows does not depend on the hour it runs at.
// Screenshots go to ARTIFACT_DIR as periodic-<state>-<width>.png.
//
//   CWORK_CLI=… CWORK_TEST_REDIS_URL=… node periodic.test.mjs ARTIFACT_DIR
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from './redis.mjs';
import {
  setup, results, check, startWeb, stopWeb, shot, middayZone, nowS, same, checkDump,
} from './harness.mjs';

const [artifacts] = process.argv.slice(2);
const cli = process.env.CWORK_CLI;
const redisUrl = process.env.CWORK_TEST_REDIS_URL;
if (!artifacts || !cli || !redisUrl) {
  console.error('usage: CWORK_CLI=… CWORK_TEST_REDIS_URL=… node periodic.test.mjs ARTIFACT_DIR');
  process.exit(2);
}
setup({ artifacts, cli, redisUrl });

const cworkCmd = (ns, args) => execFileSync(cli, [...args, '--redis', redisUrl, '--ns', ns], { encoding: 'utf8' });

// A plain job an hour ahead (its id as cwork enqueue prints it) and a periodic instance
// two hours ahead, as a pool enqueues it (fork flavour: with its deadline "d").
async function seed(redis, ns, t0) {
  const plain = cworkCmd(ns, ['enqueue', '--in', '1h', 'send_email', '{"to":"a@example.com"}']).trim();
  const fire = t0 + 7200;
  const periodicId = `periodic:report:0 * * * *:${fire}`;
  const member = JSON.stringify({ name: 'report', id: periodicId, t: fire, args: null, d: fire + 3600 });
  await redis.cmd('ZADD', `${ns}:scheduled`, String(fire), member);
  await redis.cmd('SADD', `${ns}:known_jobs`, 'report');
  return { plain, periodicId };
}

// The ids the scheduled list shows, once the list has rows.
async function listed(page) {
  await page.locator('main tbody tr a.id').first().waitFor();
  return page.locator('main tbody a.id').allTextContents();
}

async function suite(redis, width) {
  const ns = `cwt-periodic-${process.pid}-${width}`;
  await redis.deleteNamespace(ns);
  const t0 = nowS();
  const { plain, periodicId } = await seed(redis, ns, t0);
  check(/^[0-9a-f]{24}$/.test(plain), `cwork enqueue --in printed the job's id (${plain})`);
  const before = await redis.dump(ns);
  const web = await startWeb(['--ns', ns]);
  const dir = mkdtempSync(path.join(tmpdir(), 'cwork-chromium-'));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: process.env.CWORK_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: { width, height: 860 },
    timezoneId: middayZone(t0),
    locale: 'en-US',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  const problems = [];
  try {
    const page = context.pages()[0] || (await context.newPage());
    page.setDefaultTimeout(10000);
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`${r.status()}: ${new URL(r.url()).pathname}`);
    });
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });

    await page.goto(`${web.url}#/scheduled`);
    const toggle = page.locator('input[aria-label="Hide periodic jobs"]');
    await toggle.waitFor();
    check(!(await toggle.isChecked()), 'the switch starts off');
    let ids = await listed(page);
    check(same(ids, [plain, periodicId]), `off: the list shows both jobs, soonest first (${ids})`);
    await shot(page, 'periodic-shown', width);
    // the switch's box and words on one line, and the "all" buttons wrap as one group
    const tops = async (sel) => (await page.locator(sel).evaluateAll((els) => els.map((e) => Math.round(e.getBoundingClientRect().top + e.getBoundingClientRect().height / 2))));
    const [box] = await tops('input[aria-label="Hide periodic jobs"]');
    const words = await page.locator('label', { has: toggle }).evaluate((l) => { const r = document.createRange(); r.selectNodeContents(l.lastChild); const b = r.getBoundingClientRect(); return Math.round(b.top + b.height / 2); });
    check(Math.abs(box - words) <= 2, `the switch's box is centred on its words (${box}, ${words})`);
    const buttons = await tops('main .toolbar .all-actions button');
    check(buttons.length === 3 && new Set(buttons).size === 1, `Run all now, Kill all and Delete all share one line (${buttons})`);

    await toggle.check();
    await page.locator('main tbody a.id', { hasText: periodicId }).waitFor({ state: 'detached' });
    ids = await listed(page);
    check(same(ids, [plain]), `on: the periodic instance is hidden, the plain job stays (${ids})`);
    check(page.url().includes('periodic=hide'), `the switch is in the URL (${page.url()})`);
    check(await page.locator('input[aria-label="Hide periodic jobs"]').isChecked(), 'the switch shows it is on');
    await shot(page, 'periodic-hidden', width);

    await page.reload();
    ids = await listed(page);
    check(same(ids, [plain]) && await page.locator('input[aria-label="Hide periodic jobs"]').isChecked(),
      `a reload keeps the filter (${ids})`);

    await page.locator('input[aria-label="Hide periodic jobs"]').uncheck();
    await page.locator('main tbody a.id', { hasText: periodicId }).waitFor();
    ids = await listed(page);
    check(same(ids, [plain, periodicId]), `off again: both jobs are listed (${ids})`);
    check(!page.url().includes('periodic=hide'), 'and the URL no longer filters');

    checkDump(await redis.dump(ns), before, 'browsing and filtering changed nothing in Redis');
    check(problems.length === 0, `no page errors (${problems.join('; ')})`);
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
