// A namespace with damaged keys (a queue holding a string, the dead set holding a
// string) in headless Chromium, at 1280 and 400 px: every page renders what it can
// read under one banner that names each damaged key once with its type and what it
// should be, the namespace switcher stays, no request fails, and browsing changes
// nothing in Redis. Screenshots go to ARTIFACT_DIR as damage-<page>-<width>.png.
//
//   CWORK_CLI=… CWORK_TEST_REDIS_URL=… node damage.test.mjs ARTIFACT_DIR
import { execFileSync } from 'node:child_process';
import { Redis } from './redis.mjs';
import { setup, results, check, startWeb, stopWeb, shot, checkDump, browse } from './harness.mjs';

const [artifacts] = process.argv.slice(2);
const cli = process.env.CWORK_CLI;
const redisUrl = process.env.CWORK_TEST_REDIS_URL;
if (!artifacts || !cli || !redisUrl) {
  console.error('usage: CWORK_CLI=… CWORK_TEST_REDIS_URL=… node damage.test.mjs ARTIFACT_DIR');
  process.exit(2);
}
setup({ artifacts, cli, redisUrl });

const cworkCmd = (ns, args) => execFileSync(cli, [...args, '--redis', redisUrl, '--ns', ns], { encoding: 'utf8' });

// The report's reproduction: two queues, one of them replaced by a string, and a dead
// set that is a string; a retry and a scheduled job beside them.
async function damage(redis, ns) {
  const id = cworkCmd(ns, ['enqueue', 'good', '{"n":1}']).trim();
  cworkCmd(ns, ['enqueue', 'x', '{}']);
  await redis.cmd('DEL', `${ns}:jobs:x`);
  await redis.cmd('SET', `${ns}:jobs:x`, 'notalist');
  await redis.cmd('SET', `${ns}:dead`, 'x');
  await redis.cmd('ZADD', `${ns}:retry`, '1800000000', '{"name":"good","id":"r1","t":1700000000,"args":{},"fails":1,"err":"boom"}');
  await redis.cmd('ZADD', `${ns}:scheduled`, '1800000000', '{"name":"good","id":"s1","t":1700000000,"args":{}}');
  return id;
}

async function suite(redis, width) {
  const ns = `cwt-damage-${process.pid}-${width}`;
  const other = `${ns}-other`;
  await redis.deleteNamespace(ns);
  await redis.deleteNamespace(other);
  const id = await damage(redis, ns);
  cworkCmd(other, ['enqueue', 'fine', '{}']);
  const before = await redis.dump(ns);
  const web = await startWeb(['--ns', ns, '--ns', other]);
  const pages = [
    ['dashboard', ''],
    ['queues', ''],
    ['processes', ''],
    ['retry', ''],
    ['scheduled', ''],
    ['dead', ''],
    ['job', id],
  ];
  try {
    await browse(width, async (page) => {
      for (const [view, arg] of pages) {
        await page.goto(`${web.url}#/${view}${arg ? `/${arg}` : ''}`);
        const banner = page.locator('#damaged:not([hidden])');
        await banner.waitFor();
        await page.waitForFunction(() => !document.querySelector('main')?.textContent.includes('Loading…'));
        const items = await banner.locator('li').allTextContents();
        // every page reads the summary (queues, set sizes): both keys, each once
        const queue = items.filter((t) => t.startsWith(`${ns}:jobs:x `));
        const dead = items.filter((t) => t.startsWith(`${ns}:dead `));
        check(queue.length === 1 && queue[0].includes('is a string, expected a list (queue of x)'), `${view} at ${width}: the banner names ${ns}:jobs:x once with its types (${items.join(' | ')})`);
        check(dead.length === 1 && dead[0].includes('is a string, expected a zset (the dead set)'), `${view} at ${width}: the banner names ${ns}:dead once with its types`);
        check(items.length === 2, `${view} at ${width}: nothing else is named (${items.length})`);
        const picker = page.locator('#ns-pick');
        check(await picker.isVisible(), `${view} at ${width}: the namespace switcher stays`);
        check((await picker.locator('option').allTextContents()).join(',') === `${ns},${other}`, `${view} at ${width}: it offers both namespaces`);
        check(!(await page.locator('#message.stale').count()), `${view} at ${width}: no "not up to date" line`);
        await shot(page, `damage-${view}`, width);
      }
      // what the pages still show: the good queue and its jobs, the retry job, the job page
      await page.goto(`${web.url}#/queues`);
      await page.locator('main', { hasText: 'good' }).waitFor();
      check(true, `queues at ${width}: the good queue is listed`);
      await page.goto(`${web.url}#/retry`);
      await page.locator('main', { hasText: 'boom' }).waitFor();
      check(true, `retry at ${width}: the retry job is listed`);
      await page.goto(`${web.url}#/job/${id}`);
      await page.locator('main', { hasText: id }).waitFor();
      check(true, `job at ${width}: the job page shows the job`);
      // switching to the clean namespace drops the banner
      await page.selectOption('#ns-pick', other);
      await page.locator('#damaged[hidden]').waitFor({ state: 'attached' });
      check(true, `${width}: the clean namespace shows no banner`);
      await shot(page, 'damage-clean-other', width);
    });
  } finally {
    await stopWeb(web);
  }
  checkDump(await redis.dump(ns), before, `${width}: browsing changed nothing in ${ns}`);
  await redis.deleteNamespace(ns);
  await redis.deleteNamespace(other);
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
