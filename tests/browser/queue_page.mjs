// The browser test's part on deleting waiting jobs from a queue's page: one row's
// Delete, the selected rows' "Delete selected", and a job a pool takes while the page
// still shows it. Runs on the page of send_email (25 jobs, id('q', 1) next to run) with
// 50 per page, and checks the whole namespace after each action: exactly the jobs
// asked for are gone, every other byte as it was.
import { id } from './seed.mjs';
import { check, sleep, checkDump, confirmWith, message, shot, rowOf } from './harness.mjs';

// The expected dump: before, with the jobs of these ids gone from the queue.
function without(before, queueKey, ids) {
  const want = structuredClone(before);
  want[queueKey].value = want[queueKey].value.filter((m) => !ids.includes(JSON.parse(m).id));
  return want;
}

async function shownIds(page) {
  return page.locator('main tbody a.id').allTextContents();
}

export async function queueActions({ page, redis, ns, width, pool }) {
  const queueKey = `${ns}:jobs:send_email`;
  let before;

  // ---- one row's Delete: Cancel keeps it, OK deletes exactly that job
  const one = id('q', 3);
  await rowOf(page, one).waitFor();
  before = await redis.dump(ns);
  await rowOf(page, one).getByRole('button', { name: `Delete job ${one}` }).click();
  await confirmWith(page, `Delete the send_email job ${one}?`, false);
  checkDump(await redis.dump(ns), before, 'Cancel on a waiting job deletes nothing');
  await rowOf(page, one).getByRole('button', { name: `Delete job ${one}` }).click();
  await confirmWith(page, `Delete the send_email job ${one}? It is waiting in its queue`);
  await message(page, 'Deleted 1 waiting job from send_email.');
  checkDump(await redis.dump(ns), without(before, queueKey, [one]), 'Delete on a row deletes exactly that waiting job');
  await rowOf(page, one).waitFor({ state: 'detached' });
  check((await page.locator('main tbody tr').count()) === 24, 'its row is gone, the 24 others stay');

  // ---- the selected rows
  const picked = [id('q', 5), id('q', 10), id('q', 20)];
  for (const jid of picked) await rowOf(page, jid).getByRole('checkbox').check();
  await page.locator('.selection-bar', { hasText: '3 selected' }).waitFor();
  check((await page.locator('main tbody input[type=checkbox]:checked').count()) === 3, 'three rows of the queue are selected');
  await page.evaluate(() => window.scrollTo(0, 0)); // sticky bars: a readable screenshot
  await shot(page, 'queue-selected', width);
  before = await redis.dump(ns);
  await page.locator('.selection-bar').getByRole('button', { name: 'Delete selected' }).click();
  await confirmWith(page, 'Delete 3 selected waiting jobs of send_email?');
  await message(page, 'Deleted 3 waiting jobs from send_email.');
  checkDump(await redis.dump(ns), without(before, queueKey, picked), 'Delete selected deletes exactly the 3 selected waiting jobs');
  await page.locator('.selection-bar').waitFor({ state: 'detached' });
  const left = await shownIds(page);
  check(left.length === 21 && picked.every((jid) => !left.includes(jid)) && left.includes(id('q', 4)) && left.includes(id('q', 21)),
    `exactly the selected rows disappear (${left.length} left)`);
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, 'queue-deleted', width);

  // ---- "select the page" selects every row, and unselects them
  const selectPage = page.locator('main input[aria-label="Select every job on this page"]:visible');
  check((await selectPage.count()) === 1, 'the queue has one visible "select the page" checkbox');
  await selectPage.check();
  await page.locator('.selection-bar', { hasText: '21 selected' }).waitFor();
  await selectPage.uncheck();
  await page.locator('.selection-bar').waitFor({ state: 'detached' });
  check((await page.locator('main tbody input[type=checkbox]:checked').count()) === 0, 'and unselects them');

  // ---- a pool takes the next job while the page still shows it selected (the list
  // answers slowly now, so the page cannot catch up before the click)
  const slowList = async (r) => {
    await sleep(2500);
    await r.continue().catch(() => {});
  };
  const next = id('q', 1);
  await rowOf(page, next).getByRole('checkbox').check();
  await page.locator('.selection-bar', { hasText: '1 selected' }).waitFor();
  await page.route(/\/queue_jobs\?/, slowList);
  await redis.cmd('RPOPLPUSH', queueKey, `${queueKey}:${pool}:inprogress`);
  before = await redis.dump(ns);
  await page.locator('.selection-bar').getByRole('button', { name: 'Delete selected' }).click();
  await confirmWith(page, 'Delete 1 selected waiting job of send_email?');
  await message(page, `Nothing deleted: job ${next} is no longer waiting in queue send_email`);
  await page.unroute(/\/queue_jobs\?/, slowList);
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, 'queue-taken', width);
  const said = await page.locator('#message').textContent();
  check(said.includes('a pool may have taken it to run'), `the result says a pool may have taken the job (${said})`);
  checkDump(await redis.dump(ns), before, 'a job a pool took is not deleted, and nothing else in its place');
  await rowOf(page, next).waitFor({ state: 'detached' });
  check(!(await shownIds(page)).includes(next), 'the page no longer shows the job the pool took');
}
