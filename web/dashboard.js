// The dashboard: today's processed and failed counts, the current rate (the daily counters
// polled and differenced here), the throughput per minute of the last hour or day (kept
// by the pools, so a reload keeps it), the last 30 days, the namespace's Redis server,
// a sharded namespace's shards (shards.js), and one row per job name (waiting, running,
// retry, dead, last error). Charts are plain SVG.
import { el, num, plural, duration, when, clamp, nameText } from './dom.js';
import * as api from './api.js';
import { table, toggle } from './parts.js';
import { shardsPanel } from './shards.js';

const WINDOW_S = 60; // how long the live samples (the "Now" card) are kept
const RATE_S = 10; // "now" averages over this much
const W = 600;
const H = 140;

// ------------------------------------------------------------------ throughput

// Keeps one sample per poll: the server's time and the counts per day of the last two
// days (a sum over "today and yesterday" would jump back at midnight when the window
// moves on; per day, a new day simply starts at 0).
function addSample(state, now, days) {
  const byDate = {};
  for (const d of days.slice(-2)) byDate[d.date] = [d.processed, d.failed];
  const s = state.samples;
  if (s.length && now - s[s.length - 1].t < 0.5) return;
  s.push({ t: now, byDate });
  while (s.length > 2 && s[0].t < now - WINDOW_S - 10) s.shift();
}

// Jobs per second between two samples: [processed, failed].
function rate(a, b) {
  const dt = b.t - a.t;
  if (dt <= 0) return [0, 0];
  let p = 0;
  let f = 0;
  for (const [date, [bp, bf]] of Object.entries(b.byDate)) {
    const [ap, af] = a.byDate[date] || [0, 0];
    p += Math.max(0, bp - ap);
    f += Math.max(0, bf - af);
  }
  return [p / dt, f / dt];
}

function currentRate(samples) {
  if (samples.length < 2) return null;
  const last = samples[samples.length - 1];
  let first = samples[samples.length - 2];
  for (let i = samples.length - 2; i >= 0 && last.t - samples[i].t <= RATE_S; i--) first = samples[i];
  return rate(first, last);
}

function fmtRate(r) {
  if (r === null) return '—';
  if (r >= 100) return num(Math.round(r));
  return r.toFixed(r >= 10 ? 1 : 2).replace(/\.?0+$/, '') || '0';
}

// ------------------------------------------------------------------ throughput history

// The per-minute counts the pools keep (GET /throughput, PROTOCOL §14.2): the whole range
// is read when the page opens, the range or the namespace changes, and every 30 s; in
// between each poll reads only the last two minutes, so that the current minute follows
// the pools' once-a-second writes while the page is open.
const RANGES = { '1h': 60, '24h': 1440 };
const FULL_EVERY_S = 30;

async function loadThroughput(ctx, minutes) {
  const key = api.url('throughput', { minutes });
  const st = ctx.state.throughput;
  if (!st || st.key !== key || ctx.now - st.at >= FULL_EVERY_S) {
    const data = await api.get('throughput', { minutes });
    ctx.state.throughput = { key, at: ctx.now, data };
    return data;
  }
  const tail = await api.get('throughput', { minutes: 2 });
  const d = st.data;
  // Moves the window on to the tail's last minute, then takes the tail's counts.
  const last = tail.first + (tail.processed.length - 1) * tail.step;
  while (d.first + (d.processed.length - 1) * d.step < last) {
    d.processed.push(0);
    d.failed.push(0);
    if (d.processed.length > minutes) {
      d.processed.shift();
      d.failed.shift();
      d.first += d.step;
    }
  }
  for (let i = 0; i < tail.processed.length; i++) {
    const j = (tail.first + i * tail.step - d.first) / d.step;
    if (j >= 0 && j < d.processed.length) {
      d.processed[j] = tail.processed[i];
      d.failed[j] = tail.failed[i];
    }
  }
  return d;
}

function clock(t) {
  return new Date(t * 1000).toISOString().slice(11, 16);
}

function throughputChart(d, rangeName) {
  const n = d.processed.length;
  const max = Math.max(1, ...d.processed);
  const x = (i) => (n > 1 ? (i / (n - 1)) * W : W);
  const y = (v) => H - (v / max) * (H - 6);
  const line = (arr) => arr.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
  const total = d.processed.reduce((a, b) => a + b, 0);
  const failed = d.failed.reduce((a, b) => a + b, 0);
  const area = n ? `M0,${H} L${line(d.processed).replace(/ /g, ' L')} L${W},${H} Z` : '';
  const label = `Jobs per minute over the last ${rangeName === '24h' ? '24 hours' : 'hour'}: ${num(total)} processed, ${num(failed)} failed, at most ${num(max)} a minute`;
  return el('figure', { class: 'chart' },
    el('div', { class: 'chart-scale' }, el('span', { text: `${num(max)}/min` }), el('span', { text: '0' })),
    el('svg', { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none', role: 'img', 'aria-label': label, class: 'plot throughput' },
      el('title', { text: label }),
      el('line', { x1: 0, y1: H / 2, x2: W, y2: H / 2, class: 'grid' }),
      area ? el('path', { d: area, class: 'area' }) : null,
      n ? el('polyline', { points: line(d.processed), class: 'processed', 'vector-effect': 'non-scaling-stroke' }) : null,
      n ? el('polyline', { points: line(d.failed), class: 'failed', 'vector-effect': 'non-scaling-stroke' }) : null),
    el('figcaption', { class: 'chart-axis' },
      el('span', { text: n ? `${clock(d.first)} UTC` : '' }),
      el('span', { class: 'legend' }, el('i', { class: 'key processed' }), 'processed ', el('i', { class: 'key failed' }), 'failed'),
      el('span', { text: 'now' })));
}

function rangePicker(ctx, current) {
  return el('span', { class: 'range', role: 'group', 'aria-label': 'Throughput range' },
    Object.keys(RANGES).map((r) => el('a', {
      href: ctx.href('dashboard', '', { range: r === '1h' ? '' : r }),
      class: r === current ? 'on' : null,
      'aria-current': r === current ? 'true' : null,
      text: r === '1h' ? '1 h' : '24 h',
    })));
}

// ------------------------------------------------------------------ Redis

const REDIS_EVERY_S = 5;

// INFO of the namespace's server, read every few seconds; an error is shown in the panel
// instead of failing the page.
async function loadRedis(ctx) {
  const key = api.url('redis_info', {});
  const st = ctx.state.redisInfo;
  if (st && st.key === key && ctx.now - st.at < REDIS_EVERY_S) return st.info;
  let info;
  try {
    info = await api.get('redis_info', {});
  } catch (e) {
    info = { error: e.message };
  }
  ctx.state.redisInfo = { key, at: ctx.now, info };
  return info;
}

function bytes(n) {
  if (n === null || n === undefined) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u ? v.toFixed(v >= 100 ? 0 : 1) : v} ${units[u]}`;
}

// which: '' for an unsharded namespace, else whose server it is ("shard 0's server").
function redisPanel(info, which) {
  const rows = [];
  const row = (k, v, cls) => rows.push(el('dt', { text: k }), el('dd', { class: cls || null }, v));
  if (info.error) {
    row('Status', `could not read INFO: ${info.error}`, 'bad');
  } else if (!info.permitted) {
    row('Status', 'not permitted: this Redis user may not run INFO (ACL +info)', 'muted');
  } else {
    row('Version', info.version);
    row('Role', info.role === 'slave' ? 'replica' : info.role || '—');
    row('Memory', info.maxmemory ? `${bytes(info.used_memory)} of ${bytes(info.maxmemory)}` : `${bytes(info.used_memory)} (no limit)`);
    row('Eviction', info.evicts
      ? `${info.maxmemory_policy}: Redis may delete job keys when memory runs out (jobs lost); use noeviction`
      : info.maxmemory_policy || '—', info.evicts ? 'bad' : null);
    row('Clients', info.connected_clients === null ? '—' : num(info.connected_clients));
    row('Ops/s', info.ops_per_sec === null ? '—' : num(info.ops_per_sec));
    row('Uptime', info.uptime_s === null ? '—' : duration(info.uptime_s));
  }
  return el('div', { class: 'panel redis' },
    el('h2', null, 'Redis', which ? el('span', { class: 'muted small', text: ` · ${which}` }) : null,
      info.evicts ? el('span', { class: 'tag warn', text: 'evicts' }) : null),
    el('dl', { class: 'facts' }, rows));
}

// A sharded namespace's shards may sit on several servers: the panel says whose INFO it
// shows (shard 0's, or the shard looked at; the Shards panel names each shard's server).
function redisWhich(ctx) {
  const s = ctx.state.shards;
  if (!s || s.data.count <= 1) return '';
  return `shard ${ctx.params.get('shard') || '0'}'s server`;
}

// ------------------------------------------------------------------ history

function historyChart(days) {
  const max = Math.max(1, ...days.map((d) => d.processed));
  const bw = W / days.length;
  const bars = days.map((d, i) => {
    const hp = (d.processed / max) * (H - 4);
    const hf = (Math.min(d.failed, d.processed) / max) * (H - 4);
    return el('g', { class: 'day' },
      el('title', { text: `${d.date}: ${num(d.processed)} processed, ${num(d.failed)} failed` }),
      el('rect', { x: (i * bw + 1).toFixed(1), y: 0, width: (bw - 2).toFixed(1), height: H, class: 'hit' }),
      el('rect', { x: (i * bw + 1).toFixed(1), y: (H - hp).toFixed(1), width: (bw - 2).toFixed(1), height: hp.toFixed(1), class: 'processed' }),
      hf > 0 ? el('rect', { x: (i * bw + 1).toFixed(1), y: (H - hf).toFixed(1), width: (bw - 2).toFixed(1), height: hf.toFixed(1), class: 'failed' }) : null);
  });
  const total = days.reduce((n, d) => n + d.processed, 0);
  const failed = days.reduce((n, d) => n + d.failed, 0);
  return el('figure', { class: 'chart' },
    el('div', { class: 'chart-scale' }, el('span', { text: num(max) }), el('span', { text: '0' })),
    el('svg', {
      viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none', role: 'img', class: 'plot bars',
      'aria-label': `Jobs processed per day over the last ${days.length} days: ${num(total)} in all, ${num(failed)} failed`,
    }, bars),
    el('figcaption', { class: 'chart-axis' },
      el('span', { text: days.length ? days[0].date : '' }),
      el('span', { class: 'legend' }, el('i', { class: 'key processed' }), 'processed ', el('i', { class: 'key failed' }), 'failed'),
      el('span', { text: 'today' })));
}

// ------------------------------------------------------------------ cards and types

function card(label, value, sub, cls) {
  return el('div', { class: `card${cls ? ` ${cls}` : ''}` },
    el('div', { class: 'card-label', text: label }),
    el('div', { class: 'card-value', text: value }),
    sub ? el('div', { class: 'card-sub' }, sub) : null);
}

function typesTable(ctx, d) {
  const rows = d.types.map((t) => {
    const errKey = `dash:err:${t.job_name}`;
    return el('tr', { key: t.job_name, class: t.paused ? 'paused' : null },
      el('td', { class: 'name', 'data-label': 'Job' },
        t.known ? el('a', { href: ctx.href('queue', t.job_name, {}) }, nameText(t.job_name)) : el('span', null, nameText(t.job_name)),
        t.paused ? el('span', { class: 'tag', text: 'paused' }) : null,
        t.known ? null : el('span', { class: 'tag warn', title: 'not in known_jobs: no pool registered this name', text: 'unknown' })),
      el('td', { class: 'num', 'data-label': 'Waiting' }, t.waiting ? el('a', { href: ctx.href('queue', t.job_name, {}), text: num(t.waiting) }) : '0'),
      el('td', { class: 'num', 'data-label': 'Running', text: num(t.running) }),
      el('td', { class: 'num', 'data-label': 'Retry' }, t.retry ? el('a', { href: ctx.href('retry', '', { name: t.job_name }), text: num(t.retry) }) : '0'),
      el('td', { class: `num${t.dead ? ' bad' : ''}`, 'data-label': 'Dead' }, t.dead ? el('a', { href: ctx.href('dead', '', { name: t.job_name }), text: num(t.dead) }) : '0'),
      el('td', { class: 'err', 'data-label': 'Last error' }, t.last_error
        ? [clamp(t.last_error, ctx.state.expanded.has(errKey), () => toggle(ctx, errKey), `the last error of ${t.job_name}`),
          el('div', { class: 'muted small' }, when(t.last_failed_at, ctx.now))]
        : null));
  });
  const notes = [];
  if (d.retry_read < d.retry_total) notes.push(`the newest ${num(d.retry_read)} of ${plural(d.retry_total, 'retry job')}`);
  if (d.dead_read < d.dead_total) notes.push(`the newest ${num(d.dead_read)} of ${plural(d.dead_total, 'dead job')}`);
  return [
    table(['Job', '#Waiting', '#Running', '#Retry', '#Dead', 'Last error'], rows, 'No job names known yet.', 'types'),
    notes.length ? el('p', { class: 'muted small note', text: `Retry, dead and last error per job are counted over ${notes.join(' and ')} (a sample, to keep this page light on big sets).` }) : null,
  ];
}

export async function renderDashboard(ctx) {
  const rangeName = RANGES[ctx.params.get('range')] ? ctx.params.get('range') : '1h';
  const [d, tp, redis] = await Promise.all([
    api.get('dashboard', { days: 30 }),
    loadThroughput(ctx, RANGES[rangeName]),
    loadRedis(ctx),
  ]);
  addSample(ctx.state, ctx.now, d.days);
  const sum = ctx.sum;
  const today = d.days[d.days.length - 1] || { processed: 0, failed: 0 };
  const r = currentRate(ctx.state.samples);
  const waiting = sum.queues.reduce((n, q) => n + q.count, 0);
  const failRate = today.failed ? `${((today.failed / today.processed) * 100).toFixed(today.failed * 1000 < today.processed ? 2 : 1)}% of the processed` : 'none so far';
  const pool = d.pool ? el('p', { class: 'muted small' },
    `This process's pool ${d.pool.id}: ${num(d.pool.processed)} processed, ${num(d.pool.failed)} failed, ${num(d.pool.in_flight)} in flight since it started.`) : null;
  return el('section', { class: 'dashboard' },
    el('div', { class: 'cards' },
      card('Processed today', num(today.processed), 'UTC day, every cwork pool'),
      card('Failed today', num(today.failed), failRate, today.failed ? 'bad' : null),
      card('Now', r === null ? '—' : `${fmtRate(r[0])}/s`, r === null ? 'measuring…' : `${fmtRate(r[1])}/s failing`),
      card('Busy', `${num(sum.busy_workers)} / ${num(sum.workers)}`, `workers in ${plural(sum.live_pools, 'live pool')}`),
      card('Waiting', num(waiting), el('a', { href: ctx.href('queues', '', {}), text: 'in queues' })),
      card('Retry', num(sum.retry), el('a', { href: ctx.href('retry', '', {}), text: 'to retry' })),
      card('Scheduled', num(sum.scheduled), el('a', { href: ctx.href('scheduled', '', {}), text: 'later' })),
      card('Dead', num(sum.dead), el('a', { href: ctx.href('dead', '', {}), text: 'gave up' }), sum.dead ? 'bad' : null)),
    el('div', { class: 'charts' },
      el('div', { class: 'panel' },
        el('div', { class: 'panel-head' }, el('h2', { text: 'Throughput' }), rangePicker(ctx, rangeName)),
        throughputChart(tp, rangeName),
        el('p', { class: 'muted small', text: 'Jobs finished per minute (UTC), as every cwork pool counts them in Redis (kept 25 h); the current minute updates while this page is open.' })),
      el('div', { class: 'panel' },
        el('h2', { text: `Last ${d.days.length} days` }),
        historyChart(d.days)),
      redisPanel(redis, redisWhich(ctx))),
    shardsPanel(ctx),
    pool,
    el('h2', { text: 'Jobs' }),
    typesTable(ctx, d),
    el('p', { class: 'muted small', text: 'Counts are kept in Redis by cwork pools, per day for 40 days and per minute for 25 h; Go pools keep none.' }));
}
