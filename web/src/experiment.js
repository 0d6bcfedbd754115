// experiment.js - one experiment: its summary and cancel button, the
// optimization history (objective per trial, best so far), learning
// curves on the resource axis (stopped trials dashed; log axes), parallel
// coordinates, parameter importance and the trial table.
// Live: every 2 s the trials that changed (?after=cursor) and the curves
// that grew (curves?after=) are fetched and merged; nothing is reloaded.
// At 10,000 trials: one fetch of the trials, the table draws one page,
// the curves are 40 (the best 20, 20 spread over the other ranks) and the
// running ones, chosen by the server; the history and parallel
// coordinates draw every trial on a canvas; trials and curves are fetched
// every 6 s, and no more once the experiment has ended.
import { get, post, h, clear, fill, poll, badge, fmtNum, fmtDur, fmtTime, fmtMiB, errorBox,
         whoami, ApiError } from './api.js';
import { makeTable } from './table.js';
import { frontCard } from './front.js';
import { chart, historyData, historyOpts, curvesData, curvesOpts, importance, importanceBars,
         parcoords } from './plots.js';

const CURVES = 40;

export function mount(el, [ref]) {
  let exp = null;
  let cursor = null;
  let curveCursor = null;
  const trials = new Map();
  const curves = new Map();
  let curvesTotal = 0;
  let paramNames = [];
  let charts = {};
  let dirty = true;
  let stopped = false;

  const head = h('div');
  const msg = h('div');
  const histEl = h('div', { class: 'plot', id: 'history' });
  const curvEl = h('div', { class: 'plot', id: 'curves' });
  const pcEl = h('div', { class: 'plot', id: 'parcoords' });
  const impEl = h('div', { id: 'importance' });
  const curvNote = h('span', { class: 'muted' });
  const opt = { histLogY: false, logX: false, logY: false };
  const toggle = (key, label) => {
    const cb = h('input', { type: 'checkbox', 'data-opt': key });
    cb.addEventListener('change', () => { opt[key] = cb.checked; dirty = true; draw(true); });
    return h('label', {}, cb, ' ', label);
  };
  let table = null;
  const tableBox = h('div');
  const front = frontCard();

  el.append(head, msg,
    h('div', { class: 'grid' },
      h('div', { class: 'card' }, h('h2', {}, 'Optimization history'),
        h('div', { class: 'plot-tools' }, toggle('histLogY', 'log objective'),
          h('span', {}, h('i', { class: 'legend-dot', style: { background: '#2f6fdf' } }), 'trial'),
          h('span', {}, h('i', { class: 'legend-dot', style: { background: '#e4572e' } }), 'best so far')),
        histEl),
      h('div', { class: 'card' }, h('h2', {}, 'Learning curves'),
        h('div', { class: 'plot-tools' }, toggle('logX', 'log resource'), toggle('logY', 'log value'),
          h('span', {}, h('i', { class: 'legend-dot', style: { background: 'rgba(120,130,150,.7)' } }),
            'stopped (dashed)'),
          h('span', {}, h('i', { class: 'legend-dot', style: { background: '#e4572e' } }), 'running'),
          curvNote),
        curvEl),
      h('div', { class: 'card' }, h('h2', {}, 'Parallel coordinates'),
        h('div', { class: 'plot-tools' }, 'one line per trial with a value, coloured by objective (best: warm)'),
        pcEl),
      h('div', { class: 'card' }, h('h2', {}, 'Parameter importance'),
        h('div', { class: 'plot-tools' },
          h('span', { title: 'share of the variance of the objective\'s ranks explained by each parameter (eta squared over quantile bins), normalised' },
            'rank variance explained per parameter (η²; docs/dashboard.md)')),
        impEl)),
    front.el,
    h('div', { class: 'card', style: { marginTop: '16px' } }, h('h2', {}, 'Trials'), tableBox));

  function buildTable() {
    const cols = [
      { key: 'id', label: 'trial', num: true, cell: (t) => h('a', { href: `#/trials/${t.id}` }, t.id) },
      // The id names a trial everywhere (relish trials, logs, the API);
      // the index is its place in the order the search proposed it, the
      // history plot's x (issue 30, item 11: '#' beside 'trial' mixed them)
      { key: 'index', label: 'index', num: true,
        title: 'order in which the search proposed it, from 0 (the history plot\'s x); the trial column is its id' },
      { key: 'status', label: 'state', cell: (t) => badge(t.status) },
      { key: 'objective', label: exp.objective?.metric || 'objective', num: true, cell: (t) => fmtNum(t.objective) },
      { key: 'resource', label: 'resource', num: true, cell: (t) => fmtNum(t.resource) },
      ...paramNames.map((p) => ({ key: 'p.' + p, label: p, num: true,
        value: (t) => (t.params ? t.params[p] : null),
        cell: (t) => { const v = t.params ? t.params[p] : null; return typeof v === 'number' ? fmtNum(v) : v ?? '–'; } })),
      { key: 'segments', label: 'segments', num: true },
      { key: 'oom', label: 'OOM', num: true },
      { key: 'peak_mem_mib', label: 'peak', num: true, cell: (t) => fmtMiB(t.peak_mem_mib) },
      { key: 'updated_at', label: 'updated', cell: (t) => fmtTime(t.updated_at) },
    ];
    table = makeTable({ columns: cols, sortKey: 'objective', sortDir: exp.objective?.mode === 'min' ? 1 : -1,
      filterPlaceholder: 'filter: completed, lr>0.01 …' });
    fill(tableBox, table.el);
  }

  async function drawHead() {
    const me = await whoami();
    const t = exp.trials || {};
    const cancelBox = h('span');
    if (exp.status === 'running' && me.user && !document.body.dataset.readOnly) {
      const btn = h('button', { class: 'danger', id: 'cancel' }, 'Cancel experiment');
      btn.addEventListener('click', () => {
        fill(cancelBox, h('span', {}, `Cancel ${exp.experiment}? `),
          h('button', { class: 'danger', id: 'cancel-yes', onclick: async () => {
            try {
              exp = await post(`experiments/${exp.id}/cancel`);
              fill(msg, h('div', { class: 'note', id: 'cancel-done' }, `${exp.experiment} cancelled.`));
              drawHead();
            } catch (e) {
              fill(msg, h('div', { class: 'error', role: 'alert', id: 'cancel-refused' },
                e instanceof ApiError ? `Not cancelled: ${e.message}` : String(e)));
              drawHead();
            }
          } }, 'Yes, cancel'), ' ', h('button', { onclick: () => drawHead() }, 'No'));
      });
      cancelBox.append(btn);
    }
    fill(head, 
      h('div', { class: 'row' }, h('h1', {}, exp.experiment), badge(exp.paused ? 'paused' : exp.status),
        h('span', { class: 'muted' }, `#${exp.id} · ${exp.owner ?? 'no owner'}`),
        h('span', { class: 'spacer' }), cancelBox),
      h('div', { class: 'kv' },
        h('div', {}, h('span', {}, 'objective'), h('b', {}, `${exp.objective?.mode} ${exp.objective?.metric}`)),
        h('div', {}, h('span', {}, 'best'), h('b', { id: 'best' }, exp.best
          ? h('a', { href: `#/trials/${exp.best.trial_id}` }, fmtNum(exp.best.value)) : '–')),
        h('div', {}, h('span', {}, 'trials'), h('b', { id: 'trial-count' }, String(t.total ?? 0))),
        h('div', {}, h('span', {}, 'running'), h('b', {}, String(t.running ?? 0))),
        h('div', {}, h('span', {}, 'completed'), h('b', {}, String(t.completed ?? 0))),
        h('div', {}, h('span', {}, 'stopped'), h('b', {}, String(t.stopped ?? 0))),
        h('div', {}, h('span', {}, 'failed'), h('b', {}, String(t.failed ?? 0))),
        h('div', {}, h('span', {}, 'elapsed'), h('b', {}, fmtDur(exp.elapsed_s))),
        h('div', {}, h('span', {}, 'created'), h('b', {}, fmtTime(exp.created_at)))));
  }

  let lastDraw = -Infinity;
  function draw(force) {
    if (!dirty || !exp) return;
    // Big experiments redraw at most every 5 s; small ones at every poll.
    const now = performance.now();
    if (!force && trials.size > 2000 && now - lastDraw < 5000) return;
    lastDraw = now;
    dirty = false;
    const list = [...trials.values()];
    const mode = exp.objective?.mode || 'max';
    const metric = exp.objective?.metric || 'objective';
    for (const c of Object.values(charts)) c.destroy();
    charts = {};
    charts.hist = chart(histEl, historyOpts(metric, opt.histLogY), historyData(list, mode));
    const cv = [...curves.values()].sort((a, b) => a.index - b.index);
    charts.curves = chart(curvEl, curvesOpts(metric, cv, opt.logX, opt.logY, 'resource'),
      curvesData(cv, opt.logX));
    curvNote.textContent = curvesTotal > cv.length
      ? `${cv.length} of ${curvesTotal} trials: the best ${CURVES / 2}, ${CURVES / 2} others across the ranks, the running ones`
      : `${cv.length} trials`;
    parcoords(pcEl, list, paramNames, metric, mode, exp.space || null);
    importanceBars(impEl, importance(list, paramNames));
    table.setRows(list);
  }

  async function loadTrials() {
    const j = await get(`experiments/${encodeURIComponent(ref)}/trials` +
      (cursor ? `?after=${encodeURIComponent(cursor)}` : ''));
    if (j.cursor) cursor = j.cursor;
    let newParams = false;
    for (const t of j.trials) {
      trials.set(t.id, t);
      for (const k of Object.keys(t.params || {})) {
        if (!paramNames.includes(k)) { paramNames.push(k); newParams = true; }
      }
    }
    if (newParams || !table) buildTable();
    if (j.trials.length) dirty = true;
  }

  async function loadCurves() {
    const metric = exp.objective?.metric;
    if (!metric) return;
    const j = await get(`experiments/${encodeURIComponent(ref)}/curves?name=${encodeURIComponent(metric)}` +
      `&limit=${CURVES}` + (curveCursor ? `&after=${encodeURIComponent(curveCursor)}` : ''));
    if (j.cursor) curveCursor = j.cursor;
    curvesTotal = j.total;
    if (j.full) curves.clear();
    for (const c of j.trials) curves.set(c.trial_id, c);
    // Keep the chosen ones: trials that left the selection go.
    const keep = new Set(j.selected);
    for (const id of [...curves.keys()]) if (!keep.has(id)) curves.delete(id);
    if (j.trials.length || j.full) dirty = true;
    // A trial that joined the selection without new points: fetch all again.
    if ([...keep].some((id) => !curves.has(id))) curveCursor = null;
  }

  // Trials and curves are fetched while the experiment runs (and once
  // more after it ended); big experiments every 6 s rather than every 2.
  let lastLoad = -Infinity, loadedFinal = false;
  async function tick() {
    if (stopped) return;
    const e = await get(`experiments/${encodeURIComponent(ref)}`);
    const changed = !exp || JSON.stringify(e) !== JSON.stringify(exp);
    exp = e;
    if (changed) await drawHead();
    const now = performance.now();
    const due = now - lastLoad >= (trials.size > 2000 ? 6000 : 0);
    if (!loadedFinal && (due || changed)) {
      lastLoad = now;
      await loadTrials();
      await loadCurves();
      await front.update(ref);
      if (exp.status !== 'running') loadedFinal = true;
    }
    draw(false);
  }

  const stop = poll(() => tick().catch((e) => {
    fill(msg, errorBox(e));
    throw e;
  }), 2000);
  return () => { stopped = true; stop(); front.destroy(); for (const c of Object.values(charts)) c.destroy(); };
}
