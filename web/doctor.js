// The Doctor page (PROTOCOL §25): what `cwork doctor` finds in the namespace, with a
// Repair button per finding and one for all (none on a read-only server). A check reads
// every key of the namespace, so the page checks when opened, on "Check again" and
// after a repair — not on every 2 s refresh.
import { el, plural } from './dom.js';
import * as api from './api.js';
import { table } from './parts.js';

const KEEP_MS = 30000; // a check is shown this long before the refresh checks again
let last = null; // {ns, at, findings}

function checked(ns) {
  return last && last.ns === ns && Date.now() - last.at < KEEP_MS ? last : null;
}

async function check(ns) {
  const r = await api.get('doctor');
  last = { ns, at: Date.now(), findings: r.findings, readOnly: r.read_only };
  return last;
}

function keep(ns, findings) {
  last = { ns, at: Date.now(), findings, readOnly: false };
}

function repairButton(ctx, ns, f) {
  if (!f.action) return null;
  return el('button', {
    type: 'button',
    class: 'small',
    title: f.action,
    onclick: () => ctx.act({
      question: `Repair ${f.key}? It will ${f.action}.`,
      okLabel: 'Repair',
      danger: false,
      run: async () => {
        const params = { kind: f.kind, key: f.key };
        if (f.member !== null) params.member = f.member;
        const r = await api.post('doctor_repair', params);
        keep(ns, r.findings);
        return r.repaired ? `Repaired: ${f.key}.` : `Nothing to do any more: ${f.key} changed since.`;
      },
    }),
  }, 'Repair');
}

export async function renderDoctor(ctx) {
  const ns = `${ctx.params.get('ns') || ''}&${ctx.params.get('shard') || ''}`; // a check's scope
  const result = checked(ns) || (await check(ns));
  // the summary may have failed on the damage: the check's answer says it too
  const readOnly = ctx.readOnly || result.readOnly;
  const rows = result.findings.map((f) => el('tr', { key: `${f.kind}/${f.key}/${f.member}` },
    el('td', { 'data-label': 'Kind', class: 'mono', text: f.kind.replace(/_/g, ' ') }),
    el('td', { 'data-label': 'Key', class: 'mono doctor-key', text: f.key }),
    el('td', { 'data-label': 'Problem' },
      el('span', { text: f.problem }),
      f.action ? el('div', { class: 'muted small', text: `Repair: ${f.action}` }) : null),
    readOnly ? null : el('td', { class: 'actions' }, repairButton(ctx, ns, f))));
  const repairable = result.findings.filter((f) => f.action).length;
  const again = el('button', {
    type: 'button',
    class: 'small',
    onclick: async () => {
      last = null;
      ctx.refresh('click');
    },
  }, 'Check again');
  const all = readOnly || repairable === 0 ? null : el('button', {
    type: 'button',
    class: 'small primary',
    onclick: () => ctx.act({
      question: `Repair all ${plural(repairable, 'finding')}? Jobs are moved, never deleted (see each finding's repair).`,
      okLabel: 'Repair all',
      danger: false,
      run: async () => {
        const r = await api.post('doctor_repair', { all: 1 });
        last = null;
        return `${plural(r.repaired, 'finding')} repaired${r.failed ? `, ${r.failed} failed` : ''}.`;
      },
    }),
  }, 'Repair all');
  return el('section', null,
    el('h2', { text: 'Doctor' }),
    el('p', { class: 'muted small', text: 'Every key of the namespace checked against the protocol, as cwork doctor does: wrong types, lock counters, orphaned in-progress jobs, stale unique guards, unknown names, undecodable jobs, removed periodic specs, future heartbeats, rate limits, batch counts.' }),
    el('div', { class: 'doctor-bar' },
      el('span', { class: result.findings.length ? 'err' : 'ok-text', text: result.findings.length ? `${plural(result.findings.length, 'finding')}` : 'Clean: nothing to repair.' }),
      el('span', { class: 'muted small', text: ` checked ${new Date(result.at).toLocaleTimeString()} ` }),
      again, all),
    table(['Kind', 'Key', 'Problem', readOnly ? null : ''], rows, 'No findings: every key is as the protocol describes it.'));
}
