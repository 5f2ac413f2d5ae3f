// DOM helpers of the cwork web UI: building elements (job data only ever as text),
// patching the live page in place (so that a refresh keeps focus, text selection,
// open details and scroll), delegated events, and number and time formatting.

// Elements are built with el(tag, props, ...children). Props: class, text (textContent),
// key (data-key: the identity of a child when the page is patched), on<event> handlers
// (kept on the element and called through one delegated listener, so that patching can
// hand an element its new handlers), checked/value/disabled (properties of inputs),
// anything else as an attribute. Strings among the children become text nodes.
export function el(tag, props, ...children) {
  const svg = SVG_TAGS.has(tag);
  const e = svg ? document.createElementNS(SVG_NS, tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.setAttribute('class', v);
    else if (k === 'text') e.textContent = String(v);
    else if (k === 'key') e.dataset.key = String(v);
    else if (k.startsWith('on') && typeof v === 'function') (e._on ||= {})[k.slice(2)] = v;
    else if (k === 'checked' || k === 'value') {
      e[k] = v;
      e.setAttribute(k, v === true ? '' : String(v));
    } else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
const SVG_TAGS = new Set(['svg', 'g', 'rect', 'path', 'polyline', 'line', 'text', 'title', 'circle']);

export function $(id) {
  return document.getElementById(id);
}

// ------------------------------------------------------------------ delegated events

const EVENTS = ['click', 'change', 'input', 'keydown', 'submit', 'toggle'];

// One listener per event type on the document: the nearest element (from the target
// up) with a handler for it gets the event.
export function delegateEvents() {
  for (const type of EVENTS) {
    document.addEventListener(type, (ev) => {
      for (let n = ev.target; n && n !== document; n = n.parentNode) {
        if (n._on && n._on[type]) {
          n._on[type](ev, n);
          return;
        }
      }
    }, type === 'toggle');
  }
}

// ------------------------------------------------------------------ patching

function keyOf(n) {
  return n.nodeType === 1 ? n.getAttribute('data-key') : null;
}

function sameKind(a, b) {
  if (a.nodeType !== b.nodeType) return false;
  if (a.nodeType !== 1) return true;
  return a.tagName === b.tagName && a.getAttribute('type') === b.getAttribute('type') &&
    keyOf(a) === keyOf(b);
}

// Makes live look like next (same tag), reusing live's nodes where they match: by
// data-key among keyed children, else by position and tag. Inputs get next's checked
// and value unless they have the focus (someone is typing or choosing).
export function patch(live, next) {
  if (live.nodeType !== 1) {
    if (live.nodeValue !== next.nodeValue) live.nodeValue = next.nodeValue;
    return;
  }
  for (const a of [...live.attributes]) {
    if (!next.hasAttribute(a.name)) live.removeAttribute(a.name);
  }
  for (const a of next.attributes) {
    if (live.getAttribute(a.name) !== a.value) live.setAttribute(a.name, a.value);
  }
  live._on = next._on;
  const tag = live.tagName;
  if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA') {
    if (document.activeElement !== live || live.type === 'checkbox') {
      patchChildren(live, next);
      if (live.type === 'checkbox') {
        live.checked = next.checked;
        live.indeterminate = next.indeterminate;
      } else if (live.value !== next.value) live.value = next.value;
    }
    return;
  }
  if (tag === 'DETAILS') live.open = next.open;
  patchChildren(live, next);
}

function patchChildren(live, next) {
  const want = [...next.childNodes];
  const keyed = new Map();
  for (const c of live.childNodes) {
    const k = keyOf(c);
    if (k !== null) keyed.set(k, c);
  }
  want.forEach((n, i) => {
    const k = keyOf(n);
    const at = live.childNodes[i] || null;
    let match = k !== null ? keyed.get(k) : at && keyOf(at) === null ? at : null;
    if (match && !sameKind(match, n)) match = null;
    if (match) {
      if (k !== null) keyed.delete(k);
      if (match !== at) live.insertBefore(match, at);
      patch(match, n);
    } else {
      live.insertBefore(n, at);
    }
  });
  while (live.childNodes.length > want.length) live.removeChild(live.lastChild);
}

// ------------------------------------------------------------------ formatting

const NUMBER = new Intl.NumberFormat('en-US');

export function num(n) {
  return typeof n === 'number' && Number.isFinite(n) ? NUMBER.format(n) : '—';
}

export function plural(n, one, many) {
  return `${num(n)} ${n === 1 ? one : many || `${one}s`}`;
}

export function duration(s) {
  s = Math.max(0, Math.round(s));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${m % 60}m`;
  const d = Math.floor(h / 24);
  return `${d}d ${h % 24}h`;
}

// Unix seconds as "5m 2s ago" / "in 3s" (now: the server's clock), the exact time as a
// tooltip. Ticks re-render every refresh, so the text keeps up.
export function when(t, now) {
  if (typeof t !== 'number' || !Number.isFinite(t) || t <= 0 || t > 8e12) {
    return el('span', { class: 'muted', text: '—' });
  }
  const d = t - now;
  const date = new Date(t * 1000);
  return el('time', { datetime: date.toISOString(), title: date.toLocaleString() },
    d >= 1 ? `in ${duration(d)}` : `${duration(-d)} ago`);
}

// The exact local time of unix seconds t ("Dec 1, 11:38:00"; the date only when it is
// not the day of now, the server's clock like when()'s), for where relative times are not
// enough.
export function exactTime(t, now) {
  if (typeof t !== 'number' || !Number.isFinite(t) || t <= 0 || t > 8e12) return '';
  const d = new Date(t * 1000);
  const today = new Date(now * 1000).toDateString() === d.toDateString();
  return d.toLocaleString(undefined, today
    ? { hour: '2-digit', minute: '2-digit', second: '2-digit' }
    : { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

// when(t) followed by the exact time in muted text.
export function whenExact(t, now) {
  const exact = exactTime(t, now);
  return [when(t, now), exact ? el('span', { class: 'muted exact', text: ` · ${exact}` }) : null];
}

// A piece of job data (args, an error) clamped to a few lines, with a button to see it
// all. open: whether it is shown whole (the caller keeps that across refreshes); json:
// the text is compact JSON (it wraps after commas first). Whether the text is cut
// depends on the width it gets, not on its length: the button is always there, and
// markClamps shows it where the text overflows (class "long").
export function clamp(text, open, onToggle, label, json = false) {
  const long = text.length > 160 || (text.match(/\n/g) || []).length >= 3;
  return el('div', { class: `clamp${open ? ' open' : ''}${long ? ' long' : ''}` },
    el('span', { class: 'clamp-text' }, json ? jsonText(text) : text),
    el('button', {
      type: 'button', class: 'link more', 'aria-expanded': open ? 'true' : 'false',
      'aria-label': `${open ? 'Show less of' : 'Show all of'} ${label}`,
      onclick: onToggle,
    }, open ? 'less' : 'more'));
}

// Marks each closed clamp under root whose text is cut at the width it has now as
// "long" (its "more" shows), and the others not: called after every render and when
// the window's width changes, since a patch sets the class back to the first guess.
export function markClamps(root) {
  if (!root) return;
  for (const box of root.querySelectorAll('.clamp:not(.open)')) {
    const text = box.querySelector('.clamp-text');
    if (text && text.getClientRects().length) box.classList.toggle('long', text.scrollHeight > text.clientHeight + 1);
  }
}

// Text with a break opportunity (<wbr>) after each match of after: copying it gives the
// text as it is.
function breakable(text, after) {
  const out = [];
  String(text).split(after).forEach((p, i) => {
    if (i) out.push(el('wbr'));
    out.push(p);
  });
  return out;
}

// A job name (or id) as text with break opportunities after its separators ('_', ':',
// '.', '-', '/'), so that a long one wraps between its words rather than inside one.
export function nameText(name) {
  return breakable(name, /(?<=[_:.\-/])/);
}

// Job args as compact JSON with break opportunities after its commas, so that they wrap
// between values first.
export function jsonText(json) {
  return breakable(json, /(?<=,)/);
}
