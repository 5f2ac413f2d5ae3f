// A sharded namespace (PROTOCOL §27) in headless Chromium, at 1280 and 400 px: three
// shards made by `cwork enqueue` with a Redis URL's shards=3 (the record written, the jobs
// spread by id), dead jobs and a pool's heartbeat written into shards 1 and 2. The
// dashboard's Shards panel lists each shard's namespace and counts with the pools
// serving it and the Redis server holding it; the header's shard picker narrows every page to one shard (the Dead tab
// then lists that shard's jobs only, and says so), and "Show all" goes back to the
// whole namespace, whose Dead tab merges every shard's. An unsharded namespace shows no
// picker and no panel. Browsing changes nothing in Redis. Screenshots go to
// ARTIFACT_DIR as shards-<state>-<width>.png.
//
//   CWORK_CLI=… CWORK_TEST_REDIS_URL=… node shards.test.mjs ARTIFACT_DIR
import { execFileSync } from 'node:child_process';
import { Redis } from './redis.mjs';
import { setup, results, check, startWeb, stopWeb, shot, same, checkDump, browse } from './harness.mjs';

const [artifacts] = process.argv.slice(2);
const cli = process.env.CWORK_CLI;
const redisUrl = process.env.CWORK_TEST_REDIS_URL;
if (!artifacts || !cli || !redisUrl) {
  console.error('usage: CWORK_CLI=… CWORK_TEST_REDIS_URL=… node shards.test.mjs ARTIFACT_DIR');
  process.exit(2);
}
setup({ artifacts, cli, redisUrl });

const SHARDS = 3;
const shardedUrl = `${redisUrl}${redisUrl.includes('?') ? '&' : '?'}shards=${SHARDS}`;
const shardNs = (ns, i) => (i === 0 ? ns : `{${ns}.${i}}`);

const dead = (id, t) => JSON.stringify({ name: 'send_email', id, t, args: { to: `${id}@example.com` }, fails: 1, err: 'smtp: 550', failed_at: t });

async function seed(redis, ns) {
  for (let k = 0; k < 12; k++) {
    execFileSync(cli, ['enqueue', '--redis', shardedUrl, '--ns', ns, 'send_email', JSON.stringify({ to: `u${k}@example.com` })], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  }
  const t = Math.floor(Date.now() / 1000) - 600;
  await redis.cmd('ZADD', `${shardNs(ns, 1)}:dead`, String(t), dead('dead-in-1', t));
  await redis.cmd('ZADD', `${shardNs(ns, 2)}:dead`, String(t + 60), dead('dead-in-2', t + 60));
  await redis.cmd('SADD', `${shardNs(ns, 1)}:worker_pools`, 'aaaaaaaaaaaaaaaaaaaaaaaa');
  await redis.cmd('HSET', `${shardNs(ns, 1)}:worker_pools:aaaaaaaaaaaaaaaaaaaaaaaa`, 'heartbeat_at', String(Math.floor(Date.now() / 1000)),
    'started_at', String(t), 'concurrency', '4', 'host', 'web-test', 'pid', '1', 'job_names', 'send_email', 'worker_ids', 'w1,w2,w3,w4');
}

async function dumpAll(redis, ns) {
  const all = {};
  for (let i = 0; i < SHARDS; i++) Object.assign(all, await redis.dump(shardNs(ns, i)));
  return all;
}

async function deadIds(page) {
  await page.locator('main tbody tr a.id').first().waitFor();
  return (await page.locator('main tbody a.id').allTextContents()).sort();
}

async function suite(redis, width) {
  const ns = `cwt-shards-${process.pid}-${width}`;
  for (let i = 0; i < SHARDS; i++) await redis.deleteNamespace(shardNs(ns, i));
  await seed(redis, ns);
  const counts = [];
  for (let i = 0; i < SHARDS; i++) counts.push(Number(await redis.cmd('LLEN', `${shardNs(ns, i)}:jobs:send_email`)));
  check(counts.reduce((a, b) => a + b, 0) === 12 && counts.filter((n) => n > 0).length >= 2,
    `cwork enqueue spread 12 jobs over the shards (${counts})`);
  const before = await dumpAll(redis, ns);
  const web = await startWeb(['--ns', ns]);
  try {
    await browse(width, async (page) => {
      await page.goto(`${web.url}#/dashboard`);
      const rows = page.locator('main table.shards tbody tr');
      await rows.nth(SHARDS - 1).waitFor();
      check(await rows.count() === SHARDS, `the Shards panel has a row per shard (${await rows.count()})`);
      for (let i = 0; i < SHARDS; i++) {
        const text = await rows.nth(i).textContent();
        check(text.includes(`Shard ${i}`) && text.includes(shardNs(ns, i)), `row ${i} names shard ${i} and its namespace (${text})`);
        const waiting = await rows.nth(i).locator('td[data-label="Waiting"]').textContent();
        check(waiting === String(counts[i]), `row ${i} counts its ${counts[i]} waiting jobs (${waiting})`);
      }
      const pools = await rows.nth(1).locator('td[data-label="Pools"]').textContent();
      check(pools === '1', `shard 1 has its pool (${pools})`);
      const node = await rows.nth(2).locator('td[data-label="Redis"]').textContent();
      check(/^(\S+:\d+|unix:.+)$/.test(node), `each row names the Redis server holding the shard (${node})`);
      check(await page.locator('#shard-pick').isVisible(), 'the header has a shard picker');
      const options = await page.locator('#shard-pick option').allTextContents();
      check(options.length === SHARDS + 1 && options[0] === `All ${SHARDS} shards`, `the picker offers all and each shard (${options})`);
      check(await page.locator('#badge-dead').textContent() === '2', 'the Dead badge counts every shard');
      const redisHead = await page.locator('main .panel.redis h2').textContent();
      check(redisHead.includes("shard 0's server"), `the Redis panel says whose server it shows (${redisHead})`);
      await shot(page, 'shards-dashboard', width);

      // one shard: the picker narrows the pages to it
      await page.selectOption('#shard-pick', '1');
      await page.locator('#shard-note').waitFor();
      check(page.url().includes('shard=1'), `the shard is in the URL (${page.url()})`);
      await page.locator('#tabs a[data-tab="dead"]').click();
      await page.waitForFunction(() => location.hash.startsWith('#/dead'));
      let ids = await deadIds(page);
      check(same(ids, ['dead-in-1']), `shard 1's Dead tab lists its job only (${ids})`);
      const note = await page.locator('#shard-note').textContent();
      check(note.includes(`Shard 1 (${shardNs(ns, 1)}) alone`), `the page says which shard it shows (${note})`);
      check(await page.locator('#badge-dead').textContent() === '1', 'the Dead badge counts shard 1');
      await shot(page, 'shards-one', width);

      await page.locator('#shard-note a').click();
      await page.waitForFunction(() => !location.hash.includes('shard='));
      await page.locator('main tbody a.id', { hasText: 'dead-in-2' }).waitFor();
      ids = await deadIds(page);
      check(same(ids, ['dead-in-1', 'dead-in-2']), `all shards again: the Dead tab merges them (${ids})`);
      check(await page.locator('#shard-note').isHidden(), 'and the note is gone');
    });
    checkDump(await dumpAll(redis, ns), before, 'browsing the shards changed nothing in Redis');
  } finally {
    await stopWeb(web);
    for (let i = 0; i < SHARDS; i++) await redis.deleteNamespace(shardNs(ns, i));
  }

  // an unsharded namespace: no picker, no panel
  const plain = `cwt-unsharded-${process.pid}-${width}`;
  await redis.deleteNamespace(plain);
  execFileSync(cli, ['enqueue', '--redis', redisUrl, '--ns', plain, 'send_email', '{}'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const web2 = await startWeb(['--ns', plain]);
  try {
    await browse(width, async (page) => {
      await page.goto(`${web2.url}#/dashboard`);
      await page.locator('main table.types').waitFor();
      check(await page.locator('#shard-pick').isHidden(), 'an unsharded namespace has no shard picker');
      check(await page.locator('main .shards-panel').count() === 0, 'and no Shards panel');
    });
  } finally {
    await stopWeb(web2);
    await redis.deleteNamespace(plain);
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
