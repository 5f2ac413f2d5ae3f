// The lists people act on: the retry, scheduled and dead sets (filter, search, order,
// page size, numbered pages, selection and bulk actions, run/retry/kill/delete all) and
// the periodic schedules. (A queue's waiting jobs: queue.js.)
import { el, num, plural, when, whenExact, clamp, nameText } from './dom.js';
import * as api from './api.js';
import {
  SETS, PAGE_SIZES, table, jobLink, toggle, pager, pageSizeSelect, applyJobs,
  selectionFor, keepOnPage, selectPageBox, pickCell, selectionBar,
} from './parts.js';

export function positive(v, dflt) {
  const n = Number(v);
  return Number.isInteger(n) && n >= 1 ? n : dflt;
}

export function argsText(args) {
  return args === undefined ? '' : JSON.stringify(args);
}

// ------------------------------------------------------------------ the sets

function listParams(ctx, set) {
  const p = ctx.params;
  const order = p.get('order') === 'newest' || p.get('order') === 'oldest' ? p.get('order') : SETS[set].order;
  const size = PAGE_SIZES.includes(Number(p.get('size'))) ? Number(p.get('size')) : 20;
  // periodic: 'hide' leaves out the instances periodic jobs enqueue ahead (scheduled only)
  const periodic = set === 'scheduled' && p.get('periodic') === 'hide' ? 'hide' : '';
  return { page: positive(p.get('page'), 1), size, order, name: p.get('name') || '', q: p.get('q') || '', periodic };
}

// The URL parameters of the list with some changed (the page goes back to 1 unless
// given).
function paramsWith(lp, set, change) {
  const next = { ...lp, page: 1, ...change };
  return {
    name: next.name,
    q: next.q,
    order: next.order === SETS[set].order ? '' : next.order,
    periodic: next.periodic,
    size: next.size === 20 ? '' : next.size,
    page: next.page === 1 ? '' : next.page,
  };
}

function rowKey(j, at) {
  return `${at}\u0000${j.id}`;
}

function filterSelect(ctx, set, lp, jobs) {
  const names = new Set((ctx.sum.queues || []).map((q) => q.job_name));
  for (const j of jobs) names.add(j.name);
  if (lp.name) names.add(lp.name);
  return el('label', { class: 'inline' }, 'Job ',
    el('select', {
      'aria-label': 'Filter by job name',
      onchange: (ev) => ctx.go(set, '', paramsWith(lp, set, { name: ev.target.value })),
    }, ['', ...[...names].sort()].map((n) => el('option', { value: n, text: n === '' ? 'all' : n, selected: n === lp.name }))));
}

function orderSelect(ctx, set, lp) {
  const orders = SETS[set].orders;
  return el('label', { class: 'inline' }, 'Order ',
    el('select', {
      'aria-label': 'Order',
      onchange: (ev) => ctx.go(set, '', paramsWith(lp, set, { order: ev.target.value })),
    }, Object.entries(orders).map(([v, text]) => el('option', { value: v, text, selected: v === lp.order }))));
}

// Scheduled only: a switch that hides the instances periodic jobs enqueue ahead, which
// would otherwise flood the list (the server filters: ?periodic=hide).
function periodicToggle(ctx, set, lp) {
  if (set !== 'scheduled') return null;
  return el('label', { class: 'inline check' },
    el('input', {
      type: 'checkbox',
      'aria-label': 'Hide periodic jobs',
      checked: lp.periodic === 'hide',
      onchange: (ev) => ctx.go(set, '', paramsWith(lp, set, { periodic: ev.target.checked ? 'hide' : '' })),
    }), 'Hide periodic');
}

// "Run all now"/"Retry all", "Kill all" (retry, scheduled) and "Delete all", for the
// jobs of the filter's name.
function allButtons(ctx, set, lp, count) {
  if (ctx.readOnly) return [];
  const s = SETS[set];
  const scope = lp.name ? `${plural(count, `${s.what} job`)} of ${lp.name}` : `${plural(count, `${s.what} job`)}`;
  const primary = el('button', {
    type: 'button', class: 'primary', disabled: count === 0,
    onclick: () => ctx.act({
      question: set === 'dead'
        ? `Retry all ${scope} now? They go back to their queues.`
        : `Run all ${scope} now? They go to their queues at once.`,
      okLabel: s.primary.allLabel, danger: false,
      run: async () => {
        const r = await api.post(s.primary.all, { set: set === 'dead' ? null : set, name: lp.name });
        let msg = `${set === 'dead' ? 'Retried' : 'Ran'} ${plural(r.count, 'job')}${set === 'dead' ? ' (back in their queues)' : ' now'}.`;
        if (r.stayed) msg += ` ${plural(r.stayed, 'job')} stayed: no pool runs their name, or their queue is damaged.`;
        return msg;
      },
    }),
  }, s.primary.allLabel);
  const del = el('button', {
    type: 'button', class: 'danger', disabled: count === 0,
    onclick: () => ctx.act({
      question: `Delete all ${scope}? This cannot be undone.`,
      okLabel: `Delete ${plural(count, 'job')}`,
      run: async () => {
        const r = await api.post('delete_all', { set, name: lp.name });
        return `Deleted ${plural(r.count, `${s.what} job`)}.`;
      },
    }),
  }, 'Delete all');
  const kill = set === 'dead' ? null : el('button', {
    type: 'button', class: 'danger', disabled: count === 0,
    onclick: () => ctx.act({
      question: killQuestion(`all ${scope}`),
      okLabel: `Kill ${plural(count, 'job')}`,
      run: async () => {
        const r = await api.post('kill_all', { set, name: lp.name });
        return `Killed ${plural(r.count, `${s.what} job`)} (moved to the dead set).`;
      },
    }),
  }, 'Kill all');
  // One group, so that the three wrap together (never "Delete all" alone on a line).
  return el('span', { class: 'all-actions' }, primary, kill, del);
}

// The search box: a substring of the args or the error (GET /search, PROTOCOL §24.2).
function searchForm(ctx, set, lp) {
  const input = el('input', {
    type: 'search', name: 'q', value: lp.q, placeholder: 'Search args and errors',
    'aria-label': `Search the ${SETS[set].what} jobs' args and errors`, maxlength: '256',
  });
  return el('form', {
    class: 'search', role: 'search',
    onsubmit: (ev) => {
      ev.preventDefault();
      ctx.go(set, '', paramsWith(lp, set, { q: input.value.trim(), name: '' }));
    },
  }, input, el('button', { type: 'submit', text: 'Search' }));
}

// What a search read: all of the set, or (the bound hit) only its newest jobs.
function searchNote(ctx, set, lp, data) {
  const scope = data.bounded
    ? `the newest ${num(data.scanned)} of ${plural(data.total, 'job')} (a search reads at most ${num(data.scanned)})`
    : `all ${plural(data.total, `${SETS[set].what} job`)}`;
  return el('p', { class: 'search-note muted small' },
    `${plural(data.count, 'match', 'matches')} for "${lp.q}" in args and errors, newest first, searching ${scope}. `,
    el('a', { href: ctx.href(set, '', paramsWith(lp, set, { q: '' })), text: 'Clear search' }));
}

// Kill (Sidekiq's): a retry or scheduled job to the dead set now.
function killQuestion(what) {
  return `Kill ${what}? They move to the dead set now and run only if retried from there.`;
}

// The bar that acts on the selected rows of a set: its primary action, kill and delete.
function setSelectionBar(ctx, set, selection) {
  const s = SETS[set];
  return selectionBar(ctx, selection, s.what, [
    {
      label: `${s.primary.label} selected`, danger: false,
      question: (what) => `${s.primary.label}: ${what}?`, okLabel: (jobs) => `${s.primary.label} ${jobs}`,
      run: (jobs) => applyJobs(set, s.primary.action, jobs),
    },
    set === 'dead' ? null : {
      label: 'Kill selected', danger: true,
      question: killQuestion, okLabel: (jobs) => `Kill ${jobs}`,
      run: (jobs) => applyJobs(set, 'kill', jobs),
    },
    {
      label: 'Delete selected', danger: true,
      question: (what) => `Delete ${what}? This cannot be undone.`, okLabel: (jobs) => `Delete ${jobs}`,
      run: (jobs) => applyJobs(set, 'delete', jobs),
    },
  ]);
}

function rowActions(ctx, set, j, at) {
  if (ctx.readOnly) return null;
  const s = SETS[set];
  const ref = [{ at, id: j.id }];
  return el('td', { class: 'actions' },
    el('button', {
      type: 'button', class: 'primary small', 'aria-label': `${s.primary.label} job ${j.id}`,
      onclick: () => ctx.act({ run: () => applyJobs(set, s.primary.action, ref) }),
    }, s.primary.label),
    set === 'dead' ? null : el('button', {
      type: 'button', class: 'danger small', 'aria-label': `Kill job ${j.id}`,
      onclick: () => ctx.act({
        question: `Kill the ${j.name} job ${j.id}? It moves to the dead set now.`, okLabel: 'Kill',
        run: () => applyJobs(set, 'kill', ref),
      }),
    }, 'Kill'),
    el('button', {
      type: 'button', class: 'danger small', 'aria-label': `Delete job ${j.id}`,
      onclick: () => ctx.act({
        question: `Delete the ${j.name} job ${j.id}?`, okLabel: 'Delete',
        run: () => applyJobs(set, 'delete', ref),
      }),
    }, 'Delete'));
}

export async function renderSetList(ctx) {
  const set = ctx.view;
  const s = SETS[set];
  const lp = listParams(ctx, set);
  // A search (newest first, over every name) or a page of the set.
  const route = lp.q ? 'search' : s.route;
  const query = lp.q ? { set, q: lp.q, page: lp.page, per_page: lp.size }
    : { page: lp.page, per_page: lp.size, order: lp.order, name: lp.name, periodic: lp.periodic };
  let data = await api.get(route, query);
  const pages = Math.max(1, Math.ceil(data.count / lp.size));
  if (lp.page > pages && data.count > 0) { // the page emptied under us: show the last one
    lp.page = pages;
    data = await api.get(route, { ...query, page: pages });
  }
  const jobs = data.jobs || [];
  const selection = selectionFor(ctx, `${set}?${lp.name}&${lp.q}&${lp.page}&${lp.size}&${lp.order}&${lp.periodic}&${ctx.params.get('ns') || ''}&${ctx.params.get('shard') || ''}`);
  const pageRows = jobs.map((j) => [rowKey(j, j[s.at]), { at: j[s.at], id: j.id }]);
  keepOnPage(selection, pageRows);
  // In the table's header; on narrow screens (no header: rows are cards) in the toolbar.
  const selectAll = selectPageBox(ctx, selection, pageRows);
  const narrowSelectAll = selectPageBox(ctx, selection, pageRows);
  const rows = jobs.map((j) => {
    const at = j[s.at];
    const key = rowKey(j, at);
    const argsKey = `${set}:args:${key}`;
    const errKey = `${set}:err:${key}`;
    return el('tr', { key, class: selection.has(key) ? 'selected' : null },
      pickCell(ctx, selection, key, { at, id: j.id }, `Select job ${j.id}`),
      el('td', { 'data-label': s.atLabel }, when(at, ctx.now)),
      el('td', { class: 'name', 'data-label': 'Job' }, nameText(j.name)),
      el('td', { class: 'id', 'data-label': 'Id' }, jobLink(ctx, j.id)),
      el('td', { class: 'args', 'data-label': 'Args' }, clamp(argsText(j.args), ctx.state.expanded.has(argsKey), () => toggle(ctx, argsKey), `the args of job ${j.id}`, true)),
      set !== 'scheduled' ? el('td', { class: 'num', 'data-label': 'Fails', text: String(j.fails || 0) }) : null,
      set !== 'scheduled' ? el('td', { class: 'err', 'data-label': 'Error' }, j.err ? clamp(j.err, ctx.state.expanded.has(errKey), () => toggle(ctx, errKey), `the error of job ${j.id}`) : null) : null,
      rowActions(ctx, set, j, at));
  });
  const headers = [selectAll, s.atLabel, 'Job', 'Id', 'Args',
    set !== 'scheduled' ? '#Fails' : null, set !== 'scheduled' ? 'Error' : null, ctx.readOnly ? null : ''];
  const labels = lp.order === 'newest' || lp.q ? ['Newer', 'Older'] : ['Earlier', 'Later'];
  const first = (lp.page - 1) * lp.size;
  const counter = data.count === 0 ? '' : `${num(first + 1)}–${num(first + jobs.length)} of ${plural(data.count, lp.q ? 'match' : 'job', lp.q ? 'matches' : undefined)}`;
  const parts = [
    el('div', { class: 'toolbar' },
      el('h2', null, s.title, el('span', { class: 'count', text: lp.name ? ` · ${lp.name}` : '' })),
      lp.q ? null : filterSelect(ctx, set, lp, jobs),
      lp.q ? null : orderSelect(ctx, set, lp),
      lp.q ? null : periodicToggle(ctx, set, lp),
      pageSizeSelect(ctx, lp.size, (size) => paramsWith(lp, set, { size })),
      searchForm(ctx, set, lp),
      el('span', { class: 'spacer' }),
      narrowSelectAll ? el('label', { class: 'select-page' }, narrowSelectAll, ' Select page') : null,
      lp.q ? null : allButtons(ctx, set, lp, data.count)),
    lp.q ? searchNote(ctx, set, lp, data) : null,
    setSelectionBar(ctx, set, selection),
    table(headers, rows, lp.q ? `No ${s.what} job's args or error holds "${lp.q}".` : lp.name ? `No ${s.what} jobs of ${lp.name}.` : s.empty, 'jobs'),
    el('div', { class: 'list-foot' },
      el('span', { class: 'muted small', text: counter }),
      pager(ctx, lp.page, pages, labels, (page) => paramsWith(lp, set, { page }))),
  ];
  if (set === 'scheduled') parts.push(await renderPeriodic(ctx));
  return el('section', null, parts);
}

// ------------------------------------------------------------------ periodic schedules

async function renderPeriodic(ctx) {
  const list = (await api.get('periodic')) || [];
  const rows = list.map((p) => el('tr', { key: `${p.job_name}\u0000${p.spec}` },
    el('td', { class: 'name', 'data-label': 'Job' }, nameText(p.job_name)),
    el('td', { class: 'mono', 'data-label': 'Schedule', text: p.spec }),
    el('td', { 'data-label': 'Next' }, whenExact(p.next_at, ctx.now)),
    el('td', { class: 'muted', 'data-label': 'Known from' }, p.seen_at
      ? ['a cwork pool, ', when(p.seen_at, ctx.now)]
      : 'its instance in the scheduled set')));
  return el('section', { class: 'periodic' },
    el('h2', { text: 'Periodic jobs' }),
    el('p', { class: 'muted small', text: 'What pools schedule by cron spec. cwork pools say so every few minutes; Go pools\' schedules show while an instance waits in the scheduled set (up to 4 minutes ahead).' }),
    table(['Job', 'Schedule', 'Next', 'Known from'], rows, 'No periodic jobs.'));
}
