// The namespaces the browser tests look at, written by hand in Go's bytes: queues (one
// paused, one with a long name), retry, scheduled and dead jobs over several pages
// (errors with markup and many lines), 30 days of counts, a live pool with a busy
// worker, and a published periodic job.

export const DEAD_HTML_ID = 'dead0000000000000000html';
export const LONG_NAME = 'rebuild_search_index_for_every_tenant_nightly';

const id = (prefix, i) => `${prefix}${String(i).padStart(24 - prefix.length, '0')}`;

export function job(name, jid, t, extra = {}) {
  const { args = { n: jid.slice(-3) }, ...rest } = extra;
  return JSON.stringify({ name, id: jid, t, args, ...rest });
}

function utcDate(t) {
  return new Date(t * 1000).toISOString().slice(0, 10);
}

// The per-minute hash of the UTC hour of t and the field prefix of its minute, as pools
// write them (PROTOCOL §14.2).
export function minuteKey(ns, t) {
  const iso = new Date(t * 1000).toISOString();
  return [`${ns}:cwork:stat:${iso.slice(0, 13)}`, iso.slice(14, 16)];
}

// What the seeded history holds for the minute starting at unix second m: a wave, so
// that the graph has a shape; a failure every seventh minute.
export function seededMinute(m) {
  const i = m / 60;
  return [300 + Math.round(120 * Math.sin(i / 30) + 40 * Math.sin(i / 7)), i % 7 === 0 ? 9 : 0];
}

// Writes the main namespace; returns what the tests need to know of it.
export async function seed(redis, ns, now) {
  const p = `${ns}:`;
  const c = [];
  c.push(['SADD', `${p}known_jobs`, 'send_email', 'resize_image', 'report', LONG_NAME]);
  // send_email: 25 waiting, q01 the oldest (at the right end: it runs first)
  for (let i = 1; i <= 25; i++) c.push(['LPUSH', `${p}jobs:send_email`, job('send_email', id('q', i), now - 600 + i, { args: { to: `user${i}@example.com` } })]);
  for (let i = 1; i <= 3; i++) c.push(['LPUSH', `${p}jobs:resize_image`, job('resize_image', id('r', i), now - 30, { args: { path: `/img/${i}.png`, sizes: [64, 128, 256] } })]);
  c.push(['LPUSH', `${p}jobs:report`, job('report', id('m', 1), now - 5)]);
  c.push(['SET', `${p}jobs:report:paused`, '1']);
  // retry: 30 jobs, retry_at now+100+i (the highest is the latest retry)
  const longErr = 'connection refused\n  at net.dial (dial.c:42)\n  at smtp.open (smtp.c:7)\n  at mailer.send (mailer.c:120)\n  at worker.run (worker.c:88)\nretries exhausted soon';
  for (let i = 1; i <= 30; i++) {
    const name = i % 3 === 0 ? 'resize_image' : 'send_email';
    c.push(['ZADD', `${p}retry`, now + 100 + i, job(name, id('t', i), now - 3000, {
      args: { to: `retry${i}@example.com` }, fails: 1 + (i % 3), err: i === 30 ? longErr : `smtp timeout ${i}`, failed_at: now - 60 + i,
    })]);
  }
  // scheduled: 6 jobs
  for (let i = 1; i <= 6; i++) c.push(['ZADD', `${p}scheduled`, now + 3600 * i, job('send_email', id('s', i), now - 10, { args: { digest: i } })]);
  // dead: 45 jobs, died_at now-1000+i; the newest one's error holds markup
  for (let i = 1; i <= 45; i++) {
    const name = i % 5 === 0 ? LONG_NAME : 'send_email';
    c.push(['ZADD', `${p}dead`, now - 1000 + i, job(name, id('d', i), now - 90000, {
      args: { to: `dead${i}@example.com` }, fails: 4, err: `gave up after 4 tries (${i})`, failed_at: now - 1000 + i,
    })]);
  }
  c.push(['ZADD', `${p}dead`, now - 500, job('send_email', DEAD_HTML_ID, now - 90000, {
    args: { to: '<b>bold</b>' }, fails: 4,
    err: 'boom <script>alert(1)</script> and <img src=x onerror=alert(2)>', failed_at: now - 500,
  })]);
  // 30 days of counts (today's grows during the test)
  for (let d = 29; d >= 0; d--) {
    const processed = 800 + ((d * 37) % 11) * 90;
    c.push(['HSET', `${p}cwork:stat:${utcDate(now - d * 86400)}`, 'processed', processed, 'failed', (d * 7) % 40]);
  }
  // 24 hours of per-minute counts up to now's minute (which grows during the tests),
  // one HSET per hour
  const hours = new Map();
  const thisMinute = Math.floor(now / 60) * 60;
  for (let m = thisMinute - 1439 * 60; m <= thisMinute; m += 60) {
    const [key, mm] = minuteKey(ns, m);
    const [processed, failed] = seededMinute(m);
    if (!hours.has(key)) hours.set(key, []);
    hours.get(key).push(`${mm}:processed`, processed, `${mm}:failed`, failed);
  }
  for (const [key, fields] of hours) c.push(['HSET', key, ...fields]);
  // a live pool with one busy worker
  const pool = 'a0b1c2d3e4f5a6b7c8d9e0f1';
  c.push(['SADD', `${p}worker_pools`, pool]);
  c.push(['HSET', `${p}worker_pools:${pool}`, 'heartbeat_at', now, 'started_at', now - 7200,
    'job_names', 'report,resize_image,send_email', 'concurrency', 4, 'worker_ids', 'w0,w1,w2,w3', 'host', 'box-1', 'pid', 4242]);
  c.push(['HSET', `${p}worker:w1`, 'job_name', 'resize_image', 'job_id', id('r', 9), 'started_at', now - 3,
    'args', '{"path":"/img/9.png"}', 'checkin', 'half done', 'checkin_at', now - 1]);
  // a periodic job a cwork pool publishes
  const nextHour = Math.floor(now / 3600) * 3600 + 3600; // when '0 * * * *' fires next
  c.push(['HSET', `${p}cwork:periodic`, JSON.stringify(['report', '0 * * * *']), JSON.stringify({ next_at: nextHour, seen_at: now - 20 })]);
  // and one that fires tomorrow in the browser's zone (harness.mjs middayZone: now is
  // 12:xx there, so nextHour is 13:00 and this 03:00 the next day)
  c.push(['HSET', `${p}cwork:periodic`, JSON.stringify(['report', '0 3 * * *']), JSON.stringify({ next_at: nextHour + 14 * 3600, seen_at: now - 20 })]);
  await redis.all(c);
  return { pool };
}

// The second namespace of the switcher: something else to see.
export async function seedOther(redis, ns, now) {
  await redis.all([
    ['SADD', `${ns}:known_jobs`, 'billing_sync'],
    ['LPUSH', `${ns}:jobs:billing_sync`, job('billing_sync', id('b', 1), now - 2)],
  ]);
}

export function statKey(ns, now) {
  return `${ns}:cwork:stat:${utcDate(now)}`;
}

export { id };
