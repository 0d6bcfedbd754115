// queue.js - the queue per user: waiting and running segments, active
// experiments, attained GPU-time against the user's share (the fair order
// serves first the user with the least attained service over share;
// docs/scheduling.md).  Live: polled every 3 s.
import { get, h, clear, fill, poll, fmtNum, fmtDur, errorBox } from './api.js';
import { makeTable } from './table.js';

export function mount(el) {
  const msg = h('div');
  const sum = h('div', { class: 'kv' });
  const bars = h('div', { class: 'shares', id: 'shares' });
  const table = makeTable({
    rowKey: (u) => u.uid, sortKey: 'attained_gpu_s', sortDir: -1,
    columns: [
      { key: 'user', label: 'user', cell: (u) => h('a', { href: `#/?user=${encodeURIComponent(u.user)}` }, u.user) },
      { key: 'running', label: 'running', num: true },
      { key: 'queued', label: 'waiting', num: true },
      { key: 'experiments', label: 'experiments', num: true },
      { key: 'attained_gpu_s', label: 'attained GPU-time', num: true, cell: (u) => fmtDur(u.attained_gpu_s) },
      { key: 'attained_frac', label: 'of all attained', num: true, cell: (u) => pct(u.attained_frac) },
      { key: 'share', label: 'share (weight)', num: true, cell: (u) => fmtNum(u.share) },
      { key: 'share_fraction', label: 'share of devices', num: true, cell: (u) => pct(u.share_fraction) },
      { key: 'limits', label: 'limits', nosort: true, cell: (u) => limits(u.limits) },
    ],
  });
  el.append(h('h1', {}, 'Queue'), msg, h('div', { class: 'card' }, sum),
    h('div', { class: 'card' }, h('h2', {}, 'Attained GPU-time against share'),
      h('div', { class: 'plot-tools' },
        h('span', {}, h('i', { class: 'legend-dot', style: { background: '#2f6fdf' } }), 'attained (fraction of all)'),
        h('span', {}, h('i', { class: 'legend-dot', style: { background: '#f59e0b' } }), 'share (fraction of devices)')),
      bars),
    h('div', { class: 'card' }, table.el));

  async function tick() {
    const q = await get('queue');
    const total = q.users.reduce((a, u) => a + (u.attained_gpu_s || 0), 0);
    for (const u of q.users) u.attained_frac = total > 0 ? u.attained_gpu_s / total : null;
    fill(sum, 
      h('div', {}, h('span', {}, 'users'), h('b', {}, String(q.users.length))),
      h('div', {}, h('span', {}, 'running'), h('b', { id: 'q-running' }, String(q.running))),
      h('div', {}, h('span', {}, 'waiting'), h('b', { id: 'q-queued' }, String(q.queued))),
      h('div', {}, h('span', {}, 'attained, all users'), h('b', {}, fmtDur(total))));
    fill(bars, q.users.map((u) => [
      h('span', {}, u.user),
      h('div', { class: 'pair', title: `attained ${pct(u.attained_frac)}, share ${pct(u.share_fraction)}` },
        h('i', { class: 'att', style: { width: (100 * (u.attained_frac || 0)).toFixed(1) + '%' } }),
        h('i', { class: 'share', style: { width: (100 * (u.share_fraction || 0)).toFixed(1) + '%' } })),
    ]));
    if (!q.users.length) bars.append(h('p', { class: 'muted' }, 'No user has work or service yet.'));
    table.setRows(q.users);
    clear(msg);
  }
  return poll(() => tick().catch((e) => { fill(msg, errorBox(e)); throw e; }), 3000);
}

const pct = (f) => (f === null || f === undefined ? '–' : (100 * f).toFixed(1) + ' %');
function limits(l) {
  if (!l) return '–';
  const parts = [];
  if (l.gpus !== null) parts.push(`${l.gpus} GPUs`);
  if (l.gpu_memory_mib !== null) parts.push(`${l.gpu_memory_mib} MiB`);
  if (l.segments !== null) parts.push(`${l.segments} segments`);
  return parts.join(', ') || 'none';
}
