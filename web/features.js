// What cwork does beyond Go's library, as the UI shows it: rate limits (on the Queues
// page), a tracked batch's page, and the Succeeded tab (kept successes and results).
import { el, num, duration, when, whenExact, clamp, nameText } from './dom.js';
import * as api from './api.js';
import { table, jobLink, toggle } from './parts.js';

// ------------------------------------------------------------------ rate limits

// The namespace's rate limits by job name ({} when none is set, or when the server is
// older than the feature: the Queues page then shows no column).
export async function rateLimits() {
  try {
    const list = await api.get('rate_limits');
    return Object.fromEntries(list.map((l) => [l.job_name, l]));
  } catch (e) {
    if (e.status === 404) return {};
    throw e;
  }
}

// "100/1s", with "holding jobs back" while the next start must wait.
export function rateLimitCell(limit) {
  if (!limit) return el('td', { 'data-label': 'Rate limit' }, el('span', { class: 'muted', text: '—' }));
  if (!limit.valid) {
    return el('td', { 'data-label': 'Rate limit' },
      el('span', { class: 'err', text: `"${limit.limit}" is no limit: no jobs start` }));
  }
  return el('td', { 'data-label': 'Rate limit' },
    el('span', { class: 'mono', text: limit.limit }),
    limit.limited_now
      ? el('span', { class: 'state paused limited', text: ` next in ${duration(Math.max(1, Math.ceil(limit.next_in_us / 1e6)))}` })
      : null);
}

// ------------------------------------------------------------------ batches

const CALLBACK_STATES = {
  waiting: 'waiting for the last job',
  enqueued: 'enqueued',
  skipped: 'never: a job died (on success only)',
};

export async function renderBatch(ctx) {
  const id = ctx.arg;
  let b;
  try {
    b = await api.get('batch', { id });
  } catch (e) {
    if (e.status !== 404 && e.status !== 400 && e.status !== 409) throw e;
    // 409: the batch key is damaged (the banner names it too); nothing else to show
    const why = e.status === 409 ? `This batch cannot be read: ${e.message}. The Doctor can repair it.`
      : e.status === 400 ? 'This is no batch id (24 hex digits).'
        : 'No such batch: it never existed, or it finished more than a week ago and expired.';
    return el('section', null,
      el('h2', null, 'Batch ', el('span', { class: 'mono', text: id })),
      el('p', { class: 'empty', text: why }));
  }
  const done = b.succeeded + b.dead;
  const pct = b.total > 0 ? Math.round((100 * done) / b.total) : 0;
  const facts = [
    ['Jobs', el('span', { text: `${num(b.total)}${b.sealed ? '' : ' so far (open: more may join)'}` })],
    ['Pending', el('span', { text: num(b.pending) })],
    ['Succeeded', el('span', { text: num(b.succeeded) })],
    ['Failed, retrying', el('span', { text: num(b.retrying) })],
    ['Dead', el('span', { class: b.dead ? 'err' : null, text: num(b.dead) })],
    ['Callback', el('span', null, el('span', { class: 'name' }, nameText(b.callback)),
      ` (${b.when === 'on_complete' ? 'on complete' : 'on success'}): ${CALLBACK_STATES[b.callback_state] || b.callback_state}`)],
    ['Created', whenExact(b.created_at, ctx.now)],
    b.completed_at ? ['Completed', whenExact(b.completed_at, ctx.now)] : null,
  ].filter(Boolean);
  return el('section', null,
    el('h2', null, 'Batch ', el('span', { class: 'mono', text: b.id })),
    el('progress', { class: 'batch-progress', max: '100', value: String(pct), 'aria-label': `${pct}% of the jobs finished` }),
    el('dl', { class: 'facts' }, facts.map(([k, v]) => [el('dt', { text: k }), el('dd', null, v)])));
}

// The job page's line for a job of a tracked batch (its cwork_batch field).
export function batchFact(ctx, job) {
  if (typeof job.cwork_batch !== 'string' || job.cwork_batch === '') return null;
  return ['Batch', el('a', { class: 'mono', href: ctx.href('batch', job.cwork_batch, {}), text: job.cwork_batch })];
}

// ------------------------------------------------------------------ succeeded

export async function renderSucceeded(ctx) {
  const name = ctx.params.get('name') || '';
  const jobs = await api.get('succeeded', { name, limit: 100 });
  const rows = jobs.map((s) => {
    const key = `succeeded:${s.id}:${s.finished_at_ms}`;
    return el('tr', { key },
      el('td', { 'data-label': 'Finished' }, when(Math.floor(s.finished_at_ms / 1000), ctx.now)),
      el('td', { class: 'name', 'data-label': 'Job' }, nameText(s.name)),
      el('td', { 'data-label': 'ID' }, jobLink(ctx, s.id)),
      el('td', { class: 'num', 'data-label': 'Took', text: s.took_us < 1000 ? `${s.took_us} µs` : s.took_us < 1e6 ? `${(s.took_us / 1000).toFixed(1)} ms` : duration(Math.round(s.took_us / 1e6)) }),
      el('td', { class: 'args', 'data-label': 'Result' }, s.result === null
        ? el('span', { class: 'muted', text: '—' })
        : clamp(s.result, ctx.state.expanded.has(key), () => toggle(ctx, key), `the result of job ${s.id}`)));
  });
  return el('section', null,
    el('h2', { text: 'Succeeded' }),
    el('p', { class: 'muted small', text: 'The last succeeded jobs of the job types that keep them (cwork work --keep-succeeded, cwork_job_options.keep_succeeded), newest first, with their results.' }),
    table(['Finished', 'Job', 'ID', '#Took', 'Result'], rows, name ? `No kept successes of ${name}.` : 'No succeeded jobs are kept: no job type keeps them, or none has succeeded yet.'));
}
