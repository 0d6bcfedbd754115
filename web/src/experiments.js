// experiments.js - every experiment the caller may see: owner, state,
// progress, best so far, elapsed; filters by user, state and age, and the
// page in view, kept in the address (so a view can be shared).  A page
// of 50 at a time, newest first, from the API's paged list (?order=desc
// &limit=50&after=ID): the page holds 50 rows whatever the store holds.
// Live: the page in view polled every 3 s.
import { get, h, clear, fill, poll, badge, fmtNum, fmtDur, fmtTime, errorBox, hashQuery,
         setHashQuery } from './api.js';
import { makeTable } from './table.js';

const STATES = ['running', 'done', 'cancelled', 'failed'];
const AGES = [['', 'any age'], ['1h', 'last hour'], ['1d', 'last day'], ['7d', 'last 7 days'],
              ['30d', 'last 30 days']];
const PAGE = 50; // experiments a page

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
  const ageSel = h('select', { 'aria-label': 'age' }, AGES.map(([v, l]) => h('option', { value: v }, l)));
  stateSel.value = q.get('status') || '';
  ageSel.value = AGES.some(([v]) => v === q.get('since')) ? q.get('since') : '';
  const users = new Set();
  const msg = h('div');
  // The page in view: its cursor (?after= of GET /experiments, newest
  // first; '' for the first page) and its number (for the reader only).
  let after = q.get('after') || '';
  let pageNo = Math.max(1, Number(q.get('page')) || 1);
  let nextAfter = null;
  let shown = [];
  const prevBtn = h('button', { id: 'exp-prev', disabled: true }, '‹ newer');
  const nextBtn = h('button', { id: 'exp-next', disabled: true }, 'older ›');
  const where = h('span', { id: 'exp-page', class: 'muted' });
  const pager = h('div', { class: 'pager', id: 'exp-pager' }, prevBtn, where, nextBtn);
  const table = makeTable({
    sortKey: 'id', sortDir: -1, pageSize: PAGE, filterPlaceholder: 'filter this page: name, owner, …',
    tools: [userSel, stateSel, ageSel],
    columns: [
      { key: 'id', label: 'id', num: true },
      { key: 'experiment', label: 'experiment',
        cell: (e) => h('a', { href: `#/experiments/${e.id}` }, e.experiment) },
      { key: 'owner', label: 'owner', value: (e) => e.owner ?? '' },
      { key: 'status', label: 'state', cell: (e) => badge(e.paused ? 'paused' : e.status) },
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
  el.append(h('h1', {}, 'Experiments'), msg, h('div', { class: 'card' }, table.el, pager));

  const filters = () => {
    const p = new URLSearchParams();
    if (userSel.value) p.set('user', userSel.value);
    if (stateSel.value) p.set('status', stateSel.value);
    if (ageSel.value) p.set('since', ageSel.value);
    return p;
  };
  const keepAddress = () => {
    const p = filters();
    if (after) { p.set('after', after); p.set('page', String(pageNo)); }
    setHashQuery(p);
  };
  const addUsers = (list) => {
    for (const u of list) if (u) users.add(u);
    const have = new Set([...userSel.options].map((o) => o.value));
    [...users].sort().forEach((u) => { if (!have.has(u)) userSel.append(h('option', { value: u }, u)); });
  };
  function show(j) {
    clear(msg);
    shown = j.experiments;
    nextAfter = j.next_after;
    addUsers(shown.map((e) => e.owner));
    table.setRows(shown);
    const from = (pageNo - 1) * PAGE + 1;
    where.textContent = shown.length
      ? `page ${pageNo} · experiments ${from}–${from + shown.length - 1}${nextAfter === null ? ' (the oldest)' : ''}`
      : `page ${pageNo}`;
    pager.dataset.page = String(pageNo);
    pager.dataset.rows = String(shown.length);
    prevBtn.disabled = !after;
    nextBtn.disabled = nextAfter === null;
    if (!shown.length) {
      msg.append(h('p', { class: 'muted' }, userSel.value || stateSel.value || ageSel.value
        ? 'No experiment matches these filters.'
        : after ? 'No experiment on this page.' : 'No experiment yet: submit one with `relish submit SPEC`.'));
    }
  }
  // One page of the API's list, newest first: a store of 10,000
  // experiments answers 50 of them (issue 27, item 1).
  const load = async () => {
    const p = filters();
    p.set('order', 'desc');
    p.set('limit', String(PAGE));
    if (after) p.set('after', after);
    show(await get('experiments?' + p));
  };
  const go = (fn) => () => {
    fn().then(keepAddress).catch((e) => fill(msg, errorBox(e)));
  };
  nextBtn.addEventListener('click', go(async () => {
    if (nextAfter === null) return;
    after = String(nextAfter);
    pageNo++;
    await load();
  }));
  // The newer page: the PAGE ids just above this page's newest (oldest
  // first, then turned), or the first page when fewer are left.
  prevBtn.addEventListener('click', go(async () => {
    if (!after) return;
    const top = shown.length ? shown[0].id : Number(after) - 1;
    const p = filters();
    p.set('limit', String(PAGE));
    p.set('after', String(top));
    const j = await get('experiments?' + p);
    pageNo = Math.max(1, pageNo - 1);
    if (j.experiments.length < PAGE || j.next_after === null || pageNo === 1) {
      after = '';
      pageNo = 1;
    } else {
      after = String(j.experiments[j.experiments.length - 1].id + 1);
    }
    await load();
  }));
  const refilter = () => {
    after = '';
    pageNo = 1;
    keepAddress();
    load().catch((e) => fill(msg, errorBox(e)));
  };
  if (q.get('user')) { addUsers([q.get('user')]); userSel.value = q.get('user'); }
  // every user with work or service so far, not only those of this page
  get('queue').then((j) => addUsers((j.users || []).map((u) => u.user))).catch(() => {});
  userSel.addEventListener('change', refilter);
  stateSel.addEventListener('change', refilter);
  ageSel.addEventListener('change', refilter);
  return poll(() => load().catch((e) => { fill(msg, errorBox(e)); throw e; }), 3000);
}
