// The cwork web UI: one plain ES module, no build step, served from the binary.
// Every piece of job data reaches the page as text (textContent, text nodes or
// attribute values), never as HTML: job names, ids, args and errors are whatever the
// producers wrote. The page polls the server every 2 s, except while a confirmation
// dialog is open or the tab is hidden.

const PAGE_SIZE = 20;
const REFRESH_MS = 2000;
const STALE_HEARTBEAT_S = 10;

const LISTS = {
  retry: { path: '/retry_jobs', at: 'retry_at', atLabel: 'Retry', del: '/delete_retry_job', empty: 'No jobs waiting for a retry.' },
  scheduled: { path: '/scheduled_jobs', at: 'run_at', atLabel: 'Runs', del: '/delete_scheduled_job', empty: 'No scheduled jobs.' },
  dead: { path: '/dead_jobs', at: 'died_at', atLabel: 'Died', del: '/delete_dead_job', retry: '/retry_dead_job', empty: 'No dead jobs.' },
};
const TABS = ['queues', 'processes', 'retry', 'scheduled', 'dead', 'job'];

const state = {
  tab: 'queues',
  page: { retry: 1, scheduled: 1, dead: 1 },
  name: { retry: '', scheduled: '', dead: '' },
  summary: null,
  offset: 0, // server clock minus this browser's, in seconds
  modal: false, // a confirmation is open: no refresh
  busy: false, // a refresh is running
  again: false, // refresh once more when the running one ends
  findId: '',
  found: null, // { job } or { error }
};

let view = null; // { tab, content, filter }

// ------------------------------------------------------------------ DOM helpers

function el(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = String(v);
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : String(c)); // strings become text nodes
  }
  return e;
}

function $(id) {
  return document.getElementById(id);
}

// The status line: a failed refresh shows until a refresh succeeds; a failed action
// (sticky) stays for 10 s whatever the refreshes do.
let stickyUntil = 0;
function setStatus(message, isError, sticky) {
  if (!sticky && Date.now() < stickyUntil) return;
  stickyUntil = sticky ? Date.now() + 10000 : 0;
  const s = $('status');
  s.textContent = message || '';
  s.className = isError ? 'error' : '';
}

// headers: column titles; a leading '#' marks a numeric (right-aligned) column.
function table(headers, rows, emptyText) {
  if (rows.length === 0) return el('p', { class: 'empty', text: emptyText });
  const th = (h) => el('th', { scope: 'col', class: h.startsWith('#') ? 'num' : null, text: h.replace(/^#/, '') });
  return el('table', null,
    el('thead', null, el('tr', null, headers.map(th))),
    el('tbody', null, rows));
}

// ------------------------------------------------------------------ time

function serverNow() {
  return Date.now() / 1000 + state.offset;
}

function duration(s) {
  s = Math.max(0, Math.round(s));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${m % 60}m`;
  const d = Math.floor(h / 24);
  return `${d}d ${h % 24}h`;
}

// A Unix time as a relative age ("5m 2s ago", "in 3s"), the exact time on hover.
function when(t) {
  if (typeof t !== 'number' || !Number.isFinite(t) || t <= 0 || t > 8e12) {
    return el('span', { class: 'muted', text: '—' });
  }
  const d = t - serverNow();
  const date = new Date(t * 1000);
  return el('time', { datetime: date.toISOString(), title: date.toLocaleString() },
    d >= 1 ? `in ${duration(d)}` : `${duration(-d)} ago`);
}

// ------------------------------------------------------------------ server

async function api(path, method = 'GET') {
  const res = await fetch(path, { method, headers: { Accept: 'application/json' }, cache: 'no-store' });
  const text = await res.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!res.ok) {
    const msg = body && typeof body.error === 'string' ? body.error : `${res.status} ${res.statusText}`;
    throw new Error(`${method} ${path.split('?')[0]}: ${msg}`);
  }
  return body;
}

function enc(s) {
  return encodeURIComponent(String(s));
}

// ------------------------------------------------------------------ confirmation

function confirmAction(question, okLabel) {
  const dlg = $('confirm');
  $('confirm-text').textContent = question;
  $('confirm-ok').textContent = okLabel;
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

async function act(path, question, okLabel) {
  if (question && !(await confirmAction(question, okLabel))) return;
  try {
    await api(path, 'POST');
    stickyUntil = 0;
    setStatus('');
  } catch (e) {
    setStatus(e.message, true, true);
  }
  refresh();
}

// ------------------------------------------------------------------ views

function renderHeader(sum) {
  $('ns').textContent = `${sum.namespace} · v${sum.version}`;
  const waiting = sum.queues.reduce((n, q) => n + q.count, 0);
  $('badge-queues').textContent = String(waiting);
  $('badge-processes').textContent = `${sum.busy_workers}/${sum.workers}`;
  $('badge-processes').title = `${sum.busy_workers} busy of ${sum.workers} workers in ${sum.live_pools} live pools`;
  $('badge-retry').textContent = String(sum.retry);
  $('badge-scheduled').textContent = String(sum.scheduled);
  $('badge-dead').textContent = String(sum.dead);
  $('badge-dead').classList.toggle('alert', sum.dead > 0);
  $('updated').textContent = `updated ${new Date().toLocaleTimeString()}`;
}

function renderQueues(sum) {
  const rows = sum.queues.map((q) => {
    const toggle = el('input', {
      type: 'checkbox', role: 'switch', checked: q.paused,
      'aria-label': `Pause ${q.job_name}`,
      onchange: () => act(`/${q.paused ? 'unpause' : 'pause'}?name=${enc(q.job_name)}`),
    });
    return el('tr', { class: q.paused ? 'paused' : null },
      el('td', { class: 'name', text: q.job_name }),
      el('td', { class: 'num', text: String(q.count) }),
      el('td', { class: 'num', text: q.count > 0 ? duration(q.latency) : '—' }),
      el('td', null, el('label', { class: 'switch' }, toggle, el('span', { text: q.paused ? 'paused' : 'running' }))));
  });
  return el('section', null,
    el('h2', { text: 'Queues' }),
    table(['Job name', '#Waiting', '#Latency', 'State'], rows, 'No job names known yet.'));
}

function renderProcesses(pools, busy) {
  const now = serverNow();
  const poolRows = pools.filter((p) => p.host !== '').map((p) => {
    const age = now - p.heartbeat_at;
    return el('tr', { class: age > STALE_HEARTBEAT_S ? 'stale' : null },
      el('td', { class: 'mono', text: p.worker_pool_id }),
      el('td', { text: p.host }),
      el('td', { class: 'num', text: String(p.pid) }),
      el('td', null, when(p.started_at)),
      el('td', { class: age > STALE_HEARTBEAT_S ? 'warn' : null }, when(p.heartbeat_at)),
      el('td', { class: 'names', text: (p.job_names || []).join(', ') }),
      el('td', { class: 'num', text: String(p.concurrency) }));
  });
  const busyRows = busy.map((w) => el('tr', null,
    el('td', { class: 'mono', text: w.worker_id }),
    el('td', { class: 'name', text: w.job_name }),
    el('td', { class: 'mono', text: w.job_id }),
    el('td', null, el('code', { class: 'args', text: w.args_json })),
    el('td', null, when(w.started_at)),
    el('td', null, w.checkin ? el('span', { class: 'checkin', text: w.checkin }) : null,
      w.checkin_at ? [' ', when(w.checkin_at)] : null)));
  return el('section', null,
    el('h2', { text: 'Worker pools' }),
    table(['Pool', 'Host', '#PID', 'Started', 'Heartbeat', 'Job names', '#Concurrency'], poolRows, 'No worker pools.'),
    el('h2', { text: 'Busy workers' }),
    table(['Worker', 'Job', 'Job id', 'Args', 'Started', 'Check-in'], busyRows, 'Nobody is busy.'));
}

function argsText(args) {
  return args === undefined ? '' : JSON.stringify(args);
}

function jobActions(kind, at, id, name) {
  const l = LISTS[kind];
  const buttons = [];
  if (l.retry) {
    buttons.push(el('button', {
      type: 'button', class: 'retry', 'aria-label': `Retry job ${id}`,
      onclick: () => act(`${l.retry}/${at}?id=${enc(id)}`),
    }, 'Retry'));
  }
  buttons.push(el('button', {
    type: 'button', class: 'danger', 'aria-label': `Delete job ${id}`,
    onclick: () => act(`${l.del}/${at}?id=${enc(id)}`, `Delete the ${name} job ${id}?`, 'Delete'),
  }, 'Delete'));
  return el('td', { class: 'actions' }, buttons);
}

function renderList(kind, data) {
  const l = LISTS[kind];
  const jobs = data.jobs || [];
  const rows = jobs.map((j) => el('tr', null,
    el('td', null, when(j[l.at])),
    el('td', { class: 'name', text: j.name }),
    el('td', { class: 'mono', text: j.id }),
    el('td', null, el('code', { class: 'args', text: argsText(j.args) })),
    kind !== 'scheduled' ? el('td', { class: 'num', text: String(j.fails || 0) }) : null,
    kind !== 'scheduled' ? el('td', { class: 'err', text: j.err || '' }) : null,
    jobActions(kind, j[l.at], j.id, j.name)));
  const headers = kind === 'scheduled'
    ? [l.atLabel, 'Job', 'Id', 'Args', '']
    : [l.atLabel, 'Job', 'Id', 'Args', '#Fails', 'Error', ''];
  const pages = Math.max(1, Math.ceil(data.count / PAGE_SIZE));
  const page = state.page[kind];
  const pager = el('div', { class: 'pager' },
    el('button', { type: 'button', disabled: page <= 1, onclick: () => gotoPage(kind, page - 1) }, '‹ Newer'),
    el('span', { text: `Page ${page} of ${pages} · ${data.count} job${data.count === 1 ? '' : 's'}` }),
    el('button', { type: 'button', disabled: page >= pages, onclick: () => gotoPage(kind, page + 1) }, 'Older ›'));
  return el('div', null, table(headers, rows, l.empty), data.count > PAGE_SIZE ? pager : el('p', { class: 'muted small', text: `${data.count} job${data.count === 1 ? '' : 's'}` }));
}

function gotoPage(kind, page) {
  state.page[kind] = Math.max(1, page);
  refresh();
}

function listToolbar(kind) {
  const filter = el('select', {
    'aria-label': 'Filter by job name',
    onchange: () => {
      state.name[kind] = filter.value;
      state.page[kind] = 1;
      refresh();
    },
  });
  fillFilter(filter, kind);
  const bar = el('div', { class: 'toolbar' },
    el('h2', { text: kind === 'retry' ? 'Retry' : kind === 'scheduled' ? 'Scheduled' : 'Dead' }),
    el('label', null, 'Job name ', filter));
  if (kind === 'dead') {
    const scope = () => (state.name.dead ? `?name=${enc(state.name.dead)}` : '');
    const what = () => (state.name.dead ? `every dead ${state.name.dead} job` : 'every dead job');
    bar.append(
      el('button', { type: 'button', class: 'retry', onclick: () => act(`/retry_all_dead_jobs${scope()}`, `Retry ${what()}?`, 'Retry all') }, 'Retry all'),
      el('button', { type: 'button', class: 'danger', onclick: () => act(`/delete_all_dead_jobs${scope()}`, `Delete ${what()}?`, 'Delete all') }, 'Delete all'));
  }
  return { bar, filter };
}

// The filter's options: every known job name, plus the chosen one.
function fillFilter(select, kind) {
  if (document.activeElement === select) return;
  const names = new Set((state.summary ? state.summary.queues : []).map((q) => q.job_name));
  if (state.name[kind]) names.add(state.name[kind]);
  const wanted = ['', ...[...names].sort()];
  const have = [...select.options].map((o) => o.value);
  if (wanted.length !== have.length || wanted.some((v, i) => v !== have[i])) {
    select.replaceChildren(...wanted.map((v) => el('option', { value: v, text: v === '' ? 'all' : v })));
  }
  select.value = state.name[kind];
}

function renderFound() {
  const f = state.found;
  if (!f) return el('p', { class: 'muted', text: 'Type a job id above.' });
  if (f.error) return el('p', { class: 'empty', text: `${state.findId}: ${f.error}` });
  const j = f.job;
  const kind = f.place === 'dead' ? 'dead' : f.place === 'retry' ? 'retry' : f.place === 'scheduled' ? 'scheduled' : null;
  return el('section', null,
    el('h2', { text: `Job ${j.id}` }),
    el('dl', { class: 'facts' },
      el('dt', { text: 'Name' }), el('dd', { text: j.name }),
      el('dt', { text: 'Where' }), el('dd', { text: f.place.replace('_', ' ') }),
      el('dt', { text: 'Enqueued' }), el('dd', null, when(j.t)),
      f.at ? [el('dt', { text: kind ? LISTS[kind].atLabel : 'At' }), el('dd', null, when(f.at))] : null,
      j.err ? [el('dt', { text: 'Error' }), el('dd', { class: 'err', text: j.err })] : null),
    kind ? el('div', { class: 'toolbar' }, [...jobActions(kind, f.at, j.id, j.name).childNodes]) : null,
    el('pre', { class: 'json', text: JSON.stringify(j, null, 2) }));
}

async function find(id) {
  state.findId = id;
  try {
    state.found = await api(`/job?id=${enc(id)}`);
  } catch (e) {
    state.found = { error: e.message.replace(/^GET [^:]*: /, '') };
  }
}

// ------------------------------------------------------------------ navigation

function mount() {
  const tab = state.tab;
  const content = el('div', { class: 'content' });
  let filter = null;
  const parts = [];
  if (LISTS[tab]) {
    const t = listToolbar(tab);
    filter = t.filter;
    parts.push(t.bar);
  }
  parts.push(content);
  $('main').replaceChildren(...parts);
  view = { tab, content, filter };
  for (const a of document.querySelectorAll('#tabs a')) {
    a.classList.toggle('active', a.dataset.tab === tab);
    if (a.dataset.tab === tab) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

function route() {
  const tab = location.hash.replace(/^#/, '');
  state.tab = TABS.includes(tab) ? tab : 'queues';
  mount();
  refresh();
}

async function refresh() {
  if (state.modal) return;
  if (state.busy) {
    state.again = true;
    return;
  }
  state.busy = true;
  const tab = state.tab;
  try {
    const sum = await api('/summary');
    state.summary = sum;
    state.offset = sum.now - Date.now() / 1000;
    renderHeader(sum);
    let node;
    if (tab === 'queues') {
      node = renderQueues(sum);
    } else if (tab === 'processes') {
      const [pools, busy] = await Promise.all([api('/worker_pools'), api('/busy_workers')]);
      node = renderProcesses(pools || [], busy || []);
    } else if (LISTS[tab]) {
      const q = new URLSearchParams({ page: String(state.page[tab]) });
      if (state.name[tab]) q.set('name', state.name[tab]);
      let data = await api(`${LISTS[tab].path}?${q}`);
      const last = Math.max(1, Math.ceil(data.count / PAGE_SIZE));
      if (state.page[tab] > last) { // the page emptied under us: show the last one
        state.page[tab] = last;
        q.set('page', String(last));
        data = await api(`${LISTS[tab].path}?${q}`);
      }
      node = renderList(tab, data);
    } else if (tab === 'job') {
      if (state.findId) await find(state.findId);
      node = renderFound();
    }
    if (view && view.tab === tab && state.tab === tab && !state.modal) {
      view.content.replaceChildren(node);
      if (view.filter) fillFilter(view.filter, tab);
    }
    setStatus('');
  } catch (e) {
    setStatus(e.message, true);
  } finally {
    state.busy = false;
    if (state.again) {
      state.again = false;
      refresh();
    }
  }
}

function startFind() {
  const id = $('find-id').value.trim();
  if (!id) return;
  state.findId = id;
  state.found = null;
  if (location.hash !== '#job') location.hash = '#job';
  else refresh();
}

function init() {
  $('confirm-ok').addEventListener('click', () => $('confirm').close('ok'));
  $('confirm-cancel').addEventListener('click', () => $('confirm').close('cancel'));
  $('find-go').addEventListener('click', startFind);
  $('find-id').addEventListener('keydown', (e) => {
    if (e.key === 'Enter') startFind();
  });
  window.addEventListener('hashchange', route);
  setInterval(() => {
    if (!document.hidden) refresh();
  }, REFRESH_MS);
  route();
}

init();
