// A sharded namespace (PROTOCOL §27): every page shows the namespace as one (the server
// merges the shards), and the shard picker in the header narrows every page to one
// shard (?shard=N in the hash and in every request). The dashboard's Shards panel shows
// each shard's counts and pools, with a link to look at that shard alone. All of it is
// hidden while the namespace has one shard.
import { el, $, patch, num } from './dom.js';
import * as api from './api.js';
import { table } from './parts.js';

const SHARDS_EVERY_S = 30; // pages other than the dashboard read the shards this often

// GET /shards of the whole namespace: on every dashboard refresh (its panel), on other
// pages when the namespace changed or every 30 s (the picker needs the count). A failure
// keeps what was read before: the picker is no reason to fail a page.
export async function loadShards(ctx) {
  const st = ctx.state;
  const key = api.url('shards', { shard: '' });
  const old = st.shards;
  if (ctx.view !== 'dashboard' && old && old.key === key && ctx.now - old.at < SHARDS_EVERY_S) return;
  try {
    const data = await api.get('shards', { shard: '' });
    st.shards = { key, at: ctx.now, data };
  } catch {
    if (old && old.key !== key) st.shards = null;
  }
}

function shardCount(ctx) {
  const s = ctx.state.shards;
  return s ? s.data.count : 1;
}

function pickShard(ctx, value) {
  const params = new URLSearchParams(ctx.params);
  if (value === '') params.delete('shard');
  else params.set('shard', value);
  params.delete('page'); // another list: its own pages
  const v = ctx.view;
  location.hash = `#/${v}${ctx.arg || v === 'job' ? `/${encodeURIComponent(ctx.arg)}` : ''}${params.toString() ? `?${params}` : ''}`;
}

// The header's picker ("All 3 shards", "Shard 0 · app", …) and, while one shard is looked
// at, the line under the header that says so with a way back.
export function renderShardPick(ctx) {
  const pick = $('shard-pick');
  const note = $('shard-note');
  const count = shardCount(ctx);
  const current = ctx.params.get('shard') || '';
  const many = count > 1 || current !== '';
  pick.hidden = !many;
  if (many && document.activeElement !== pick) {
    const rows = ctx.state.shards ? ctx.state.shards.data.shards : [];
    const next = el('select', { id: 'shard-pick', 'aria-label': 'Shard', onchange: (ev) => pickShard(ctx, ev.target.value) },
      el('option', { value: '', text: `All ${count} shards` }),
      rows.map((r) => el('option', { value: String(r.shard), text: `Shard ${r.shard} · ${r.ns}` })));
    patch(pick, next);
    pick.value = current;
  }
  note.hidden = current === '';
  if (current !== '') {
    const row = ctx.state.shards ? ctx.state.shards.data.shards.find((r) => String(r.shard) === current) : null;
    patch(note, el('div', { id: 'shard-note', role: 'status' },
      el('span', { text: `Shard ${current}${row ? ` (${row.ns})` : ''} alone: every page shows this shard's jobs only. ` }),
      el('a', { href: ctx.href(ctx.view, ctx.arg, { ...Object.fromEntries(ctx.params), shard: '', page: '' }), text: `Show all ${count} shards` })));
  }
}

// The dashboard's panel: one row per shard with its namespace, jobs waiting, in
// progress, retry, scheduled and dead, the pools serving it and the Redis server that
// holds it (in a Cluster, its slot's master); null while the namespace has one shard.
export function shardsPanel(ctx) {
  const s = ctx.state.shards;
  if (!s || s.data.count <= 1) return null;
  const current = ctx.params.get('shard') || '';
  const total = { queued: 0, running: 0, retry: 0, scheduled: 0, dead: 0 };
  const cell = (label, v, cls) => el('td', { class: `num${cls ? ` ${cls}` : ''}`, 'data-label': label, text: num(v) });
  const nodes = s.data.shards.some((r) => r.node); // a server without a known address: no column
  const rows = s.data.shards.map((r) => {
    for (const k of Object.keys(total)) total[k] += r[k];
    const on = String(r.shard) === current;
    return el('tr', { key: `shard${r.shard}`, class: on ? 'on' : null },
      el('td', { class: 'name', 'data-label': 'Shard' },
        el('a', { href: ctx.href('dashboard', '', { shard: on ? '' : String(r.shard) }), 'aria-current': on ? 'true' : null,
          title: on ? 'Show every shard' : `Look at shard ${r.shard} alone`, text: `Shard ${r.shard}` }),
        el('span', { class: 'mono muted shard-ns', text: r.ns })),
      cell('Waiting', r.queued),
      cell('In progress', r.running),
      cell('Retry', r.retry),
      cell('Scheduled', r.scheduled),
      cell('Dead', r.dead, r.dead ? 'bad' : null),
      el('td', { class: `num${r.pools ? '' : ' warn'}`, 'data-label': 'Pools', title: r.pools ? null : 'no pool serves this shard: its jobs wait', text: num(r.pools) }),
      nodes ? el('td', { class: 'mono node', 'data-label': 'Redis', text: r.node || '—' }) : null);
  });
  return el('div', { class: 'shards-panel' },
    el('h2', { text: `Shards (${s.data.count})` }),
    table(['Shard', '#Waiting', '#In progress', '#Retry', '#Scheduled', '#Dead', '#Pools', nodes ? 'Redis' : null], rows, '', 'shards'),
    el('p', { class: 'muted small', text: `${num(total.queued)} waiting, ${num(total.running)} in progress, ${num(total.retry)} retry, ${num(total.scheduled)} scheduled and ${num(total.dead)} dead over all shards. Each shard is a namespace of its own on its own hash slot; pick one to see it alone.` }));
}
