// The Queues, Processes and job pages.
import { el, num, plural, duration, when, whenExact, clamp, nameText } from './dom.js';
import * as api from './api.js';
import { table, applyJobs, SETS, jobLink, toggle } from './parts.js';
import { rateLimits, rateLimitCell, batchFact } from './features.js';

const STALE_HEARTBEAT_S = 10;

// Names and ids go in the query (?name=, ?id=), never in the path: browsers rewrite
// paths ending in "." or "..", and such names and ids are valid.

// ------------------------------------------------------------------ queues

export function pauseSwitch(ctx, q) {
  const state = q.paused ? 'paused' : 'running';
  if (ctx.readOnly) return el('span', { class: `state ${state}`, text: state });
  return el('label', { class: 'switch' },
    el('input', {
      type: 'checkbox', role: 'switch', checked: q.paused, 'aria-label': `Pause ${q.job_name}`,
      onchange: () => ctx.act({
        run: async () => {
          await api.post(q.paused ? 'unpause' : 'pause', { name: q.job_name });
          return `${q.job_name} is ${q.paused ? 'running again' : 'paused: no pool takes its jobs'}.`;
        },
      }),
    }),
    el('span', { text: state }));
}

export function clearQueueButton(ctx, name, count) {
  if (ctx.readOnly) return null;
  return el('button', {
    type: 'button', class: 'danger small', disabled: count === 0, 'aria-label': `Clear queue ${name}`,
    onclick: () => ctx.act({
      question: `Clear the queue ${name}? Its ${plural(count, 'waiting job')} will be deleted (jobs running now, retries and scheduled jobs stay).`,
      okLabel: 'Clear queue',
      run: async () => {
        const r = await api.post('clear_queue', { name });
        return `Cleared ${name}: ${plural(r.count, 'job')} deleted.`;
      },
    }),
  }, 'Clear');
}

export async function renderQueues(ctx) {
  const limits = await rateLimits();
  const limited = Object.keys(limits).length > 0; // the column only where limits are used
  const rows = ctx.sum.queues.map((q) => el('tr', { key: q.job_name, class: q.paused ? 'paused' : null },
    el('td', { class: 'name', 'data-label': 'Job' }, el('a', { href: ctx.href('queue', q.job_name, {}) }, nameText(q.job_name))),
    el('td', { class: 'num', 'data-label': 'Waiting' }, el('a', { href: ctx.href('queue', q.job_name, {}), text: num(q.count) })),
    el('td', { class: 'num', 'data-label': 'Latency', text: q.count > 0 ? duration(q.latency) : '—' }),
    el('td', { 'data-label': 'State' }, pauseSwitch(ctx, q)),
    limited ? rateLimitCell(limits[q.job_name]) : null,
    ctx.readOnly ? null : el('td', { class: 'actions' }, clearQueueButton(ctx, q.job_name, q.count))));
  return el('section', null,
    el('h2', { text: 'Queues' }),
    table(['Job', '#Waiting', '#Latency', 'State', limited ? 'Rate limit' : null, ctx.readOnly ? null : ''], rows, 'No job names known yet.'),
    limited ? el('p', { class: 'muted small', text: 'Rate limits hold for every cwork pool of the namespace (cwork limit NAME N/DURATION|off); Go pools ignore them.' }) : null);
}

// ------------------------------------------------------------------ cancel

// POST /cancel (PROTOCOL §21): a waiting, scheduled or retry job goes to dead at once; a
// running one's cwork pool stops it and then moves it to dead. A Go pool's job answers
// 409, shown as the error it is.
export function cancelButton(ctx, id, small) {
  if (ctx.readOnly) return null;
  return el('button', {
    type: 'button', class: small ? 'danger small' : 'danger', 'aria-label': `Cancel job ${id}`,
    onclick: () => ctx.act({
      question: `Cancel job ${id}? It will not run (or, running, it is stopped) and lands in the dead set with the error "cancelled".`,
      okLabel: 'Cancel job',
      run: async () => {
        const r = await api.post('cancel', { id });
        return r.place === 'in_progress'
          ? `Job ${id}: its pool ${r.pool} is stopping it; it goes to the dead set.`
          : `Job ${id} cancelled: moved to the dead set.`;
      },
    }),
  }, 'Cancel');
}

const CANCELLABLE = ['queue', 'in_progress', 'retry', 'scheduled'];

// ------------------------------------------------------------------ processes

export async function renderProcesses(ctx) {
  const [pools, busy] = await Promise.all([api.get('worker_pools'), api.get('busy_workers')]);
  const now = ctx.now;
  const poolRows = (pools || []).filter((p) => p.host !== '').map((p) => {
    const age = now - p.heartbeat_at;
    return el('tr', { key: p.worker_pool_id, class: age > STALE_HEARTBEAT_S ? 'stale' : null },
      el('td', { class: 'mono', 'data-label': 'Pool', text: p.worker_pool_id }),
      el('td', { 'data-label': 'Host', text: p.host }),
      el('td', { class: 'num', 'data-label': 'PID', text: String(p.pid) }),
      el('td', { 'data-label': 'Started' }, when(p.started_at, now)),
      el('td', { class: age > STALE_HEARTBEAT_S ? 'warn' : null, 'data-label': 'Heartbeat' }, when(p.heartbeat_at, now)),
      el('td', { class: 'names', 'data-label': 'Job names', text: (p.job_names || []).join(', ') }),
      el('td', { class: 'num', 'data-label': 'Concurrency', text: String(p.concurrency) }));
  });
  const busyRows = (busy || []).map((w) => {
    const key = `busy:${w.worker_id}:${w.job_id}`;
    return el('tr', { key: w.worker_id },
      el('td', { class: 'mono', 'data-label': 'Worker', text: w.worker_id }),
      el('td', { class: 'name', 'data-label': 'Job' }, nameText(w.job_name)),
      el('td', { class: 'id', 'data-label': 'Job id' }, jobLink(ctx, w.job_id)),
      el('td', { class: 'args', 'data-label': 'Args' }, clamp(w.args_json, ctx.state.expanded.has(key), () => toggle(ctx, key), `the args of job ${w.job_id}`, true)),
      el('td', { 'data-label': 'Started' }, when(w.started_at, now)),
      el('td', { 'data-label': 'Check-in' }, w.checkin ? el('span', { class: 'checkin', text: w.checkin }) : null,
        w.checkin_at ? [' ', when(w.checkin_at, now)] : null),
      ctx.readOnly ? null : el('td', { class: 'actions' }, cancelButton(ctx, w.job_id, true)));
  });
  return el('section', null,
    el('h2', { text: 'Worker pools' }),
    table(['Pool', 'Host', '#PID', 'Started', 'Heartbeat', 'Job names', '#Concurrency'], poolRows, 'No worker pools.'),
    el('h2', { text: 'Busy workers' }),
    table(['Worker', 'Job', 'Job id', 'Args', 'Started', 'Check-in', ctx.readOnly ? null : ''], busyRows, 'Nobody is busy.'));
}

// ------------------------------------------------------------------ one job

const PLACES = {
  queue: 'waiting in its queue',
  in_progress: 'running (in a pool\'s in-progress list)',
  retry: 'waiting for a retry',
  scheduled: 'scheduled',
  dead: 'dead',
};

function jobActions(ctx, set, at, job) {
  if (ctx.readOnly || !SETS[set]) return null;
  const s = SETS[set];
  const ref = [{ at, id: job.id }];
  const what = `the ${job.name} job ${job.id}`;
  return el('div', { class: 'toolbar' },
    s.primary ? el('button', {
      type: 'button', class: 'primary',
      onclick: () => ctx.act({
        question: `${s.primary.label} ${what}?`, okLabel: s.primary.label, danger: false,
        run: () => applyJobs(set, s.primary.action, ref),
      }),
    }, s.primary.label) : null,
    set === 'dead' ? null : el('button', {
      type: 'button', class: 'danger',
      onclick: () => ctx.act({
        question: `Kill ${what}? It moves to the dead set now and runs only if retried from there.`,
        okLabel: 'Kill',
        run: async () => {
          const msg = await applyJobs(set, 'kill', ref);
          ctx.go('dead', '', {});
          return msg;
        },
      }),
    }, 'Kill'),
    el('button', {
      type: 'button', class: 'danger',
      onclick: () => ctx.act({
        question: `Delete ${what}?`, okLabel: 'Delete',
        run: async () => {
          const msg = await applyJobs(set, 'delete', ref);
          ctx.go(set, '', {});
          return msg;
        },
      }),
    }, 'Delete'));
}

// The job's result (cwork_job_set_result, a command's fd 4), or null when none is kept.
async function jobResult(id) {
  try {
    return (await api.get('result', { id })).result;
  } catch (e) {
    if (e.status !== 404) throw e;
    return null;
  }
}

export async function renderJob(ctx) {
  const id = ctx.arg;
  let found;
  const resultOf = (result) => (result === null ? null
    : [el('h3', { text: 'Result' }), el('pre', { class: 'json', text: result })]);
  try {
    found = await api.get('job', { id });
  } catch (e) {
    if (e.status !== 404) throw e;
    // A result is kept after a job succeeded, when it is in no queue or set any more:
    // asked for only then, so that a job's page costs one request (and one 404 less).
    const result = id === '' ? null : await jobResult(id);
    const resultPart = resultOf(result);
    return el('section', null,
      el('h2', null, 'Job ', el('span', { class: 'mono', text: id })),
      el('p', { class: 'empty', text: result !== null
        ? 'It succeeded: it is in no queue or set any more; its result is kept below.'
        : 'No job with this id in the queues, in progress, or in the retry, scheduled or dead sets. It may have finished: successful jobs leave no trace unless their type keeps them (cwork succeeded).' }),
      resultPart);
  }
  const j = found.job;
  const set = SETS[found.place] ? found.place : null;
  // The rate limit of its type says whether it would be held back now. (A kept result
  // is asked for only when the job is nowhere any more, above: one request less here.)
  const limits = await rateLimits();
  const now = ctx.now;
  // Clipped text (args, errors) opens with its "more"; the choice survives refreshes.
  const clip = (key, text, label, json) => clamp(text, ctx.state.expanded.has(key), () => toggle(ctx, key), label, json);
  const running = found.place === 'in_progress';
  const facts = [
    ['Name', el('span', { class: 'name' }, nameText(j.name))],
    ['Where', found.place === 'queue'
      ? el('a', { href: ctx.href('queue', j.name, {}), text: PLACES.queue })
      : set ? el('a', { href: ctx.href(set, '', { name: j.name }), text: PLACES[found.place] })
        : el('span', { text: PLACES[found.place] || found.place })],
    ['Enqueued', whenExact(found.first_enqueued_at || j.t, now)],
    found.last_requeued_at ? ['Requeued', [whenExact(found.last_requeued_at, now), el('span', { class: 'muted', text: ' (last moved back to its queue)' })]] : null,
    found.at ? [set ? SETS[set].atLabel : 'At', whenExact(found.at, now)] : null,
    running ? ['Pool', el('span', null,
      el('a', { class: 'mono', href: ctx.href('processes', '', {}), text: found.pool }),
      found.pool_host ? el('span', { class: 'muted', text: ` on ${found.pool_host}, pid ${found.pool_pid}` }) : el('span', { class: 'muted', text: ' (no heartbeat)' }))] : null,
    running ? ['Worker', found.worker ? el('span', { class: 'mono', text: found.worker }) : el('span', { class: 'muted', text: 'not shown by its pool yet' })] : null,
    found.started_at ? ['Started', whenExact(found.started_at, now)] : null,
    found.checkin || found.checkin_at ? ['Check-in', el('span', null,
      el('span', { class: 'checkin', text: found.checkin }), found.checkin_at ? [' ', when(found.checkin_at, now)] : null)] : null,
    j.args !== undefined ? ['Args', el('div', { class: 'args' }, clip(`job-args:${j.id}`, JSON.stringify(j.args), `the args of job ${j.id}`, true))] : null,
    j.fails ? ['Fails', el('span', { text: String(j.fails) })] : null,
    j.failed_at ? ['Failed', whenExact(j.failed_at, now)] : null,
    j.err ? ['Error', el('div', { class: 'err' }, clip(`job-err:${j.id}`, j.err, `the error of job ${j.id}`))] : null,
    j.unique ? ['Unique', el('span', { text: 'yes' })] : null,
    batchFact(ctx, j),
    limits[j.name] ? ['Rate limit', el('span', null, [...rateLimitCell(limits[j.name]).childNodes])] : null,
    j.err === 'cancelled' ? ['Cancelled', el('span', { text: 'yes: it was cancelled (cwork cancel) and will not run again unless retried' })] : null,
  ].filter(Boolean);
  const failures = (found.failures || []).map((f, i) => el('tr', { key: `f${f.fails}:${f.failed_at}` },
    el('td', { class: 'num', 'data-label': 'Run', text: String(f.fails) }),
    el('td', { 'data-label': 'Failed' }, whenExact(f.failed_at, now)),
    el('td', { class: 'num', 'data-label': 'Ran', text: f.ran_at_ms ? duration(f.took_us / 1e6) : '—' }),
    el('td', { class: 'err', 'data-label': 'Error' }, clip(`job-fail:${j.id}:${i}:${f.failed_at}`, f.err, `the error of run ${f.fails}`)),
    el('td', { 'data-label': 'Then', text: f.retry_at ? 'retry' : 'dead' })));
  const phases = (found.phases || []).map((p, i) => el('tr', { key: `p${i}` },
    el('td', { 'data-label': 'State' }, el('span', { class: `state ${p.state}`, text: p.state })),
    el('td', { 'data-label': 'From' }, whenExact(p.from, now)),
    el('td', { class: 'num', 'data-label': 'For', text: p.until ? duration(p.until - p.from) : `${duration(now - p.from)} so far` })));
  return el('section', null,
    el('h2', null, 'Job ', el('span', { class: 'mono', text: j.id })),
    el('dl', { class: 'facts' }, facts.map(([k, v]) => [el('dt', { text: k }), el('dd', null, v)])),
    set ? jobActions(ctx, set, found.at, j) : null,
    !ctx.readOnly && CANCELLABLE.includes(found.place) ? el('div', { class: 'toolbar' }, cancelButton(ctx, j.id, false)) : null,
    phases.length ? [el('h3', { text: 'Time in each state' }), table(['State', 'From', '#For'], phases, '')] : null,
    el('h3', { text: 'Failures' }),
    failures.length ? table(['#Run', 'Failed', '#Ran', 'Error', 'Then'], failures, '')
      : el('p', { class: 'muted', text: j.fails ? `It failed ${plural(j.fails, 'time')}; cwork kept no history of those runs (a Go pool ran them, or it expired): the last error is above.` : 'None: it has not failed.' }),
    el('h3', { text: 'As stored' }),
    el('pre', { class: 'json', text: JSON.stringify(j, null, 2) }));
}
