// app.js - the dashboard's entry: a hash router that mounts one page
// module at a time (one file per page) and the header's sign-in.
//   #/                 experiments.js
//   #/experiments/ID   experiment.js
//   #/trials/ID        trial.js
//   #/devices          devices.js
//   #/queue            queue.js
// A page module exports mount(el, params) and returns a function that
// stops its polling when the page is left.
import { get, h, clear, fill, whoami, token, setToken, errorBox } from './api.js';

const routes = [
  [/^#?\/?(experiments)?$/, 'experiments', () => import('./experiments.js')],
  [/^#\/experiments\/([^/?]+)$/, 'experiments', () => import('./experiment.js')],
  [/^#\/trials\/(\d+)$/, 'experiments', () => import('./trial.js')],
  [/^#\/devices$/, 'devices', () => import('./devices.js')],
  [/^#\/queue$/, 'queue', () => import('./queue.js')],
];

let unmount = null;
let seq = 0;

async function route() {
  const hash = (location.hash || '#/').split('?')[0];
  const app = document.getElementById('app');
  if (unmount) { unmount(); unmount = null; }
  const my = ++seq;
  for (const [re, nav, load] of routes) {
    const m = hash.match(re);
    if (!m) continue;
    document.querySelectorAll('header nav a').forEach((a) =>
      a.classList.toggle('active', a.dataset.nav === nav));
    try {
      const mod = await load();
      if (my !== seq) return;
      clear(app);
      const stop = mod.mount(app, m.slice(1).map(decodeURIComponent));
      unmount = typeof stop === 'function' ? stop : null;
    } catch (e) {
      fill(app, errorBox(e));
    }
    return;
  }
  fill(app, h('h1', {}, 'Not found'), h('p', {}, h('a', { href: '#/' }, 'Experiments')));
}

async function header() {
  const who = document.getElementById('who');
  const me = await whoami(true);
  clear(who);
  if (me.user) {
    who.append(`${me.user}${me.root ? ' (root)' : me.admin ? ' (admin)' : ''}`);
    if (token()) who.append(h('button', { onclick: () => { setToken(''); location.reload(); } }, 'Sign out'));
  } else {
    const input = h('input', { type: 'password', placeholder: 'token', size: 14,
                               'aria-label': 'API token' });
    const sign = () => { setToken(input.value.trim()); location.reload(); };
    input.addEventListener('keydown', (e) => { if (e.key === 'Enter') sign(); });
    who.append(h('span', { class: 'muted' }, 'anonymous (read only) '), input,
               h('button', { onclick: sign }, 'Sign in'));
  }
  try {
    const s = await get('server');
    document.getElementById('server').textContent =
      `relish ${s.version} · ${s.read_only ? 'read-only view of ' + s.state_dir
                                           : 'up ' + Math.round(s.uptime_s) + ' s'} · ` +
      `${s.devices} device${s.devices === 1 ? '' : 's'}`;
    document.body.dataset.readOnly = s.read_only ? '1' : '';
  } catch { /* the page says so where it matters */ }
}

// A token in the fragment (#token=...) signs in once and is dropped from
// the address bar, so that a link from `relish serve`'s log just works.
const tm = location.hash.match(/[#&?]token=([^&]+)/);
if (tm) {
  setToken(decodeURIComponent(tm[1]));
  history.replaceState(null, '', location.pathname + '#/');
}
window.addEventListener('hashchange', route);
header();
route();
