// experiments.js - every experiment the caller may see: owner, state,
// progress, best so far, elapsed; filters by user and state (kept in the
// address, so a filtered view can be shared).  Live: polled every 3 s.
import { get, h, clear, fill, poll, badge, fmtNum, fmtDur, fmtTime, errorBox, hashQuery,
         setHashQuery } from './api.js';
import { makeTable } from './table.js';

const STATES = ['running', 'done', 'cancelled', 'failed'];

// Trials done (ended: completed, stopped early or failed) of those the
// spec plans (search.max_trials), not of those created so far: 5 done of
// 30 planned is 17 %, not the 71 % of 5 ended of 7 created.
function planned(e) {
  const t = e.trials || {};
  return Math.max(e.planned || 0, t.total || 0);
}
function doneOf(e) {
  const t = e.trials || {};
  return (t.completed || 0) + (t.stopped || 0) + (t.failed || 0);
}
function progress(e) {
  const t = e.trials || {};
  const done = doneOf(e), all = planned(e);
  const frac = all ? done / all : 0;
  return h('span', { class: 'progress-cell', 'data-done': done, 'data-planned': all,
    title: `${done} of ${all} planned trials done; ${t.total || 0} created, ${t.running || 0} running` },
    h('span', { class: 'progress' }, h('i', { style: { width: (100 * frac).toFixed(0) + '%' } })),
    `${done}/${all}`);
}

export function mount(el) {
  const q = hashQuery();
  const userSel = h('select', { 'aria-label': 'owner' }, h('option', { value: '' }, 'all users'));
  const stateSel = h('select', { 'aria-label': 'state' }, h('option', { value: '' }, 'all states'),
    STATES.map((s) => h('option', { value: s }, s)));
  stateSel.value = q.get('status') || '';
  const users = new Set();
  const msg = h('div');
  const table = makeTable({
    sortKey: 'id', sortDir: -1, filterPlaceholder: 'filter: name, owner, …',
    tools: [userSel, stateSel],
    columns: [
      { key: 'id', label: 'id', num: true },
      { key: 'experiment', label: 'experiment',
        cell: (e) => h('a', { href: `#/experiments/${e.id}` }, e.experiment) },
      { key: 'owner', label: 'owner', value: (e) => e.owner ?? '' },
      { key: 'status', label: 'state', cell: (e) => badge(e.status) },
      { key: 'progress', label: 'progress', value: (e) => (planned(e) ? doneOf(e) / planned(e) : 0),
        cell: progress },
      { key: 'running', label: 'running', num: true, value: (e) => e.trials?.running ?? 0 },
      { key: 'best', label: 'best', num: true, value: (e) => e.best?.value ?? null,
        cell: (e) => (e.best ? h('a', { href: `#/trials/${e.best.trial_id}`,
          title: `${e.objective?.mode} ${e.objective?.metric}, trial ${e.best.trial_id}` },
          fmtNum(e.best.value)) : '–') },
      { key: 'metric', label: 'objective', value: (e) => `${e.objective?.mode ?? ''} ${e.objective?.metric ?? ''}` },
      { key: 'created_at', label: 'created', cell: (e) => fmtTime(e.created_at) },
      { key: 'elapsed_s', label: 'elapsed', num: true, cell: (e) => fmtDur(e.elapsed_s) },
    ],
  });
  el.append(h('h1', {}, 'Experiments'), msg, h('div', { class: 'card' }, table.el));

  const load = async () => {
    const p = new URLSearchParams();
    if (userSel.value) p.set('user', userSel.value);
    if (stateSel.value) p.set('status', stateSel.value);
    const j = await get('experiments' + (p.toString() ? '?' + p : ''));
    clear(msg);
    for (const e of j.experiments) if (e.owner) users.add(e.owner);
    const have = new Set([...userSel.options].map((o) => o.value));
    [...users].sort().forEach((u) => { if (!have.has(u)) userSel.append(h('option', { value: u }, u)); });
    table.setRows(j.experiments);
    if (!j.experiments.length) {
      msg.append(h('p', { class: 'muted' }, userSel.value || stateSel.value
        ? 'No experiment matches these filters.'
        : 'No experiment yet: submit one with `relish submit SPEC`.'));
    }
  };
  const refilter = () => {
    const p = new URLSearchParams();
    if (userSel.value) p.set('user', userSel.value);
    if (stateSel.value) p.set('status', stateSel.value);
    setHashQuery(p);
    load().catch((e) => fill(msg, errorBox(e)));
  };
  if (q.get('user')) { users.add(q.get('user')); userSel.append(h('option', { value: q.get('user') }, q.get('user'))); userSel.value = q.get('user'); }
  userSel.addEventListener('change', refilter);
  stateSel.addEventListener('change', refilter);
  return poll(() => load().catch((e) => { fill(msg, errorBox(e)); throw e; }), 3000);
}
