// api.js - what every page shares: calls to relish's HTTP API
// (docs/api.md), a small DOM builder, number and time formats, and the
// poller that keeps a page live.  No framework: the server sends data,
// the page draws it.

export const API = '/api/v1';
const TOKEN_KEY = 'relish.token';

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function token() {
  try { return localStorage.getItem(TOKEN_KEY) || ''; } catch { return ''; }
}
export function setToken(t) {
  try {
    if (t) localStorage.setItem(TOKEN_KEY, t); else localStorage.removeItem(TOKEN_KEY);
  } catch { /* private mode: the token lives for this page only */ }
}

async function call(method, path, body) {
  const headers = {};
  const t = token();
  if (t) headers.Authorization = 'Bearer ' + t;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let r;
  try {
    r = await fetch(path.startsWith('/') ? path : API + '/' + path,
      { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    throw new ApiError(0, 'RL_ENOSERVER', 'the service does not answer (' + e.message + ')');
  }
  const type = r.headers.get('Content-Type') || '';
  if (!type.startsWith('application/json')) {
    const text = await r.text();
    if (!r.ok) throw new ApiError(r.status, 'HTTP', text || r.statusText);
    return { text, headers: r.headers };
  }
  const j = await r.json();
  if (!r.ok) {
    const e = j && j.error ? j.error : {};
    throw new ApiError(r.status, e.code || 'HTTP', e.message || r.statusText);
  }
  return j;
}

export const get = (path) => call('GET', path);
export const post = (path, body) => call('POST', path, body);

// h('div', {class: 'x', onclick: f}, child, 'text', [more]) -> element
export function h(tag, attrs, ...children) {
  const svg = tag.startsWith('svg:');
  const el = svg ? document.createElementNS('http://www.w3.org/2000/svg', tag.slice(4))
                 : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'style' && typeof v === 'object') Object.assign(el.style, v);
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  const add = (c) => {
    if (c === undefined || c === null || c === false) return;
    if (Array.isArray(c)) c.forEach(add);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  };
  children.forEach(add);
  return el;
}

export function clear(el) { while (el.firstChild) el.firstChild.remove(); return el; }

// Replace el's children with these (arrays flattened; null, false and
// undefined left out, where Element.append would print "null").
export function fill(el, ...children) {
  clear(el);
  const add = (c) => {
    if (c === undefined || c === null || c === false) return;
    if (Array.isArray(c)) c.forEach(add);
    else el.append(c);
  };
  children.forEach(add);
  return el;
}

export function fmtNum(v, digits = 4) {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  if (typeof v !== 'number') return String(v);
  if (Number.isInteger(v) && Math.abs(v) < 1e7) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(2);
  return String(Number(v.toPrecision(digits)));
}

export function fmtDur(s) {
  if (s === null || s === undefined || Number.isNaN(s)) return '–';
  s = Math.max(0, s);
  if (s < 60) return s.toFixed(s < 10 ? 1 : 0) + ' s';
  if (s < 3600) return Math.floor(s / 60) + ' min ' + Math.round(s % 60) + ' s';
  if (s < 86400) return Math.floor(s / 3600) + ' h ' + Math.round((s % 3600) / 60) + ' min';
  return Math.floor(s / 86400) + ' d ' + Math.round((s % 86400) / 3600) + ' h';
}

export function fmtTime(t) {
  if (t === null || t === undefined) return '–';
  const d = new Date(t * 1000);
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ` +
         `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

export function fmtMiB(m) {
  if (m === null || m === undefined || m < 0) return '–';
  return m >= 10240 ? (m / 1024).toFixed(1) + ' GiB' : m + ' MiB';
}

export const badge = (s) => h('span', { class: 'badge ' + (s || '') }, s || '–');

export function errorBox(e) {
  const msg = e instanceof ApiError ? `${e.message} (${e.status} ${e.code})` : String(e);
  return h('div', { class: 'error', role: 'alert' }, msg);
}

// Call fn now and every ms while the tab is visible; pages stop it when
// they are left.  Errors back off (up to 30 s) and mark the header.
const liveState = { errors: 0 };
export function poll(fn, ms) {
  let timer = null, stopped = false, delay = ms;
  const mark = () => {
    const el = document.getElementById('live');
    if (!el) return;
    el.classList.toggle('error', liveState.errors > 0);
    el.classList.toggle('paused', document.hidden);
    el.textContent = liveState.errors > 0 ? 'reconnecting' : document.hidden ? 'paused' : 'live';
  };
  const run = async () => {
    timer = null;
    if (stopped) return;
    if (!document.hidden) {
      try {
        await fn();
        if (delay !== ms) liveState.errors = Math.max(0, liveState.errors - 1);
        delay = ms;
      } catch (e) {
        liveState.errors++;
        delay = Math.min(30000, delay * 2);
        console.warn('poll:', e);
      }
      if (delay === ms) liveState.errors = 0;
    }
    mark();
    if (!stopped) timer = setTimeout(run, delay);
  };
  const vis = () => { mark(); if (!document.hidden && timer) { clearTimeout(timer); run(); } };
  document.addEventListener('visibilitychange', vis);
  run();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    document.removeEventListener('visibilitychange', vis);
  };
}

// The caller as the service sees them (GET /whoami), cached per page load.
let whoPromise = null;
export function whoami(force) {
  if (force || !whoPromise) whoPromise = get('whoami').catch(() => ({ user: null, via: 'anonymous' }));
  return whoPromise;
}

// Query string of the hash route: "#/experiments?user=alice" -> URLSearchParams.
export function hashQuery() {
  const i = location.hash.indexOf('?');
  return new URLSearchParams(i < 0 ? '' : location.hash.slice(i + 1));
}
export function setHashQuery(q) {
  const base = location.hash.split('?')[0] || '#/';
  const s = q.toString();
  history.replaceState(null, '', s ? base + '?' + s : base);
}

// A categorical palette (colour-blind friendly first eight, then HSL).
const PALETTE = ['#2f6fdf', '#e4572e', '#17a398', '#f3a712', '#8e44ad', '#6c757d',
                 '#c2185b', '#43a047', '#0097a7', '#795548'];
export function colour(i) {
  return i < PALETTE.length ? PALETTE[i] : `hsl(${(i * 137.5) % 360} 60% 45%)`;
}
