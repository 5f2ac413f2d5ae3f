// One queue's page: the jobs waiting in it, next to run first, with their pause switch,
// Clear, and deleting single jobs (a row's Delete, or the selected rows). A waiting job
// is addressed by its id and the place it was listed at: the server looks for it near
// there (the queue moves as pools take jobs) and takes out exactly that entry.
import { el, num, plural, when, clamp, nameText } from './dom.js';
import * as api from './api.js';
import {
  PAGE_SIZES, table, jobLink, toggle, pager, pageSizeSelect,
  selectionFor, keepOnPage, selectPageBox, pickCell, selectionBar,
} from './parts.js';
import { pauseSwitch, clearQueueButton } from './views.js';
import { positive, argsText } from './lists.js';

// Deletes the waiting jobs [{place, id}] of queue name; returns the sentence that says
// what happened.
async function deleteWaiting(name, jobs) {
  const r = await api.post('delete_waiting', { name }, jobs);
  if (r.done === 0 && r.unchanged) return `Nothing deleted: ${r.message}.`;
  let msg = `Deleted ${plural(r.done, 'waiting job')} from ${name}.`;
  if (r.unchanged) msg += ` ${plural(r.unchanged, 'job')} not deleted: ${r.message}.`;
  return msg;
}

function deleteButton(ctx, name, j, place) {
  if (ctx.readOnly) return null;
  return el('td', { class: 'actions' },
    el('button', {
      type: 'button', class: 'danger small', 'aria-label': `Delete job ${j.id}`,
      onclick: () => ctx.act({
        question: `Delete the ${name} job ${j.id}? It is waiting in its queue: it will not run. This cannot be undone.`,
        okLabel: 'Delete',
        run: () => deleteWaiting(name, [{ place, id: j.id }]),
      }),
    }, 'Delete'));
}

export async function renderQueueJobs(ctx) {
  const name = ctx.arg;
  const page = positive(ctx.params.get('page'), 1);
  const size = PAGE_SIZES.includes(Number(ctx.params.get('size'))) ? Number(ctx.params.get('size')) : 20;
  const data = await api.get('queue_jobs', { name, page, per_page: size });
  const q = (ctx.sum.queues || []).find((x) => x.job_name === name) || { job_name: name, count: data.count, paused: false, latency: 0 };
  const first = (page - 1) * size;
  const jobs = data.jobs || [];
  // A row is its job: its id (and, for an id seen twice on the page, which one), not its
  // place, which changes at every refresh while pools take jobs.
  const seen = new Map();
  const keys = jobs.map((j) => {
    const n = seen.get(j.id) || 0;
    seen.set(j.id, n + 1);
    return `${j.id}\u0000${n}`;
  });
  const selection = selectionFor(ctx, `queue?${name}&${page}&${size}&${ctx.params.get('ns') || ''}&${ctx.params.get('shard') || ''}`);
  const pageRows = jobs.map((j, i) => [keys[i], { place: first + i, id: j.id }]);
  keepOnPage(selection, pageRows);
  const selectAll = selectPageBox(ctx, selection, pageRows);
  const narrowSelectAll = selectPageBox(ctx, selection, pageRows);
  const rows = jobs.map((j, i) => {
    const key = keys[i];
    const argsKey = `queue:${name}:${key}`;
    return el('tr', { key, class: selection.has(key) ? 'selected' : null },
      pickCell(ctx, selection, key, { place: first + i, id: j.id }, `Select job ${j.id}`),
      el('td', { class: 'num', 'data-label': 'Runs', text: `#${num(first + i + 1)}` }),
      el('td', { class: 'id', 'data-label': 'Id' }, jobLink(ctx, j.id)),
      el('td', { 'data-label': 'Enqueued' }, when(j.t, ctx.now)),
      el('td', { class: 'args', 'data-label': 'Args' }, clamp(argsText(j.args), ctx.state.expanded.has(argsKey), () => toggle(ctx, argsKey), `the args of job ${j.id}`, true)),
      el('td', { class: 'num', 'data-label': 'Fails', text: String(j.fails || 0) }),
      deleteButton(ctx, name, j, first + i));
  });
  const pages = Math.max(1, Math.ceil(data.count / size));
  const paramsFor = (p, s = size) => ({ page: p === 1 ? '' : p, size: s === 20 ? '' : s });
  const bar = selectionBar(ctx, selection, 'waiting', [{
    label: 'Delete selected', danger: true,
    question: (what) => `Delete ${what} of ${name}? They will not run. This cannot be undone.`,
    okLabel: (n) => `Delete ${n}`,
    run: (picked) => deleteWaiting(name, picked),
  }]);
  return el('section', null,
    el('p', { class: 'crumbs' }, el('a', { href: ctx.href('queues', '', {}), text: '‹ Queues' })),
    el('div', { class: 'toolbar' },
      el('h2', null, 'Queue ', el('span', { class: 'name' }, nameText(name))),
      el('span', { class: 'muted', text: `${plural(data.count, 'job')} waiting` }),
      pauseSwitch(ctx, q),
      pageSizeSelect(ctx, size, (s) => paramsFor(1, s)),
      el('span', { class: 'spacer' }),
      narrowSelectAll ? el('label', { class: 'select-page' }, narrowSelectAll, ' Select page') : null,
      clearQueueButton(ctx, name, data.count)),
    bar,
    table([selectAll, '#Runs', 'Id', 'Enqueued', 'Args', '#Fails', ctx.readOnly ? null : ''], rows, `No ${name} jobs waiting.`, 'jobs'),
    el('div', { class: 'list-foot' },
      el('span', { class: 'muted small', text: data.count ? `next to run first · ${num(first + 1)}–${num(first + rows.length)} of ${num(data.count)}` : '' }),
      pager(ctx, page, pages, ['Sooner', 'Later'], (p) => paramsFor(p))));
}
