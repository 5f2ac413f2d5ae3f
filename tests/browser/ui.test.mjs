// The web UI in headless Chromium (Debian's /usr/bin/chromium driven by playwright-core),
// at 1280 and at 400 px: every page and every action a person can take, checked on the
// page and in Redis (the whole namespace: a bulk action changes exactly the jobs
// selected). Starts its own `cwork web` servers (two namespaces; read-only; under a
// base path) on free ports. Screenshots of every page at both widths go to
// ARTIFACT_DIR as <page>-<width>.png.
//
//   CWORK_CLI=… CWORK_TEST_REDIS_URL=… node ui.test.mjs ARTIFACT_DIR
import { chromium } from 'playwright-core';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from './redis.mjs';
import { seed, seedOther, statKey, minuteKey, seededMinute, id, DEAD_HTML_ID, LONG_NAME } from './seed.mjs';
import {
  setup, results, check, sleep, nowS, middayZone, servers, startWeb, stopWeb, checkDump, memberIds,
  checkMoved, confirmWith, message, shot, nameUnbroken, gotoView, rowOf, same,
} from './harness.mjs';
import { queueActions } from './queue_page.mjs';

const [artifacts] = process.argv.slice(2);
const cli = process.env.CWORK_CLI;
const redisUrl = process.env.CWORK_TEST_REDIS_URL;
if (!artifacts || !cli || !redisUrl) {
  console.error('usage: CWORK_CLI=… CWORK_TEST_REDIS_URL=… node ui.test.mjs ARTIFACT_DIR');
  process.exit(2);
}
mkdirSync(artifacts, { recursive: true });
setup({ artifacts, cli, redisUrl });

// ------------------------------------------------------------------ the throughput graph

// The graph's totals as its label states them against the seeded history of the same
// window (the route says which minutes it covers; minutes after seededAt's have no seed).
// A minute may turn between the page's read and the route's: then the next poll is
// looked at, up to three times.
async function graphShowsSeededHistory(page, minutes, seededAt, what) {
  let got = '';
  let want = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const label = await page.locator('svg.throughput').getAttribute('aria-label');
    const m = /: ([\d,]+) processed, ([\d,]+) failed/.exec(label || '');
    got = m ? `${m[1].replace(/,/g, '')}/${m[2].replace(/,/g, '')}` : `no totals in "${label}"`;
    const r = await page.evaluate(async (n) => (await fetch(`throughput?minutes=${n}`)).json(), minutes);
    let p = 0;
    let f = 0;
    for (let i = 0; i < r.processed.length && r.first + i * 60 <= seededAt; i++) {
      const [sp, sf] = seededMinute(r.first + i * 60);
      p += sp;
      f += sf;
    }
    want = `${p}/${f}`;
    if (got === want && r.processed.length === minutes) break;
    await sleep(2500);
  }
  check(got === want, `${what}: the graph's totals are the seeded minutes' (${got}, want ${want})`);
}

// ------------------------------------------------------------------ the suite

async function suite(browser, redis, width) {
  const ns = `cwt-browser-${process.pid}-${width}`;
  const other = `${ns}-other`;
  await redis.deleteNamespace(ns);
  await redis.deleteNamespace(other);
  const t0 = nowS();
  await seed(redis, ns, t0);
  await seedOther(redis, other, t0);
  const web = await startWeb(['--ns', ns, '--ns', other]);
  const base = web.url;
  const userDataDir = mkdtempSync(path.join(tmpdir(), 'cwork-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CWORK_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: { width, height: 860 },
    timezoneId: middayZone(t0),
    locale: 'en-US',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const dialogs = [];
  const problems = [];
  let before;
  let want;
  const expected404 = { n: 0 };
  try {
    const page = context.pages()[0] || (await context.newPage());
    page.setDefaultTimeout(10000);
    page.on('dialog', async (d) => {
      dialogs.push(`${d.type()}: ${d.message()}`);
      await d.dismiss();
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() !== 'error') return;
      if (expected404.n > 0 && m.text().includes('404')) {
        expected404.n--;
        return;
      }
      problems.push(`console: ${m.text()}`);
    });
    const pool = 'a0b1c2d3e4f5a6b7c8d9e0f1';
    const beat = () => redis.cmd('HSET', `${ns}:worker_pools:${pool}`, 'heartbeat_at', nowS());

    // ---------------------------------------------------------------- dashboard
    await beat();
    await page.goto(base);
    await page.locator('.cards').waitFor();
    check((await page.title()) === `cwork · ${ns}`, `the title names the namespace (${await page.title()})`);
    const todayCount = Number((await redis.cmd('HGET', statKey(ns, nowS()), 'processed')));
    const processedCard = page.locator('.card', { hasText: 'Processed today' }).locator('.card-value');
    check((await processedCard.textContent()).replace(/,/g, '') === String(todayCount), `the dashboard shows today's count (${todayCount})`);
    check((await page.locator('svg.bars g.day').count()) === 30, 'the history has 30 days');
    // the throughput graph: the pools' per-minute history, there as soon as the page opens
    await page.locator('svg.throughput').waitFor();
    await graphShowsSeededHistory(page, 60, t0, 'the last hour');
    check(await page.locator('.range a.on', { hasText: '1 h' }).count() === 1, 'the graph shows 1 h unless asked');
    await page.click('.range a:text-is("24 h")');
    await page.locator('svg.throughput[aria-label*="24 hours"]').waitFor();
    await graphShowsSeededHistory(page, 1440, t0, 'the last 24 hours');
    await page.click('.range a:text-is("1 h")');
    await page.locator('svg.throughput[aria-label*="last hour"]').waitFor();
    // the Redis panel: the server's own INFO
    const info = await redis.cmd('INFO', 'server');
    const version = /redis_version:([^\r\n]+)/.exec(info)[1];
    const fact = (name) => page.locator('.panel.redis dt', { hasText: name }).locator('xpath=following-sibling::dd[1]');
    await page.locator('.panel.redis dt', { hasText: 'Version' }).waitFor();
    check((await fact('Version').textContent()) === version, `the Redis panel shows the version (${version})`);
    check((await fact('Role').textContent()) === 'master', 'the Redis panel shows the role');
    check(/ (B|KiB|MiB|GiB)/.test(await fact('Memory').textContent()), `the Redis panel shows the memory (${await fact('Memory').textContent()})`);
    check(/^[1-9]/.test(await fact('Clients').textContent()), 'the Redis panel counts the clients');
    // pools finish jobs: the throughput shows it within a few polls (in the day's counts
    // and in the minute's, as a pool writes them)
    let tick = 0;
    const bump = setInterval(() => {
      tick++;
      const n = 20 + 15 * Math.round(2 + 2 * Math.sin(tick / 4));
      const [hourKey, mm] = minuteKey(ns, nowS());
      redis.cmd('HINCRBY', statKey(ns, nowS()), 'processed', n).catch(() => {});
      redis.cmd('HINCRBY', hourKey, `${mm}:processed`, n).catch(() => {});
      if (tick % 6 === 0) redis.cmd('HINCRBY', statKey(ns, nowS()), 'failed', 3).catch(() => {});
      if (tick % 8 === 0) beat().catch(() => {}); // the pool stays live
    }, 500);
    await page.locator('.card', { hasText: 'Now' }).locator('.card-value').filter({ hasText: /[1-9].*\/s/ }).waitFor({ timeout: 15000 }).catch(() => {});
    await sleep(12000); // a few more polls: a line to look at in the screenshot
    const nowText = await page.locator('.card', { hasText: 'Now' }).locator('.card-value').textContent();
    check(/[1-9]/.test(nowText), `the throughput is measured from the polled counters (${nowText})`);
    check((await page.locator('svg.plot polyline.processed').count()) === 1, 'the throughput chart draws a line');
    const longRow = page.locator('table.types tr', { has: page.locator('td.name', { hasText: LONG_NAME }) });
    check((await longRow.locator('td[data-label="Dead"]').textContent()) === '9', 'the dashboard counts 9 dead jobs of the long-named type');
    check(await nameUnbroken(longRow.locator('td.name')), 'the long job name is not broken inside a word');
    const sendRow = page.locator('table.types tr', { has: page.locator('td.name a', { hasText: /^send_email$/ }) });
    check((await sendRow.locator('td[data-label="Waiting"]').textContent()) === '25', 'send_email: 25 waiting');
    check((await sendRow.locator('td[data-label="Last error"] .clamp-text').textContent()) === 'smtp timeout 29', 'send_email: its latest error');
    const resizeRow = page.locator('table.types tr', { has: page.locator('td.name a', { hasText: /^resize_image$/ }) });
    check((await resizeRow.locator('td[data-label="Running"]').textContent()) === '1', 'resize_image: 1 running');
    await shot(page, 'dashboard', width);
    clearInterval(bump);
    // the current minute follows the pools' writes while the page is open
    const [hourKey, mm] = minuteKey(ns, nowS());
    const live = Number(await redis.cmd('HGET', hourKey, `${mm}:processed`));
    check(live > 0, `the bumps reached the current minute (${live})`);
    // a reload keeps the history (it is in Redis, not in the page), and 24 h is a click away
    await page.reload();
    await page.locator('svg.throughput').waitFor();
    const title = await page.locator('svg.throughput').getAttribute('aria-label');
    check(/last hour: [1-9][\d,]* processed/.test(title), `after a reload the graph still has the last hour (${title})`);
    await page.click('.range a:text-is("24 h")');
    await page.locator('.range a.on', { hasText: '24 h' }).waitFor();
    await page.locator('svg.throughput[aria-label*="24 hours"]').waitFor();
    check(page.url().includes('range=24h'), 'the range is in the URL (a reload keeps it)');
    await shot(page, 'dashboard-24h', width);
    await page.click('.range a:text-is("1 h")');
    await page.locator('svg.throughput[aria-label*="last hour"]').waitFor();
    // a Redis user that may not run INFO: the panel says so, the page works
    const limitedUser = `${ns}-noinfo`;
    await redis.cmd('ACL', 'SETUSER', limitedUser, 'on', '>pw', '~*', '&*', '+@all', '-info');
    const limited = await startWeb(['--ns', ns], redisUrl.replace('redis://', `redis://${limitedUser}:pw@`));
    await page.goto(limited.url);
    await page.locator('.panel.redis dd', { hasText: 'not permitted' }).waitFor();
    check(await page.locator('.cards').count() === 1, 'without INFO the dashboard still shows, the Redis panel says "not permitted"');
    await shot(page, 'dashboard-redis-not-permitted', width);
    check((await stopWeb(limited)) === 0, 'the limited server stops with status 0');
    await redis.cmd('ACL', 'DELUSER', limitedUser);
    await page.goto(base);
    await page.locator('.cards').waitFor();

    // ---------------------------------------------------------------- queues
    await page.click('#tabs a[data-tab="queues"]');
    const resizeQ = page.locator('main tr', { has: page.locator('td.name a', { hasText: /^resize_image$/ }) });
    await resizeQ.waitFor();
    await resizeQ.getByRole('switch').click();
    await resizeQ.locator('.switch span', { hasText: 'paused' }).waitFor();
    check((await redis.cmd('EXISTS', `${ns}:jobs:resize_image:paused`)) === 1, 'the switch pauses resize_image (in Redis)');
    await message(page, 'resize_image is paused');
    await shot(page, 'queues', width);
    await resizeQ.getByRole('switch').click();
    await resizeQ.locator('.switch span', { hasText: 'running' }).waitFor();
    check((await redis.cmd('EXISTS', `${ns}:jobs:resize_image:paused`)) === 0, 'the switch unpauses it');
    before = await redis.dump(ns);
    await resizeQ.getByRole('button', { name: 'Clear queue resize_image' }).click();
    await confirmWith(page, '3 waiting jobs', false);
    checkDump(await redis.dump(ns), before, 'Cancel clears nothing');
    await resizeQ.getByRole('button', { name: 'Clear queue resize_image' }).click();
    await confirmWith(page, 'Clear the queue resize_image? Its 3 waiting jobs will be deleted');
    await message(page, 'Cleared resize_image: 3 jobs deleted.');
    want = structuredClone(before);
    delete want[`${ns}:jobs:resize_image`];
    checkDump(await redis.dump(ns), want, 'clearing the queue deletes exactly its waiting jobs');

    // ---------------------------------------------------------------- one queue
    await page.locator('main td.name a', { hasText: /^send_email$/ }).click();
    await page.waitForURL(/#\/queue\/send_email/);
    await page.locator('main tr a.id').first().waitFor();
    check((await page.locator('main tr a.id').first().textContent()) === id('q', 1), 'the queue lists the next job to run first');
    await shot(page, 'queue', width);
    await page.locator('.pager a', { hasText: /^2$/ }).click();
    await page.waitForURL(/page=2/);
    await page.locator('main tr td[data-label="Runs"]', { hasText: '#21' }).waitFor();
    check((await page.locator('main tbody tr').count()) === 5, 'page 2 of the queue holds the last 5 jobs');
    await page.selectOption('main select[aria-label="Jobs per page"]', '50');
    await page.waitForURL(/size=50/);
    await page.locator('main tbody tr').nth(24).waitFor();
    check((await page.locator('main tbody tr').count()) === 25 && !(await page.locator('.pager').count()), 'with 50 per page the 25 jobs fit one page');
    await queueActions({ page, redis, ns, width, pool });

    // ---------------------------------------------------------------- processes
    await beat();
    await page.click('#tabs a[data-tab="processes"]');
    await page.locator('main td', { hasText: 'box-1' }).waitFor();
    check(await page.locator('main td', { hasText: 'half done' }).isVisible(), 'the busy worker shows its check-in');
    check((await page.locator('main a.id', { hasText: id('r', 9) }).count()) === 1, 'the busy worker links its job');
    await shot(page, 'processes', width);

    // ---------------------------------------------------------------- retry: order, pages, filter, clamp
    await page.click('#tabs a[data-tab="retry"]');
    await rowOf(page, id('t', 30)).waitFor();
    const firstIds = await page.locator('main tbody a.id').allTextContents();
    check(firstIds[0] === id('t', 30) && firstIds[19] === id('t', 11), 'retry lists the latest retry first');
    check((await page.locator('.pager .step.disabled', { hasText: 'Newer' }).count()) === 1, 'page 1 has no newer page');
    await page.locator('.pager a', { hasText: 'Older' }).click();
    await page.waitForURL(/#\/retry\?page=2/);
    await rowOf(page, id('t', 10)).waitFor();
    const olderIds = await page.locator('main tbody a.id').allTextContents();
    check(olderIds.length === 10 && olderIds[0] === id('t', 10) && olderIds[9] === id('t', 1), 'Older shows the older jobs, newest of them first');
    await page.locator('.pager a', { hasText: 'Newer' }).click();
    await rowOf(page, id('t', 30)).waitFor();
    check(!page.url().includes('page='), 'Newer goes back to page 1');
    const longErr = rowOf(page, id('t', 30)).locator('td.err');
    await longErr.getByRole('button', { name: /Show all of the error/ }).click();
    await longErr.locator('.clamp.open').waitFor();
    await sleep(2600); // a refresh
    check((await longErr.locator('.clamp.open').count()) === 1 && (await longErr.getByRole('button').getAttribute('aria-expanded')) === 'true', 'an expanded error stays expanded across refreshes');
    check((await longErr.locator('.clamp-text').textContent()).includes('retries exhausted soon'), 'the whole error shows');
    await shot(page, 'retry', width);
    await page.selectOption('main select[aria-label="Filter by job name"]', 'resize_image');
    await page.waitForURL(/name=resize_image/);
    await page.locator('main .list-foot', { hasText: 'of 10 jobs' }).waitFor();
    check((await page.locator('main tbody td.name').allTextContents()).every((n) => n === 'resize_image'), 'the filter lists resize_image jobs only');
    await page.selectOption('main select[aria-label="Filter by job name"]', '');
    await page.locator('main .list-foot', { hasText: 'of 30 jobs' }).waitFor();

    // ---------------------------------------------------------------- refresh keeps focus, selection and scroll
    const pick = async (jid) => {
      await rowOf(page, jid).getByRole('checkbox').check();
    };
    await pick(id('t', 29));
    await pick(id('t', 27));
    await pick(id('t', 25));
    await page.locator('.selection-bar', { hasText: '3 selected' }).waitFor();
    await page.locator('#message .dismiss').click().catch(() => {}); // nothing moves the page meanwhile
    const perPage = page.locator('main select[aria-label="Jobs per page"]');
    await perPage.focus();
    await perPage.evaluate((n) => { n.cworkMarked = true; }); // a property: the patch keeps the element
    await page.evaluate(() => window.scrollTo(0, 240));
    const anchor = rowOf(page, id('t', 20));
    const top = async () => (await anchor.boundingBox()).y;
    const scrolled = await page.evaluate(() => window.scrollY);
    const topBefore = await top();
    await sleep(4500); // two refreshes
    check(await page.evaluate(() => document.activeElement && document.activeElement.cworkMarked === true), 'the refresh keeps the focus on the same control');
    const scrolledAfter = await page.evaluate(() => window.scrollY);
    check(scrolled > 0 && scrolledAfter === scrolled && Math.abs((await top()) - topBefore) < 1, `the refresh keeps the scroll position (${scrolled} → ${scrolledAfter})`);
    check((await page.locator('main tbody input[type=checkbox]:checked').count()) === 3, 'the refresh keeps the 3 rows selected');

    // ---------------------------------------------------------------- retry: bulk delete, bulk run now, single run now, delete all
    before = await redis.dump(ns);
    await page.locator('.selection-bar').getByRole('button', { name: 'Delete selected' }).click();
    await confirmWith(page, 'Delete 3 selected retry jobs?');
    await message(page, 'Deleted 3 retry jobs.');
    want = structuredClone(before);
    const gone = [id('t', 29), id('t', 27), id('t', 25)];
    want[`${ns}:retry`].value = want[`${ns}:retry`].value.filter(([m]) => !gone.includes(JSON.parse(m).id));
    checkDump(await redis.dump(ns), want, 'bulk delete removes exactly the 3 selected retry jobs');
    await page.locator('.selection-bar').waitFor({ state: 'detached' }).catch(() => {});
    check(!(await page.locator('.selection-bar').count()), 'the selection is empty afterwards');

    await pick(id('t', 28));
    await pick(id('t', 24));
    before = await redis.dump(ns);
    await page.locator('.selection-bar').getByRole('button', { name: 'Run now selected' }).click();
    await confirmWith(page, 'Run now: 2 selected retry jobs?');
    await message(page, 'Ran 2 retry jobs now');
    checkMoved(before, await redis.dump(ns), `${ns}:retry`, [id('t', 28), id('t', 24)], ns, 'bulk run now moves exactly the 2 selected retry jobs');

    before = await redis.dump(ns);
    await rowOf(page, id('t', 30)).getByRole('button', { name: `Run now job ${id('t', 30)}` }).click();
    await message(page, 'Ran 1 retry job now');
    checkMoved(before, await redis.dump(ns), `${ns}:retry`, [id('t', 30)], ns, 'Run now moves that one retry job');

    const resizeLeft = before[`${ns}:retry`].value.filter(([m]) => JSON.parse(m).name === 'resize_image' && JSON.parse(m).id !== id('t', 30)).length;
    await page.selectOption('main select[aria-label="Filter by job name"]', 'resize_image');
    // The filtered list, not the one before it (whose foot also says "of N jobs" and
    // whose Delete all deletes every retry job).
    await page.locator('main .list-foot', { hasText: `of ${resizeLeft} job` }).waitFor();
    before = await redis.dump(ns);
    await page.locator('main .toolbar').getByRole('button', { name: 'Delete all' }).click();
    await confirmWith(page, `Delete all ${resizeLeft} retry jobs of resize_image?`);
    await message(page, `Deleted ${resizeLeft} retry jobs.`);
    want = structuredClone(before);
    want[`${ns}:retry`].value = want[`${ns}:retry`].value.filter(([m]) => JSON.parse(m).name !== 'resize_image');
    checkDump(await redis.dump(ns), want, 'Delete all with a filter deletes the retry jobs of that name only');
    await page.locator('main p.empty', { hasText: 'No retry jobs of resize_image.' }).waitFor();

    // ---------------------------------------------------------------- scheduled: bulk, periodic, run all
    await page.click('#tabs a[data-tab="scheduled"]');
    await rowOf(page, id('s', 1)).waitFor();
    check((await page.locator('main tbody a.id').first().textContent()) === id('s', 1), 'scheduled lists the soonest first');
    const periodic = page.locator('section.periodic tr', { hasText: '0 * * * *' });
    await periodic.waitFor();
    const nextText = await periodic.locator('td[data-label="Next"]').textContent();
    check((await periodic.locator('td.name').textContent()) === 'report' && /^in \S.* · \d\d:\d\d:\d\d/.test(nextText), `the periodic job shows its spec and next fire time, relative and exact, today as a time only (${nextText})`);
    const tomorrow = page.locator('section.periodic tr', { hasText: '0 3 * * *' });
    const tomorrowText = await tomorrow.locator('td[data-label="Next"]').textContent();
    check(/^in \d+h \d+m · [A-Z][a-z]{2} \d{1,2}, \d{4}, 03:00:00/.test(tomorrowText), `a fire time on another day shows its date (${tomorrowText})`);
    for (const row of [periodic, tomorrow]) {
      const fits = await row.locator('td[data-label="Next"]').evaluate((td) => td.scrollWidth <= td.clientWidth && td.getBoundingClientRect().right <= document.documentElement.clientWidth);
      check(fits, `the next fire time fits its cell at ${width} px`);
    }
    await shot(page, 'scheduled', width);
    // "select every job on this page": the table's header, or the toolbar's on a phone
    const selectPage = page.locator('main input[aria-label="Select every job on this page"]:visible');
    check((await selectPage.count()) === 1, 'one visible "select the page" checkbox');
    await selectPage.check();
    await page.locator('.selection-bar', { hasText: '6 selected' }).waitFor();
    check((await page.locator('main tbody input[type=checkbox]:checked').count()) === 6, 'it selects the 6 jobs of the page');
    await selectPage.uncheck();
    await page.locator('.selection-bar').waitFor({ state: 'detached' });
    check((await page.locator('main tbody input[type=checkbox]:checked').count()) === 0, 'and unselects them');
    await pick(id('s', 2));
    await pick(id('s', 5));
    before = await redis.dump(ns);
    await page.locator('.selection-bar').getByRole('button', { name: 'Delete selected' }).click();
    await confirmWith(page, 'Delete 2 selected scheduled jobs?');
    await message(page, 'Deleted 2 scheduled jobs.');
    want = structuredClone(before);
    want[`${ns}:scheduled`].value = want[`${ns}:scheduled`].value.filter(([m]) => ![id('s', 2), id('s', 5)].includes(JSON.parse(m).id));
    checkDump(await redis.dump(ns), want, 'bulk delete removes exactly the 2 selected scheduled jobs');
    before = await redis.dump(ns);
    await page.locator('main .toolbar').getByRole('button', { name: 'Run all now' }).click();
    await confirmWith(page, 'Run all 4 scheduled jobs now?');
    await message(page, 'Ran 4 jobs now.');
    checkMoved(before, await redis.dump(ns), `${ns}:scheduled`, memberIds(before[`${ns}:scheduled`].value), ns, 'Run all now moves every scheduled job to its queue');
    await page.locator('main p.empty', { hasText: 'No scheduled jobs.' }).waitFor();

    // ---------------------------------------------------------------- dead: markup stays text, pages, bulk retry, all
    await page.click('#tabs a[data-tab="dead"]');
    const htmlRow = rowOf(page, DEAD_HTML_ID);
    await htmlRow.waitFor();
    const errText = await htmlRow.locator('td.err').textContent();
    check(errText.includes('<script>alert(1)</script>') && errText.includes('<img src=x onerror=alert(2)>'), 'the markup in an error shows as text');
    const injected = await page.evaluate(() => ({
      scripts: document.querySelectorAll('body script').length,
      imgs: document.querySelectorAll('img').length,
      bold: document.querySelectorAll('main b').length,
    }));
    check(injected.scripts === 0 && injected.imgs === 0 && injected.bold === 0, `no element was injected (${JSON.stringify(injected)})`);
    const idRow = rowOf(page, id('d', 45));
    check(await nameUnbroken(idRow.locator('a.id')), 'an id is not broken inside (it is one word)');
    check(await nameUnbroken(idRow.locator('td.args .clamp-text')), 'args without a comma stay on one line');
    check(await nameUnbroken(idRow.locator('td.name')), 'the long job name in the list is not broken inside a word');
    await shot(page, 'dead', width);
    await page.locator('.pager a[aria-label="Page 3"]').click();
    await page.waitForURL(/page=3/);
    await rowOf(page, id('d', 1)).waitFor();
    check((await page.locator('main tbody tr').count()) === 6, 'page 3 of 46 dead jobs holds 6');
    check((await page.locator('.pager .step.disabled', { hasText: 'Older' }).count()) === 1, 'the last page has no older page');
    await page.locator('.pager a[aria-label="Page 1"]').click();
    await htmlRow.waitFor();
    await pick(DEAD_HTML_ID);
    await page.locator('.selection-bar', { hasText: '1 selected' }).waitFor();
    // The list answers slowly now: the bar still says "1 selected" when the button is
    // clicked right after the second tick, and the action must take both.
    const slowList = async (r) => {
      await sleep(1500);
      await r.continue().catch(() => {});
    };
    await page.route(/\/dead_jobs\?/, slowList);
    await pick(id('d', 44));
    before = await redis.dump(ns);
    await page.locator('.selection-bar').getByRole('button', { name: 'Retry selected' }).click();
    await confirmWith(page, 'Retry: 2 selected dead jobs?');
    await page.unroute(/\/dead_jobs\?/, slowList);
    await message(page, 'Retried 2 dead jobs (back in their queues).');
    checkMoved(before, await redis.dump(ns), `${ns}:dead`, [DEAD_HTML_ID, id('d', 44)], ns, 'bulk retry moves exactly the 2 selected dead jobs');
    await page.selectOption('main select[aria-label="Filter by job name"]', LONG_NAME);
    await page.locator('main .list-foot', { hasText: 'of 9 jobs' }).waitFor();
    before = await redis.dump(ns);
    await page.locator('main .toolbar').getByRole('button', { name: 'Retry all' }).click();
    await confirmWith(page, `Retry all 9 dead jobs of ${LONG_NAME} now?`);
    await message(page, 'Retried 9 jobs (back in their queues).');
    checkMoved(before, await redis.dump(ns), `${ns}:dead`, memberIds(before[`${ns}:dead`].value.filter(([m]) => JSON.parse(m).name === LONG_NAME)), ns, 'Retry all with a filter retries the dead jobs of that name only');

    // ---------------------------------------------------------------- a job's page
    const jid = id('d', 40 - 1); // a send_email dead job
    await gotoView(page, base, `job/${jid}`); // a shared link
    await page.locator('main h2', { hasText: jid }).waitFor();
    check((await page.locator('dl.facts dd').first().textContent()) === 'send_email', 'the job page shows the job');
    await shot(page, 'job', width);
    before = await redis.dump(ns);
    await page.locator('main .toolbar').getByRole('button', { name: 'Retry' }).click();
    await confirmWith(page, `Retry the send_email job ${jid}?`);
    await message(page, 'Retried 1 dead job');
    checkMoved(before, await redis.dump(ns), `${ns}:dead`, [jid], ns, 'Retry on the job page retries that job');
    await page.fill('#find-id', id('q', 7));
    await page.press('#find-id', 'Enter');
    await page.waitForURL(new RegExp(`#/job/${id('q', 7)}`));
    await page.locator('dl.facts a', { hasText: 'waiting in its queue' }).waitFor();
    check(true, 'Find opens the job page of a waiting job');
    expected404.n = 12; // the job's and its result's, per refresh while the page shows
    await gotoView(page, base, 'job/no-such-job');
    await page.locator('main p.empty', { hasText: 'No job with this id' }).waitFor();
    check(true, 'an unknown id says so');
    // Ids browsers would rewrite in a path ("..") and the empty id: their pages work, and
    // so do their actions.
    for (const odd of ['..', '']) {
      const t = nowS();
      await redis.cmd('ZADD', `${ns}:dead`, t, JSON.stringify({ name: 'send_email', id: odd, t: t - 60, args: { odd }, fails: 4, err: `odd id ${JSON.stringify(odd)}`, failed_at: t }));
      await gotoView(page, base, `job/${odd}`);
      await page.locator('dl.facts dd', { hasText: `odd id ${JSON.stringify(odd)}` }).waitFor();
      check((await page.locator('main h2 .mono').textContent()) === odd, `the job page of the id ${JSON.stringify(odd)} shows that job`);
      before = await redis.dump(ns);
      await page.locator('main .toolbar').getByRole('button', { name: 'Retry' }).click();
      await confirmWith(page, 'Retry the send_email job');
      await message(page, 'Retried 1 dead job');
      checkMoved(before, await redis.dump(ns), `${ns}:dead`, [odd], ns, `Retry on the job page of the id ${JSON.stringify(odd)} retries that job`);
    }

    // ---------------------------------------------------------------- a job's page: cancel
    // A waiting job cancelled from its page leaves its queue for dead, err "cancelled"
    // (PROTOCOL §21); every other key stays as it was.
    const cid = `cancel-me-${width}`;
    await redis.cmd('LPUSH', `${ns}:jobs:send_email`, JSON.stringify({ name: 'send_email', id: cid, t: nowS(), args: {} }));
    await gotoView(page, base, `job/${cid}`);
    await page.locator('dl.facts a', { hasText: 'waiting in its queue' }).waitFor();
    before = await redis.dump(ns);
    await page.locator('main .toolbar').getByRole('button', { name: `Cancel job ${cid}` }).click();
    await confirmWith(page, `Cancel job ${cid}?`);
    await message(page, `Job ${cid} cancelled: moved to the dead set.`);
    {
      const after = await redis.dump(ns);
      const q = `${ns}:jobs:send_email`;
      const d = `${ns}:dead`;
      want = structuredClone(before);
      want[q].value = want[q].value.filter((m) => JSON.parse(m).id !== cid);
      const added = (after[d] ? after[d].value : []).filter(([m]) => JSON.parse(m).id === cid);
      check(added.length === 1 && JSON.parse(added[0][0]).err === 'cancelled' && JSON.parse(added[0][0]).fails === 1,
        'Cancel on the job page moves the waiting job to dead as cancelled');
      check(same(memberIds(after[d].value).sort(), [...memberIds(before[d] ? before[d].value : []), cid].sort()),
        'the dead set gains that job only');
      want[d] = after[d];
      checkDump(after, want, 'Cancel changes the queue and the dead set only');
    }

    // ---------------------------------------------------------------- dead: delete all
    await page.click('#tabs a[data-tab="dead"]');
    // Dead's own toolbar (Retry all), not the page before it.
    await page.locator('main .toolbar').getByRole('button', { name: 'Retry all' }).waitFor();
    await page.locator('main .list-foot', { hasText: /of \d+ jobs/ }).waitFor();
    const deadLeft = await redis.cmd('ZCARD', `${ns}:dead`);
    before = await redis.dump(ns);
    await page.locator('main .toolbar').getByRole('button', { name: 'Delete all' }).click();
    await confirmWith(page, `Delete all ${deadLeft} dead jobs?`);
    await message(page, `Deleted ${deadLeft} dead jobs.`);
    want = structuredClone(before);
    delete want[`${ns}:dead`];
    checkDump(await redis.dump(ns), want, 'Delete all deletes the dead set and nothing else');
    check((await page.locator('#badge-dead').textContent()) === '0', 'the Dead tab counts 0');
    await page.click('#tabs a[data-tab="retry"]');
    await page.locator('main .toolbar').getByRole('button', { name: 'Run all now' }).waitFor();
    await page.locator('main .list-foot', { hasText: /of \d+ jobs/ }).waitFor();
    check((await page.locator('#message.ok').count()) === 0, 'the result of an action on Dead is not shown on Retry');

    // ---------------------------------------------------------------- the namespace switcher
    await page.click('#tabs a[data-tab="queues"]');
    await page.selectOption('#ns-pick', other);
    await page.waitForURL(new RegExp(`ns=${other}`));
    await page.locator('main td.name', { hasText: 'billing_sync' }).waitFor();
    check((await page.title()) === `cwork · ${other}`, 'the title follows the namespace');
    check((await page.locator('#tabs a[data-tab="dead"]').getAttribute('href')).includes(`ns=${other}`), 'the tabs keep the namespace in their links');
    await shot(page, 'namespace', width);
    await page.selectOption('#ns-pick', ns);
    await page.locator('main td.name', { hasText: 'send_email' }).waitFor();
    check(!page.url().includes('ns='), 'back on the default namespace');

    check(dialogs.length === 0, `no alert or other dialog fired (${dialogs.join('; ')})`);
    check(problems.length === 0, `no page errors or console errors (${problems.join('; ')})`);
  } finally {
    await context.close();
    rmSync(userDataDir, { recursive: true, force: true });
  }
  check((await stopWeb(web)) === 0, 'cwork web stops on SIGTERM with status 0');

  // ---------------------------------------------------------------- read-only
  const ro = await startWeb(['--ns', ns, '--read-only']);
  const roDir = mkdtempSync(path.join(tmpdir(), 'cwork-chromium-'));
  const roContext = await chromium.launchPersistentContext(roDir, {
    executablePath: process.env.CWORK_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: { width, height: 860 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
  try {
    const page = roContext.pages()[0] || (await roContext.newPage());
    page.setDefaultTimeout(10000);
    before = await redis.dump(ns);
    for (const view of ['dashboard', 'queues', 'queue/send_email', 'retry', 'scheduled', 'dead', 'job/' + id('q', 7)]) {
      await gotoView(page, ro.url, view);
      await page.locator('main .view section').first().waitFor();
      await page.locator('#read-only:not([hidden])').waitFor();
      const controls = await page.locator('main button.danger, main button.primary, main input[type=checkbox]:not([aria-label="Hide periodic jobs"])').count();
      check(controls === 0, `read-only: no action on ${view} (${controls})`);
    }
    await gotoView(page, ro.url, 'queues');
    await page.locator('main .state', { hasText: 'paused' }).waitFor();
    check(true, 'read-only: the pause state shows as text');
    await shot(page, 'read-only', width);
    const status = await page.evaluate(async () => (await fetch('delete_all?set=retry', { method: 'POST' })).status);
    check(status === 403, `read-only: a change is refused (${status})`);
    const after = await redis.dump(ns);
    checkDump(after, before, 'read-only: nothing changed in Redis');
  } finally {
    await roContext.close();
    rmSync(roDir, { recursive: true, force: true });
  }
  check((await stopWeb(ro)) === 0, 'the read-only server stops with status 0');

  // ---------------------------------------------------------------- under a base path
  const bp = await startWeb(['--ns', ns, '--base-path', '/ops/jobs']);
  const bpDir = mkdtempSync(path.join(tmpdir(), 'cwork-chromium-'));
  const bpContext = await chromium.launchPersistentContext(bpDir, {
    executablePath: process.env.CWORK_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: { width, height: 860 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
  try {
    const page = bpContext.pages()[0] || (await bpContext.newPage());
    page.setDefaultTimeout(10000);
    check(bp.url.endsWith('/ops/jobs/'), `cwork web prints the URL with its base path (${bp.url})`);
    await page.goto(bp.url.replace(/\/$/, '')); // without the '/': redirected
    await page.locator('.cards').waitFor();
    check(new URL(page.url()).pathname === '/ops/jobs/', `the base path without '/' redirects to it with one (${page.url()})`);
    const requests = [];
    page.on('request', (r) => {
      const u = new URL(r.url());
      if (u.protocol.startsWith('http')) requests.push(u.pathname);
    });
    await page.reload();
    await page.locator('.cards').waitFor();
    await page.click('#tabs a[data-tab="dead"]');
    await page.locator('main .view section').first().waitFor();
    const outside = requests.filter((p) => !p.startsWith('/ops/jobs/'));
    check(requests.length > 3 && outside.length === 0, `every request stays under the base path (${outside.join(', ')})`);
    await shot(page, 'base-path', width);
  } finally {
    await bpContext.close();
    rmSync(bpDir, { recursive: true, force: true });
  }
  check((await stopWeb(bp)) === 0, 'the base-path server stops with status 0');
  await redis.deleteNamespace(ns);
  await redis.deleteNamespace(other);
}

// ------------------------------------------------------------------ main

const redis = await Redis.connect(redisUrl);
try {
  // CWORK_BROWSER_WIDTHS=1280 runs one width only (while working on the UI).
  for (const width of (process.env.CWORK_BROWSER_WIDTHS || '1280,400').split(',').map(Number)) {
    console.log(`---- ${width} px`);
    try {
      await suite(null, redis, width);
    } catch (e) {
      check(false, `unexpected at ${width} px: ${e.stack || e.message}`);
    }
  }
} finally {
  for (const w of [...servers]) {
    console.log(`cwork web said:\n${w.stderr()}`);
    await stopWeb(w);
  }
  redis.close();
}
console.log(`${results.passed} passed, ${results.failed} failed`);
process.exit(results.failed ? 1 : 0);
