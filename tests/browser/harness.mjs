// What the browser test's parts share: counting checks, starting and stopping `cwork
// web`, comparing namespace dumps, a browser at one width that counts the page's errors,
// and driving the page (confirmations, result messages, screenshots into the artifact
// directory at each width).
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

let artifacts = '.';
let cli = '';
let redisUrl = '';

// Where screenshots go, and the cwork binary and Redis the servers use.
export function setup(opts) {
  ({ artifacts, cli, redisUrl } = opts);
}

export const results = { passed: 0, failed: 0 };
export function check(cond, what) {
  if (cond) results.passed++;
  else results.failed++;
  console.log(`${cond ? 'ok  ' : 'FAIL'} ${what}`);
  return cond;
}
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const nowS = () => Math.floor(Date.now() / 1000);

// A time zone in which unix seconds t fall between 12:00 and 12:59 local time (an
// Etc/GMT±N zone, whose sign is POSIX's: Etc/GMT-3 is UTC+3). The browser runs in it, so
// that what the page shows does not depend on the hour the test runs at: an hour ahead
// is always today, and fifteen hours ahead always tomorrow.
export function middayZone(t) {
  const ahead = 12 - new Date(t * 1000).getUTCHours(); // -11 … 12
  if (ahead === 0) return 'Etc/UTC';
  return `Etc/GMT${ahead > 0 ? '-' : '+'}${Math.abs(ahead)}`;
}

// ------------------------------------------------------------------ the browser

// Runs fn(page) in a fresh headless Chromium profile at width px (en-US), then checks
// that no request failed (status 400 or more), the page threw nothing and logged no
// console error.
export async function browse(width, fn) {
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
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`${r.status()}: ${new URL(r.url()).pathname}`);
    });
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    await fn(page);
    check(problems.length === 0, `${width} px: no failed request or page error (${problems.join('; ')})`);
  } finally {
    await context.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------ cwork web

export const servers = [];
export async function startWeb(args, url = redisUrl) {
  const proc = spawn(cli, ['web', '--redis', url, '--listen', '127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr.on('data', (d) => { err += d; });
  const base = await new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]);
    });
    proc.on('exit', (code) => reject(new Error(`cwork web exited with ${code}: ${err}`)));
  });
  const w = { proc, url: base, stderr: () => err };
  servers.push(w);
  return w;
}

export async function stopWeb(w) {
  const code = await new Promise((resolve) => {
    w.proc.on('exit', (c) => resolve(c));
    w.proc.kill('SIGTERM');
  });
  servers.splice(servers.indexOf(w), 1);
  return code;
}

// ------------------------------------------------------------------ Redis checks

export function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

// Compares the namespace with the expected dump; prints the keys that differ.
export function checkDump(got, want, what) {
  const sorted = (d) => Object.keys(d).sort().map((k) => [k, d[k]]);
  if (check(same(sorted(got), sorted(want)), what)) return;
  for (const k of new Set([...Object.keys(got), ...Object.keys(want)])) {
    if (!same(got[k], want[k])) console.log(`     ${k}\n       got:  ${JSON.stringify(got[k])}\n       want: ${JSON.stringify(want[k])}`);
  }
}

export function memberIds(zsetValue) {
  return zsetValue.map(([m]) => JSON.parse(m).id);
}

// The expected dump after jobs moved from a set into their queues (pushed at the left
// with new bytes): every other key as before, the set without them, each queue with the
// moved jobs in front of what it held.
export function checkMoved(before, after, setKey, ids, ns, what) {
  const want = structuredClone(before);
  const moved = want[setKey].value.filter(([m]) => ids.includes(JSON.parse(m).id));
  want[setKey].value = want[setKey].value.filter(([m]) => !ids.includes(JSON.parse(m).id));
  if (!want[setKey].value.length) delete want[setKey];
  const queues = new Set(moved.map(([m]) => `${ns}:jobs:${JSON.parse(m).name}`));
  let ok = moved.length === ids.length;
  for (const q of queues) {
    const a = after[q] ? after[q].value : [];
    const b = before[q] ? before[q].value : [];
    const head = a.slice(0, a.length - b.length);
    const wantIds = moved.filter(([m]) => `${ns}:jobs:${JSON.parse(m).name}` === q).map(([m]) => JSON.parse(m).id).sort();
    ok = ok && same(a.slice(a.length - b.length), b) && same(head.map((m) => JSON.parse(m).id).sort(), wantIds);
    want[q] = after[q];
  }
  checkDump(after, want, what);
  check(ok, `${what}: each moved job is at its queue's head, the rest of the queue as it was`);
}

// ------------------------------------------------------------------ page helpers

export async function confirmWith(page, needle, ok = true) {
  const dlg = page.locator('dialog#confirm[open]');
  await dlg.waitFor();
  const text = await page.locator('#confirm-text').textContent();
  check(text.includes(needle), `the confirmation says "${needle}" (${text})`);
  await page.click(ok ? '#confirm-ok' : '#confirm-cancel');
  await page.locator('dialog#confirm[open]').waitFor({ state: 'detached' }).catch(() => {});
  return text;
}

export async function message(page, needle) {
  const m = page.locator('#message.ok, #message.error');
  await m.filter({ hasText: needle }).first().waitFor({ timeout: 10000 }).catch(() => {});
  const text = (await m.count()) ? await m.first().textContent() : '';
  check(text.includes(needle), `the result says "${needle}" (${text})`);
}

export async function shot(page, name, width) {
  await page.screenshot({ path: path.join(artifacts, `${name}-${width}.png`), fullPage: true });
  if (width < 600) await page.screenshot({ path: path.join(artifacts, `${name}-${width}-top.png`) }); // what a phone shows first
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  check(wide <= width, `${name} at ${width} px: nothing wider than the window (${wide} px)`);
}

// Every text piece of a job name (between its break opportunities) on one line: the
// name is not broken inside a word.
export async function nameUnbroken(locator) {
  return locator.evaluate((node) => {
    const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      const r = document.createRange();
      r.selectNodeContents(t);
      const lines = new Set([...r.getClientRects()].map((x) => Math.round(x.top)));
      if (lines.size > 1) return false;
    }
    return true;
  });
}

export async function gotoView(page, base, hash) {
  await page.goto(`${base}#/${hash}`);
}

export function rowOf(page, jobId) {
  return page.locator('main tr', { has: page.locator(`a.id:text-is("${jobId}")`) });
}
