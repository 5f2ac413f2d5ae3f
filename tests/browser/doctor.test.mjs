// The Doctor page (PROTOCOL §25) in headless Chromium, at 1280 and 400 px: a damaged
// namespace (a queue holding a string, a dead member that is no JSON, a lock counter of
// 3 with nothing behind it) lists exactly those findings with what a repair does; one
// finding's Repair button repairs it alone, "Repair all" the rest, after which the page
// says the namespace is clean and Redis holds the moved keys and every job; a read-only
// server shows the findings with no button and refuses the POST. Screenshots go to
// ARTIFACT_DIR as doctor-<state>-<width>.png.
//
//   CWORK_CLI=… CWORK_TEST_REDIS_URL=… node doctor.test.mjs ARTIFACT_DIR
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from './redis.mjs';
import { setup, results, check, startWeb, stopWeb, shot, confirmWith, message } from './harness.mjs';

const [artifacts] = process.argv.slice(2);
const cli = process.env.CWORK_CLI;
const redisUrl = process.env.CWORK_TEST_REDIS_URL;
if (!artifacts || !cli || !redisUrl) {
  console.error('usage: CWORK_CLI=… CWORK_TEST_REDIS_URL=… node doctor.test.mjs ARTIFACT_DIR');
  process.exit(2);
}
setup({ artifacts, cli, redisUrl });

const cworkCmd = (ns, args) => execFileSync(cli, [...args, '--redis', redisUrl, '--ns', ns], { encoding: 'utf8' });

async function damage(redis, ns) {
  cworkCmd(ns, ['enqueue', 'good', '{"n":1}']);
  cworkCmd(ns, ['enqueue', 'x', '{}']);
  await redis.cmd('DEL', `${ns}:jobs:x`);
  await redis.cmd('SET', `${ns}:jobs:x`, 'notalist');
  await redis.cmd('ZADD', `${ns}:dead`, '5', '{notjson');
  await redis.cmd('SET', `${ns}:jobs:good:lock`, '3');
}

async function jobsIn(redis, ns) {
  let n = 0;
  for (const key of await redis.keys(`${ns}:`)) {
    const t = await redis.cmd('TYPE', key);
    if (t === 'list') n += Number(await redis.cmd('LLEN', key));
    if (t === 'zset') n += Number(await redis.cmd('ZCARD', key));
  }
  return n;
}

async function browse(width, fn) {
  const dir = mkdtempSync(path.join(tmpdir(), 'cwork-chromium-'));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: process.env.CWORK_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: { width, height: 860 },
    locale: 'en-US',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  const problems = [];
  try {
    const page = context.pages()[0] || (await context.newPage());
    page.setDefaultTimeout(10000);
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    // The admin views survive damage: /summary answers on the damaged namespace too.
    // Any failed request is a problem (but the read-only server's refused POST); the
    // console's own line for a failed request names no URL.
    page.on('response', (r) => {
      const p = new URL(r.url()).pathname;
      if (r.status() >= 400 && !(r.status() === 403 && /\/doctor_repair$/.test(p))) problems.push(`${r.status()}: ${p}`);
    });
    page.on('console', (m) => {
      if (m.type() === 'error' && !/^Failed to load resource/.test(m.text())) problems.push(`console: ${m.text()}`);
    });
    await fn(page);
    check(problems.length === 0, `no page errors (${problems.join('; ')})`);
  } finally {
    await context.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function suite(redis, width) {
  const ns = `cwt-doctor-${process.pid}-${width}`;
  await redis.deleteNamespace(ns);
  await damage(redis, ns);
  const jobs = await jobsIn(redis, ns);

  // read-only first: the findings, no button, and the POST refused
  const ro = await startWeb(['--ns', ns, '--read-only']);
  try {
    await browse(width, async (page) => {
      await page.goto(`${ro.url}#/doctor`);
      await page.locator('main tbody tr').nth(2).waitFor();
      check(await page.locator('main tbody tr').count() === 3, 'read-only: the three findings are listed');
      const buttons = await page.locator('main button', { hasText: 'Repair' }).count();
      check(buttons === 0, `read-only: no Repair button (${buttons})`);
      await shot(page, 'doctor-read-only', width);
      const status = await page.evaluate(async () => (await fetch('doctor_repair?all=1', { method: 'POST' })).status);
      check(status === 403, `read-only: POST /doctor_repair is refused (${status})`);
    });
  } finally {
    await stopWeb(ro);
  }

  const web = await startWeb(['--ns', ns]);
  try {
    await browse(width, async (page) => {
      await page.goto(`${web.url}#/doctor`);
      const rows = page.locator('main tbody tr');
      await rows.nth(2).waitFor();
      const text = await page.locator('main table').textContent();
      check(await rows.count() === 3, `three findings (${await rows.count()})`);
      check(text.includes(`${ns}:jobs:x`) && text.includes('a string where PROTOCOL has a list'), 'the queue holding a string, with its types');
      check(text.includes(`${ns}:dead`) && text.includes('member is no job JSON: {notjson'), 'the dead member that is no JSON');
      check(text.includes(`${ns}:jobs:good:lock`) && text.includes('lock is 3, in-progress lists hold 0'), 'the lock counter with nothing behind it');
      check(text.includes(`Repair: rename it to ${ns}:cwork:quarantine:key:jobs:x`), 'each finding says what its repair does');
      await shot(page, 'doctor-findings', width);

      // one finding alone
      await rows.filter({ hasText: 'no job JSON' }).locator('button', { hasText: 'Repair' }).click();
      await confirmWith(page, `Repair ${ns}:dead?`);
      await message(page, `Repaired: ${ns}:dead.`);
      await page.waitForFunction(() => document.querySelectorAll('main tbody tr').length === 2);
      check(await redis.cmd('ZSCORE', `${ns}:cwork:quarantine:dead`, '{notjson') === '5', 'the member moved to quarantine with its score');
      check(await redis.cmd('EXISTS', `${ns}:jobs:x`) === 1, 'the other findings are untouched');

      // the rest
      await page.locator('main button', { hasText: 'Repair all' }).click();
      await confirmWith(page, 'Repair all 2 findings?');
      await message(page, '2 findings repaired.');
      await page.locator('main p.empty', { hasText: 'No findings' }).waitFor();
      await page.locator('.doctor-bar', { hasText: 'Clean' }).waitFor();
      check(true, 'after Repair all the page says the namespace is clean');
      await shot(page, 'doctor-clean', width);
    });
  } finally {
    await stopWeb(web);
  }
  check(await redis.cmd('GET', `${ns}:cwork:quarantine:key:jobs:x`) === 'notalist', 'the string queue was renamed, not deleted');
  check(await redis.cmd('GET', `${ns}:jobs:good:lock`) === '0', 'the lock counter holds what the lists hold');
  const after = await jobsIn(redis, ns);
  check(after === jobs, `every job is still there (${after} of ${jobs})`);
  const clean = execFileSync(cli, ['doctor', '--json', '--redis', redisUrl, '--ns', ns], { encoding: 'utf8' });
  check(clean.trim() === '{"clean":true,"findings":[]}', `cwork doctor agrees (${clean.trim()})`);
  await redis.deleteNamespace(ns);
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
