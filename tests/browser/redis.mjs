// A small Redis client for the browser tests (node has none built in, and the tests add
// no package beyond playwright-core): RESP over one TCP connection, commands in order,
// enough to write a namespace by hand and to dump it whole afterwards.
import net from 'node:net';

function encode(args) {
  let out = `*${args.length}\r\n`;
  for (const a of args) {
    const b = Buffer.from(String(a));
    out += `$${b.length}\r\n${b.toString('binary')}\r\n`;
  }
  return Buffer.from(out, 'binary');
}

// Parses one reply from buf at pos: [value, next pos], or null when incomplete.
function parse(buf, pos) {
  const end = buf.indexOf('\r\n', pos);
  if (end < 0) return null;
  const type = String.fromCharCode(buf[pos]);
  const line = buf.toString('utf8', pos + 1, end);
  if (type === '+') return [line, end + 2];
  if (type === '-') return [new Error(line), end + 2];
  if (type === ':') return [Number(line), end + 2];
  if (type === '$') {
    const n = Number(line);
    if (n < 0) return [null, end + 2];
    if (buf.length < end + 2 + n + 2) return null;
    return [buf.toString('utf8', end + 2, end + 2 + n), end + 2 + n + 2];
  }
  if (type === '*') {
    const n = Number(line);
    if (n < 0) return [null, end + 2];
    const items = [];
    let p = end + 2;
    for (let i = 0; i < n; i++) {
      const r = parse(buf, p);
      if (!r) return null;
      items.push(r[0]);
      p = r[1];
    }
    return [items, p];
  }
  throw new Error(`unexpected reply type ${type}`);
}

export class Redis {
  static async connect(url) {
    const u = new URL(url);
    const r = new Redis();
    await new Promise((resolve, reject) => {
      r.sock = net.createConnection({ host: u.hostname, port: Number(u.port || 6379) }, resolve);
      r.sock.once('error', reject);
    });
    r.buf = Buffer.alloc(0);
    r.waiting = [];
    r.sock.on('data', (d) => {
      r.buf = Buffer.concat([r.buf, d]);
      for (;;) {
        const p = r.waiting.length ? parse(r.buf, 0) : null;
        if (!p) break;
        r.buf = r.buf.subarray(p[1]);
        const { resolve, reject } = r.waiting.shift();
        if (p[0] instanceof Error) reject(p[0]);
        else resolve(p[0]);
      }
    });
    if (u.password) await r.cmd('AUTH', ...(u.username ? [decodeURIComponent(u.username)] : []), decodeURIComponent(u.password));
    const db = u.pathname.replace(/^\//, '');
    if (db) await r.cmd('SELECT', db);
    return r;
  }

  cmd(...args) {
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.sock.write(encode(args));
    });
  }

  // Many commands at once (pipelined); their replies in order.
  all(commands) {
    return Promise.all(commands.map((c) => this.cmd(...c)));
  }

  async keys(prefix) {
    const out = [];
    let cursor = '0';
    do {
      const [next, keys] = await this.cmd('SCAN', cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      out.push(...keys);
      cursor = next;
    } while (cursor !== '0');
    return [...new Set(out)].sort();
  }

  // Every key of the namespace: {key: {type, ttl, value}} with sets and hash fields
  // sorted and zsets as [member, score] pairs in ZRANGE order.
  async dump(ns) {
    const out = {};
    for (const key of await this.keys(`${ns}:`)) {
      const type = await this.cmd('TYPE', key);
      const ttl = await this.cmd('TTL', key);
      let value;
      if (type === 'string') value = await this.cmd('GET', key);
      else if (type === 'list') value = await this.cmd('LRANGE', key, 0, -1);
      else if (type === 'set') value = (await this.cmd('SMEMBERS', key)).sort();
      else if (type === 'zset') {
        const flat = await this.cmd('ZRANGE', key, 0, -1, 'WITHSCORES');
        value = [];
        for (let i = 0; i < flat.length; i += 2) value.push([flat[i], flat[i + 1]]);
      } else if (type === 'hash') {
        const flat = await this.cmd('HGETALL', key);
        const pairs = [];
        for (let i = 0; i < flat.length; i += 2) pairs.push([flat[i], flat[i + 1]]);
        value = pairs.sort((a, b) => (a[0] < b[0] ? -1 : 1));
      }
      out[key] = { type, ttl: ttl > 0 ? 'set' : ttl, value };
    }
    return out;
  }

  async deleteNamespace(ns) {
    const keys = await this.keys(`${ns}:`);
    for (let i = 0; i < keys.length; i += 500) await this.cmd('DEL', ...keys.slice(i, i + 500));
  }

  close() {
    this.sock.end();
  }
}
