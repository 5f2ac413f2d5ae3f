// The web UI in headless Chromium (Debian's /usr/bin/chromium driven by playwright-core):
// run by run.sh, which prepared the namespace (a queue of 2 send_email jobs, a dead job
// whose error holds HTML) and started `cwork web`. This script checks what a person
// sees and clicks; run.sh checks Redis afterwards.
//
//   node ui.test.mjs URL ARTIFACT_DIR DEAD_JOB_ID
import { chromium } from 'playwright-core';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const [url, artifacts, deadId] = process.argv.slice(2);
if (!url || !artifacts || !deadId) {
  console.error('usage: node ui.test.mjs URL ARTIFACT_DIR DEAD_JOB_ID');
  process.exit(2);
}
mkdirSync(artifacts, { recursive: true });

let passed = 0;
let failed = 0;
function check(cond, what) {
  if (cond) passed++;
  else failed++;
  console.log(`${cond ? 'ok  ' : 'FAIL'} ${what}`);
}

const userDataDir = mkdtempSync(path.join(tmpdir(), 'cwork-chromium-'));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.CWORK_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1280, height: 800 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const dialogs = [];
const problems = [];
try {
  const page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(10000);
  page.on('dialog', async (d) => {
    dialogs.push(`${d.type()}: ${d.message()}`);
    await d.dismiss();
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });

  // Queues: the name, its 2 waiting jobs and a pause switch.
  await page.goto(url);
  const row = page.locator('main tr', { has: page.locator('td.name', { hasText: 'send_email' }) });
  await row.waitFor();
  check((await row.locator('td.num').first().textContent()) === '2', 'queue send_email shows 2 waiting jobs');
  check(await row.getByRole('switch').isVisible(), 'queue has a pause switch');
  check((await page.locator('#badge-dead').textContent()) === '1', 'the Dead tab counts 1 job');

  // Pause and unpause through the switch (POSTs with the page's own Origin).
  await row.getByRole('switch').click();
  await row.locator('.switch span', { hasText: 'paused' }).waitFor();
  check(true, 'pause switch pauses the queue');
  await page.screenshot({ path: path.join(artifacts, 'queues.png'), fullPage: true });
  await row.getByRole('switch').click();
  await row.locator('.switch span', { hasText: 'running' }).waitFor();
  check(true, 'pause switch unpauses the queue');

  // Dead: the error's HTML is shown as text, nothing of it runs or becomes an element.
  await page.click('#tabs a[data-tab="dead"]');
  const dead = page.locator('main tr', { has: page.locator('td.mono', { hasText: deadId }) });
  await dead.waitFor();
  const errText = await dead.locator('td.err').textContent();
  check(errText.includes('<script>alert(1)</script>'), 'the <script> text of the error shows as text');
  check(errText.includes('<img src=x onerror=alert(2)>'), 'the <img onerror> text of the error shows as text');
  check(await dead.locator('td.err').isVisible(), 'the error cell is visible');
  const injected = await page.evaluate(() => ({
    scripts: document.querySelectorAll('body script').length,
    imgs: document.querySelectorAll('img').length,
    bold: document.querySelectorAll('main b').length,
  }));
  check(injected.scripts === 0 && injected.imgs === 0 && injected.bold === 0,
    `no element was injected (${JSON.stringify(injected)})`);
  await page.screenshot({ path: path.join(artifacts, 'ui.png'), fullPage: true });

  // Retry it: the dead list empties (run.sh checks that it is back in its queue).
  await dead.getByRole('button', { name: `Retry job ${deadId}` }).click();
  await page.locator('main p.empty', { hasText: 'No dead jobs.' }).waitFor();
  check(true, 'retry empties the dead list');
  check((await page.locator('#badge-dead').textContent()) === '0', 'the Dead tab counts 0 jobs');

  // Back on Queues, the retried job waits with the others.
  await page.click('#tabs a[data-tab="queues"]');
  await row.locator('td.num', { hasText: /^3$/ }).waitFor();
  check(true, 'queue send_email shows 3 waiting jobs after the retry');

  check(dialogs.length === 0, `no alert or other dialog fired (${dialogs.join('; ')})`);
  check(problems.length === 0, `no page errors or console errors (${problems.join('; ')})`);
} catch (e) {
  check(false, `unexpected: ${e.message}`);
} finally {
  await context.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
