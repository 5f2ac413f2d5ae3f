// The server's JSON API as the UI calls it: relative URLs only (the UI may sit under a
// path prefix behind a proxy), the namespace as ?ns= when it is not the default one,
// the shard looked at as ?shard= (PROTOCOL §27), errors as exceptions that carry the
// server's message.

let namespace = ''; // '' = the server's default
let shard = ''; // '' = the whole namespace; else one shard's number

export function setNamespace(ns) {
  namespace = ns || '';
}

export function setShard(n) {
  shard = n === undefined || n === null ? '' : String(n);
}

// path: a route without the leading '/', e.g. 'dead_jobs'; params: an object of query
// parameters (undefined, null and '' are left out, except an empty id: it is a valid id).
// A shard given in params (even '': the whole namespace) wins over the one looked at.
export function url(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && (v !== '' || k === 'id')) q.set(k, String(v));
  }
  if (namespace) q.set('ns', namespace);
  if (shard !== '' && !Object.prototype.hasOwnProperty.call(params || {}, 'shard')) q.set('shard', shard);
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

// The damaged keys the server met while answering (its X-Cwork-Damaged header: a
// percent-encoded JSON array of {key, type, expected, what}), each key once, collected
// over the calls of a refresh: the page shows them in one banner (takeDamaged).
let damaged = new Map();

function noteDamaged(res) {
  const h = res.headers.get('X-Cwork-Damaged');
  if (!h) return;
  try {
    for (const d of JSON.parse(decodeURIComponent(h))) {
      if (d && typeof d.key === 'string' && !damaged.has(d.key)) damaged.set(d.key, d);
    }
  } catch {
    // a header that cannot be read names nothing; the page still renders
  }
}

// The keys noted since the last call, in the order met; starts a new collection.
export function takeDamaged() {
  const list = [...damaged.values()];
  damaged = new Map();
  return list;
}

export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

async function call(method, path, params, body) {
  const init = { method, headers: { Accept: 'application/json' }, cache: 'no-store' };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(url(path, params), init);
  } catch (e) {
    throw new ApiError(`the server does not answer (${e.message})`, 0);
  }
  noteDamaged(res);
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) {
    const msg = data && typeof data.error === 'string' ? data.error : `${res.status} ${res.statusText}`;
    throw new ApiError(msg, res.status);
  }
  return data;
}

export function get(path, params) {
  return call('GET', path, params);
}

export function post(path, params, body) {
  return call('POST', path, params, body);
}
