// The cwork web UI: plain ES modules, no build step, served from the library.
// Every piece of job data reaches the page as text (textContent, text nodes or
// attribute values), never as HTML: job names, ids, args and errors are whatever the
// producers wrote. The page polls the server every 2 s (not while a confirmation is
// open or the tab is hidden) and patches the page in place, so that a refresh keeps
// focus, selection, text selection and scroll. Where you are (tab, job, queue, page,
// filter, order, page size, namespace) is in the URL's hash: links can be shared.
import { el, $, patch, delegateEvents, plural, markClamps } from './dom.js';
import * as api from './api.js';
import { renderDashboard } from './dashboard.js';
import { renderQueues, renderProcesses, renderJob } from './views.js';
import { renderBatch, renderSucceeded } from './features.js';
import { renderSetList } from './lists.js';
import { renderQueueJobs } from './queue.js';
import { renderDoctor } from './doctor.js';
import { loadShards, renderShardPick } from './shards.js';

const REFRESH_MS = 2000;
const VIEWS = ['dashboard', 'queues', 'queue', 'processes', 'retry', 'scheduled', 'dead', 'succeeded', 'job', 'batch', 'doctor'];
const TAB_OF = { queue: 'queues', job: null, batch: null };

const state = {
  route: { view: 'dashboard', arg: '', params: new URLSearchParams() },
  summary: null,
  offset: 0, // server clock minus this browser's, in seconds
  namespaces: [],
  shards: null, // GET /shards of the namespace (every shard's counts), or null
  readOnly: false,
  selection: new Map(), // the selected rows of the list shown: key → {at, id}
  selectionScope: '', // the list (view, filter, page…) the selection belongs to
  expanded: new Set(), // clamped cells shown whole
  samples: [], // dashboard counters over time: {t, processed, failed}
  modal: false, // a confirmation is open: no refresh
  busy: false, // a refresh is under way
  again: false, // another was asked for meanwhile
  stale: false, // ... by a click: what is under way is not drawn
};

// ------------------------------------------------------------------ URL

// "#/dead?page=2&name=x", "#/job/<id>", "#/queue/<name>?ns=other&shard=1"; the old
// "#dead" too.
function parseHash() {
  let h = location.hash.replace(/^#\/?/, '');
  const qi = h.indexOf('?');
  const params = new URLSearchParams(qi >= 0 ? h.slice(qi + 1) : '');
  if (qi >= 0) h = h.slice(0, qi);
  const slash = h.indexOf('/');
  let view = slash >= 0 ? h.slice(0, slash) : h;
  let arg = '';
  if (slash >= 0) {
    try {
      arg = decodeURIComponent(h.slice(slash + 1));
    } catch {
      arg = h.slice(slash + 1);
    }
  }
  // "#/job/" is the job with the empty id (a valid id); a queue needs a name.
  if (!VIEWS.includes(view) || (view === 'job' && slash < 0) || ((view === 'queue' || view === 'batch') && !arg)) view = 'dashboard';
  return { view, arg, params };
}

// The hash of a place; params: an object (or URLSearchParams) of what to keep in it. The
// namespace and the shard looked at are kept unless params gives them (shard '': the
// whole namespace).
export function href(view, arg, params) {
  const q = new URLSearchParams();
  const entries = params instanceof URLSearchParams ? [...params] : Object.entries(params || {});
  for (const [k, v] of entries) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  if (state.route.params.get('ns') && !q.has('ns')) q.set('ns', state.route.params.get('ns'));
  const shard = state.route.params.get('shard');
  if (shard && !entries.some(([k]) => k === 'shard')) q.set('shard', shard);
  const qs = q.toString();
  return `#/${view}${arg || view === 'job' ? `/${encodeURIComponent(arg)}` : ''}${qs ? `?${qs}` : ''}`;
}

export function go(view, arg, params) {
  const h = href(view, arg, params);
  if (location.hash !== h) location.hash = h;
  else refresh();
}

// ------------------------------------------------------------------ messages

// The message line under the header: the result of an action (kept 8 s, errors 15 s,
// and only while the page it was said on shows: another tab or namespace drops it) or a
// failing refresh (kept until a refresh works).
let messageUntil = 0;
let messagePage = '';
export function say(text, kind = 'ok') {
  messagePage = pageOf(parseHash());
  const m = $('message');
  if (text) {
    m.replaceChildren(el('span', { text }),
      el('button', { type: 'button', class: 'link dismiss', 'aria-label': 'Dismiss the message', onclick: () => say('', 'ok') }, '×'));
  } else {
    m.replaceChildren();
  }
  m.className = text ? kind : '';
  messageUntil = text ? Date.now() + (kind === 'error' ? 15000 : 8000) : 0;
}

function refreshFailed(text) {
  if (Date.now() < messageUntil && $('message').className !== 'stale') return;
  const m = $('message');
  m.replaceChildren(el('span', { text: `Not up to date: ${text}` }));
  m.className = 'stale';
  messageUntil = 0;
}

function refreshWorked() {
  const m = $('message');
  if (m.className === 'stale' || (m.className && Date.now() >= messageUntil)) {
    m.replaceChildren();
    m.className = '';
  }
}

// The banner of damaged keys (api.takeDamaged): each key once, with its type and what
// it should be; the rest of the page renders as usual, and the Doctor repairs them.
function renderDamaged(list) {
  const box = $('damaged');
  box.hidden = list.length === 0;
  if (!list.length) {
    box.replaceChildren();
    return;
  }
  const ns = state.summary ? state.summary.namespace : '';
  const next = el('div', { id: 'damaged', role: 'alert' },
    el('strong', { text: `${plural(list.length, 'damaged key')} in ${ns || 'this namespace'}: shown as empty. ` }),
    el('a', { href: href('doctor', '', {}), text: 'The Doctor can repair them.' }),
    el('ul', {}, list.map((d) => el('li', {},
      el('code', { text: d.key }),
      ` is a ${d.type}, expected a ${d.expected}${d.what ? ` (${d.what})` : ''}`))));
  patch(box, next);
}

// ------------------------------------------------------------------ confirmation

export function confirmAction(question, okLabel, danger = true) {
  const dlg = $('confirm');
  $('confirm-text').textContent = question;
  $('confirm-ok').textContent = okLabel;
  $('confirm-ok').className = danger ? 'danger' : 'primary';
  state.modal = true;
  dlg.returnValue = 'cancel';
  dlg.showModal();
  return new Promise((resolve) => {
    dlg.addEventListener('close', () => {
      state.modal = false;
      resolve(dlg.returnValue === 'ok');
    }, { once: true });
  });
}

// Runs a change: asks first when there is a question, then says what happened (run
// returns the sentence) and refreshes.
export async function act({ question, okLabel, danger, run }) {
  if (state.readOnly) return;
  if (question && !(await confirmAction(question, okLabel, danger))) return;
  try {
    const msg = await run();
    say(msg || 'Done.', 'ok');
  } catch (e) {
    say(e.message, 'error');
  }
  refresh();
}

// ------------------------------------------------------------------ header

function renderHeader(sum) {
  // one shard looked at: the summary is that shard's, the header still names the namespace
  const ns = state.route.params.get('shard') && state.shards ? state.shards.data.shards[0].ns : sum.namespace;
  document.title = `cwork · ${ns}`;
  const current = $('ns-current');
  current.textContent = ns;
  current.title = `namespace ${ns} · cwork ${sum.version}`;
  const pick = $('ns-pick');
  const many = state.namespaces.length > 1;
  pick.hidden = !many;
  current.hidden = many;
  if (many && document.activeElement !== pick) {
    const next = el('select', { id: 'ns-pick', 'aria-label': 'Namespace', onchange: (ev) => switchNamespace(ev.target.value) },
      state.namespaces.map((n) => el('option', { value: n, text: n })));
    next.value = ns;
    patch(pick, next);
    pick.value = ns;
  }
  const waiting = sum.queues.reduce((n, q) => n + q.count, 0);
  const badges = {
    queues: String(waiting),
    // busy of the live pools' workers; a stale pool's busy workers can make it more
    processes: sum.busy_workers <= sum.workers ? `${sum.busy_workers}/${sum.workers}` : String(sum.busy_workers),
    retry: String(sum.retry),
    scheduled: String(sum.scheduled),
    dead: String(sum.dead),
  };
  for (const [tab, text] of Object.entries(badges)) $(`badge-${tab}`).textContent = text;
  $('badge-processes').title = `${sum.busy_workers} busy; ${plural(sum.workers, 'worker')} in ${plural(sum.live_pools, 'live pool')}${sum.stale_pools ? `, ${plural(sum.stale_pools, 'pool')} without a recent heartbeat` : ''}`;
  $('badge-dead').classList.toggle('alert', sum.dead > 0);
  document.body.classList.toggle('read-only', state.readOnly);
  $('read-only').hidden = !state.readOnly;
  $('updated').textContent = `updated ${new Date().toLocaleTimeString()}`;
}

function switchNamespace(ns) {
  const params = new URLSearchParams();
  state.shards = null; // another namespace: its own shards
  if (ns !== state.namespaces[0]) params.set('ns', ns);
  state.samples = [];
  location.hash = `#/${state.route.view === 'job' || state.route.view === 'queue' ? 'dashboard' : state.route.view}${params.toString() ? `?${params}` : ''}`;
}

function markTab() {
  const tab = TAB_OF[state.route.view] === undefined ? state.route.view : TAB_OF[state.route.view];
  for (const a of document.querySelectorAll('#tabs a')) {
    a.href = href(a.dataset.tab, '', {});
    const on = a.dataset.tab === tab;
    a.classList.toggle('active', on);
    if (on) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  $('metrics-link').href = api.url('metrics');
}

// ------------------------------------------------------------------ refresh

function context() {
  const r = state.route;
  return {
    view: r.view,
    arg: r.arg,
    params: r.params,
    sum: state.summary,
    now: Date.now() / 1000 + state.offset,
    readOnly: state.readOnly,
    state,
    href,
    go,
    act,
    refresh,
  };
}

async function renderView(ctx) {
  switch (ctx.view) {
    case 'dashboard': return renderDashboard(ctx);
    case 'queues': return renderQueues(ctx);
    case 'queue': return renderQueueJobs(ctx);
    case 'processes': return renderProcesses(ctx);
    case 'retry':
    case 'scheduled':
    case 'dead': return renderSetList(ctx);
    case 'job': return renderJob(ctx);
    case 'batch': return renderBatch(ctx);
    case 'succeeded': return renderSucceeded(ctx);
    case 'doctor': return renderDoctor(ctx);
    default: return el('p', { text: 'Nothing here.' });
  }
}

function routeKey(r) {
  return `${r.view}/${r.arg}?${r.params}`;
}

// The page a message belongs to: the tab (a queue's page and a job's count as their own)
// and the namespace; pages, filters and order of the same list are the same page.
function pageOf(r) {
  return `${r.view}/${r.view === 'queue' || r.view === 'job' ? r.arg : ''}?${r.params.get('ns') || ''}&${r.params.get('shard') || ''}`;
}

// reason: 'tick' for the timer; anything else is someone's click, after which the
// page being drawn may show what was true before it (a box unticked, an old count):
// that drawing is dropped and the page drawn again at once.
export async function refresh(reason) {
  if (state.modal) return;
  if (state.busy) {
    state.again = true;
    if (reason !== 'tick') state.stale = true;
    return;
  }
  state.busy = true;
  state.stale = false;
  const key = routeKey(state.route);
  api.takeDamaged(); // what this refresh meets
  try {
    // The Doctor page is for a damaged namespace: it shows even when the summary fails.
    let sum = null;
    let sumError = null;
    try {
      sum = await api.get('summary');
    } catch (e) {
      if (state.route.view !== 'doctor') throw e;
      sumError = e;
    }
    if (sum) {
      if (!state.namespaces.length || !state.namespaces.includes(sum.namespace)) state.namespaces = sum.namespaces || [sum.namespace];
      state.summary = sum;
      state.readOnly = !!sum.read_only;
      state.offset = sum.now - Date.now() / 1000;
      await loadShards(context());
      renderHeader(sum);
      renderShardPick(context());
    }
    const node = await renderView(context());
    if (key === routeKey(state.route) && !state.modal && !state.stale) {
      const main = $('main');
      const view = el('div', { class: `view view-${state.route.view}`, key: `${state.route.view}/${state.route.arg}` }, node);
      const live = main.firstElementChild;
      if (live && live.dataset.key === view.dataset.key) patch(live, view);
      else main.replaceChildren(view);
      markClamps(main);
      renderDamaged(api.takeDamaged());
    }
    if (sumError) refreshFailed(sumError.message);
    else refreshWorked();
  } catch (e) {
    refreshFailed(e.message);
  } finally {
    state.busy = false;
    if (state.again) {
      state.again = false;
      refresh();
    }
  }
}

function route() {
  const before = state.route;
  state.route = parseHash();
  const ns = state.route.params.get('ns') || '';
  const shard = state.route.params.get('shard') || '';
  if (ns !== (before.params.get('ns') || '') || shard !== (before.params.get('shard') || '')) state.samples = [];
  api.setNamespace(ns);
  api.setShard(shard);
  if (before.view !== state.route.view || before.arg !== state.route.arg) window.scrollTo(0, 0);
  if ($('message').className !== 'stale' && messagePage !== pageOf(state.route)) say('', 'ok');
  markTab();
  refresh();
}

function startFind() {
  const id = $('find-id').value.trim();
  if (id) go('job', id, {});
}

function init() {
  delegateEvents();
  $('confirm-ok').addEventListener('click', () => $('confirm').close('ok'));
  $('confirm-cancel').addEventListener('click', () => $('confirm').close('cancel'));
  $('find').addEventListener('submit', (ev) => {
    ev.preventDefault();
    startFind();
  });
  window.addEventListener('hashchange', route);
  // Text is cut or not by the width it gets: look again when the width changes.
  window.addEventListener('resize', () => markClamps($('main')));
  setInterval(() => {
    if (!document.hidden) refresh('tick');
  }, REFRESH_MS);
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) refresh('tick');
  });
  route();
}

init();
