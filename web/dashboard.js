// The dashboard: today's processed and failed counts, the throughput of the last minutes
// (the daily counters polled and differenced here), the last 30 days, and one row per
// job name (waiting, running, retry, dead, last error). Charts are plain SVG.
import { el, num, plural, duration, when, clamp, nameText } from './dom.js';
import * as api from './api.js';
import { table, toggle } from './parts.js';

const WINDOW_S = 300; // the throughput chart's span
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

function throughputChart(samples, now) {
  const points = [];
  for (let i = 1; i < samples.length; i++) {
    const [p, f] = rate(samples[i - 1], samples[i]);
    points.push({ t: samples[i].t, p, f });
  }
  const max = Math.max(1, ...points.map((x) => x.p));
  // The last 5 minutes once there are; until then the time measured, at least a minute.
  const span = Math.min(WINDOW_S, Math.max(60, samples.length ? now - samples[0].t : 0));
  const x = (t) => Math.max(0, ((t - (now - span)) / span) * W);
  const y = (v) => H - (v / max) * (H - 6);
  const line = (key) => points.map((pt) => `${x(pt.t).toFixed(1)},${y(pt[key]).toFixed(1)}`).join(' ');
  const area = points.length
    ? `M${x(points[0].t).toFixed(1)},${H} L${line('p').replace(/ /g, ' L')} L${x(points[points.length - 1].t).toFixed(1)},${H} Z`
    : '';
  const label = points.length
    ? `Jobs per second over the last ${Math.round((now - samples[0].t) / 60) || 1} minutes, at most ${fmtRate(max)}`
    : 'Collecting throughput samples';
  return el('figure', { class: 'chart' },
    el('div', { class: 'chart-scale' }, el('span', { text: `${fmtRate(max)}/s` }), el('span', { text: '0' })),
    el('svg', { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none', role: 'img', 'aria-label': label, class: 'plot' },
      el('line', { x1: 0, y1: H / 2, x2: W, y2: H / 2, class: 'grid' }),
      area ? el('path', { d: area, class: 'area' }) : null,
      points.length ? el('polyline', { points: line('p'), class: 'processed', 'vector-effect': 'non-scaling-stroke' }) : null,
      points.length ? el('polyline', { points: line('f'), class: 'failed', 'vector-effect': 'non-scaling-stroke' }) : null),
    el('figcaption', { class: 'chart-axis' },
      el('span', { text: `${Math.round(span / 60)} min ago` }),
      el('span', { class: 'legend' }, el('i', { class: 'key processed' }), 'processed ', el('i', { class: 'key failed' }), 'failed'),
      el('span', { text: 'now' })));
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
  const d = await api.get('dashboard', { days: 30 });
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
        el('h2', { text: 'Throughput' }),
        throughputChart(ctx.state.samples, ctx.now),
        el('p', { class: 'muted small', text: `Measured while this page is open (polled every 2 s), for ${duration(ctx.state.samples.length ? ctx.now - ctx.state.samples[0].t : 0)} so far.` })),
      el('div', { class: 'panel' },
        el('h2', { text: `Last ${d.days.length} days` }),
        historyChart(d.days))),
    pool,
    el('h2', { text: 'Jobs' }),
    typesTable(ctx, d),
    el('p', { class: 'muted small', text: 'Counts per day are kept in Redis by cwork pools (40 days); Go pools keep none.' }));
}
