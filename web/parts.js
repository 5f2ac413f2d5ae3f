// Pieces the pages share: tables, pagers, links to jobs, the three sets and the bulk
// action on some of their jobs, and the selection of rows in a list (checkboxes, the
// bar that acts on the selected rows).
import { el, num, plural, nameText } from './dom.js';
import * as api from './api.js';

// The retry, scheduled and dead sets as the lists show them. order: the default order
// of the list (newest: highest score first).
export const SETS = {
  retry: {
    title: 'Retry', route: 'retry_jobs', at: 'retry_at', atLabel: 'Next retry', what: 'retry',
    empty: 'No jobs waiting for a retry.', order: 'newest',
    orders: { newest: 'Latest retry first', oldest: 'Next retry first' },
    primary: { action: 'run_now', label: 'Run now', all: 'run_all', allLabel: 'Run all now' },
  },
  scheduled: {
    title: 'Scheduled', route: 'scheduled_jobs', at: 'run_at', atLabel: 'Runs', what: 'scheduled',
    empty: 'No scheduled jobs.', order: 'oldest',
    orders: { oldest: 'Soonest first', newest: 'Latest first' },
    primary: { action: 'run_now', label: 'Run now', all: 'run_all', allLabel: 'Run all now' },
  },
  dead: {
    title: 'Dead', route: 'dead_jobs', at: 'died_at', atLabel: 'Died', what: 'dead',
    empty: 'No dead jobs.', order: 'newest',
    orders: { newest: 'Newest first', oldest: 'Oldest first' },
    primary: { action: 'retry', label: 'Retry', all: 'retry_all', allLabel: 'Retry all' },
  },
};

export const PAGE_SIZES = [20, 50, 100];

// headers: column titles (null: no column); a leading '#' marks a numeric column, a
// Node is used as it is.
export function table(headers, rows, emptyText, cls) {
  if (rows.length === 0) return el('p', { class: 'empty', text: emptyText });
  const th = (h) => (h instanceof Node ? el('th', { scope: 'col' }, h)
    : el('th', { scope: 'col', class: h.startsWith('#') ? 'num' : null, text: h.replace(/^#/, '') }));
  return el('div', { class: 'table-wrap' },
    el('table', { class: cls || null },
      el('thead', null, el('tr', null, headers.filter((h) => h !== null).map(th))),
      el('tbody', null, rows)));
}

export function jobLink(ctx, id) {
  return el('a', { class: 'mono id', href: ctx.href('job', id, {}) }, id === '' ? el('em', { text: '(empty id)' }) : nameText(id));
}

export function toggle(ctx, key) {
  if (ctx.state.expanded.has(key)) ctx.state.expanded.delete(key);
  else ctx.state.expanded.add(key);
  ctx.refresh();
}

// Numbered pages around the current one, as links (the page is in the URL). labels:
// [previous, next] — "Newer"/"Older" for lists newest first.
export function pager(ctx, page, pages, labels, paramsFor) {
  if (pages <= 1) return null;
  const link = (p, text, extra) => el('a', {
    href: ctx.href(ctx.view, ctx.arg, paramsFor(p)),
    class: `page${p === page ? ' current' : ''}${extra ? ` ${extra}` : ''}`,
    'aria-current': p === page ? 'page' : null,
    'aria-label': typeof text === 'string' && /^\d/.test(text) ? `Page ${p}` : null,
  }, text);
  const numbers = [];
  const add = (p) => numbers.push(link(p, num(p)));
  const near = new Set([1, pages, page - 2, page - 1, page, page + 1, page + 2]);
  let gap = false;
  for (let p = 1; p <= pages; p++) {
    if (near.has(p)) {
      add(p);
      gap = false;
    } else if (!gap) {
      numbers.push(el('span', { class: 'gap', text: '…' }));
      gap = true;
    }
  }
  return el('nav', { class: 'pager', 'aria-label': 'Pages' },
    page > 1 ? link(page - 1, `‹ ${labels[0]}`, 'step') : el('span', { class: 'page step disabled', text: `‹ ${labels[0]}` }),
    numbers,
    page < pages ? link(page + 1, `${labels[1]} ›`, 'step') : el('span', { class: 'page step disabled', text: `${labels[1]} ›` }));
}

export function pageSizeSelect(ctx, size, paramsFor) {
  return el('label', { class: 'inline' }, 'Per page ',
    el('select', {
      'aria-label': 'Jobs per page',
      onchange: (ev) => ctx.go(ctx.view, ctx.arg, paramsFor(Number(ev.target.value))),
    }, PAGE_SIZES.map((n) => el('option', { value: String(n), text: String(n), selected: n === size }))));
}

// Applies action ('delete', 'retry', 'run_now') to the jobs [{at, id}] of set; returns
// the sentence that says what happened.
export async function applyJobs(set, action, jobs) {
  const r = await api.post('apply', { set, action }, jobs);
  const verb = action === 'delete' ? 'Deleted' : action === 'retry' ? 'Retried' : action === 'kill' ? 'Killed' : 'Ran';
  const where = action === 'delete' ? '' : action === 'retry' ? ' (back in their queues)'
    : action === 'kill' ? ' (moved to the dead set)' : ' now (in their queues)';
  let msg = `${verb} ${plural(r.done, `${SETS[set].what} job`)}${r.done ? where : ''}.`;
  if (r.unchanged) msg += ` ${plural(r.unchanged, 'job')} unchanged: ${r.message}.`;
  return msg;
}

// ------------------------------------------------------------------ selecting rows

// The selection of the list shown (key → what an action needs of the row); a new list
// (another view, filter, page…: another scope) starts with none selected.
export function selectionFor(ctx, scope) {
  const st = ctx.state;
  if (st.selectionScope !== scope) {
    st.selection = new Map();
    st.selectionScope = scope;
  }
  return st.selection;
}

// Keeps only the selected rows still on the page (rows: [key, value] of the page's
// rows; a row's value is renewed: a waiting job's place changes as the queue moves).
export function keepOnPage(selection, rows) {
  const onPage = new Map(rows);
  for (const k of [...selection.keys()]) {
    if (onPage.has(k)) selection.set(k, onPage.get(k));
    else selection.delete(k); // gone meanwhile
  }
}

// A checkbox that selects (or unselects) every row of the page: rows as keepOnPage
// takes them. Made twice per page: in the table's header, and in the toolbar for
// narrow screens (no header there: rows are cards).
export function selectPageBox(ctx, selection, rows) {
  if (ctx.readOnly || rows.length === 0) return null;
  const all = rows.every(([k]) => selection.has(k));
  const box = el('input', {
    type: 'checkbox', 'aria-label': 'Select every job on this page', checked: all,
    onchange: (ev) => {
      for (const [k, v] of rows) {
        if (ev.target.checked) selection.set(k, v);
        else selection.delete(k);
      }
      ctx.refresh();
    },
  });
  box.indeterminate = selection.size > 0 && !all;
  return box;
}

// The cell with one row's checkbox.
export function pickCell(ctx, selection, key, value, label) {
  if (ctx.readOnly) return null;
  return el('td', { class: 'pick' }, el('input', {
    type: 'checkbox', 'aria-label': label, checked: selection.has(key),
    onchange: (ev) => {
      if (ev.target.checked) selection.set(key, value);
      else selection.delete(key);
      ctx.refresh();
    },
  }));
}

// The bar that acts on the selected rows. actions: [{label, danger, question(what),
// okLabel(jobs), run(values)}], what and jobs being "3 selected … jobs" and "3 jobs".
// Its buttons read the selection when clicked, not when the bar was drawn: a row ticked
// just before the click (the refresh that redraws the bar still under way) is acted on
// too, and the question counts it.
export function selectionBar(ctx, selection, what, actions) {
  if (ctx.readOnly || selection.size === 0) return null;
  const button = (a) => el('button', {
    type: 'button', class: a.danger ? 'danger' : 'primary',
    onclick: () => {
      const values = [...selection.values()];
      const n = values.length;
      if (n === 0) return;
      ctx.act({
        question: a.question(plural(n, `selected ${what} job`)), okLabel: a.okLabel(plural(n, 'job')), danger: a.danger,
        run: async () => {
          const msg = await a.run(values);
          selection.clear();
          return msg;
        },
      });
    },
  }, a.label);
  return el('div', { class: 'selection-bar', role: 'region', 'aria-label': 'Selected jobs' },
    el('strong', { text: `${num(selection.size)} selected` }),
    actions.filter(Boolean).map(button),
    el('button', { type: 'button', class: 'link', onclick: () => { selection.clear(); ctx.refresh(); } }, 'Clear selection'));
}
