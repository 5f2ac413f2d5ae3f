// Makes docs/screenshot.png, the dashboard the README shows: the browser test's jobs in
// a namespace called "myapp", with jobs finishing for a few polls so that the
// throughput chart's current minute grows. Not a test; run it by hand after a UI change:
//
//   CWORK_CLI=build/asan/cwork CWORK_TEST_REDIS_URL=redis://127.0.0.1:6379 \
//     node tests/browser/screenshot.mjs docs/screenshot.png
//
// It writes and then deletes the keys of namespace "myapp" on that server.
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from './redis.mjs';
import { seed, statKey, minuteKey } from './seed.mjs';

const [out] = process.argv.slice(2);
const cli = process.env.CWORK_CLI;
const redisUrl = process.env.CWORK_TEST_REDIS_URL;
if (!out || !cli || !redisUrl) {
  console.error('usage: CWORK_CLI=… CWORK_TEST_REDIS_URL=… node screenshot.mjs OUT.png');
  process.exit(2);
}
const ns = 'myapp';
const nowS = () => Math.floor(Date.now() / 1000);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const redis = await Redis.connect(redisUrl);
await redis.deleteNamespace(ns);
await seed(redis, ns, nowS());
const web = spawn(cli, ['web', '--redis', redisUrl, '--ns', ns, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((resolve, reject) => {
  let buf = '';
  web.stdout.on('data', (d) => {
    buf += d;
    if (buf.includes('\n')) resolve(buf.split('\n')[0]);
  });
  web.on('exit', (code) => reject(new Error(`cwork web exited with ${code}`)));
});
const dir = mkdtempSync(path.join(tmpdir(), 'cwork-chromium-'));
const context = await chromium.launchPersistentContext(dir, {
  executablePath: process.env.CWORK_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1280, height: 800 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
});
let tick = 0;
const bump = setInterval(() => {
  tick++;
  // as a pool writes them: the day's counts and the minute's (PROTOCOL §14.2)
  const n = 3 + Math.round(2 + 2 * Math.sin(tick / 5));
  const [hourKey, mm] = minuteKey(ns, nowS());
  redis.cmd('HINCRBY', statKey(ns, nowS()), 'processed', n).catch(() => {});
  redis.cmd('HINCRBY', hourKey, `${mm}:processed`, n).catch(() => {});
  if (tick % 5 === 0) {
    redis.cmd('HINCRBY', statKey(ns, nowS()), 'failed', 1).catch(() => {});
    redis.cmd('HINCRBY', hourKey, `${mm}:failed`, 1).catch(() => {});
  }
  redis.cmd('HSET', `${ns}:worker_pools:a0b1c2d3e4f5a6b7c8d9e0f1`, 'heartbeat_at', nowS()).catch(() => {});
}, 500);
try {
  const page = context.pages()[0] || (await context.newPage());
  await page.goto(url);
  await page.locator('.cards').waitFor();
  await sleep(40000); // twenty polls
  await page.screenshot({ path: out, fullPage: true });
  console.log(`wrote ${out}`);
} finally {
  clearInterval(bump);
  await context.close();
  rmSync(dir, { recursive: true, force: true });
  web.kill('SIGTERM');
  await redis.deleteNamespace(ns);
  redis.close();
}
