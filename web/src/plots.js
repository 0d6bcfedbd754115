// plots.js - the experiment's and trial's pictures: uPlot line and point
// charts, parallel coordinates on a canvas, and parameter importance.
// uPlot is loaded by index.html from the binary (/ui/uPlot.iife.min.js).
import { h, clear, colour, fmtNum } from './api.js';
import { textWidth } from './timeaxis.js';

const uPlot = globalThis.uPlot;

// A uPlot chart in el that follows el's width.  Returns {u, destroy}.
// el.dataset.series = how many data series it draws (tests read it).
export function chart(el, opts, data) {
  clear(el);
  const width = Math.max(320, el.clientWidth || 600);
  const u = new uPlot({ width, height: opts.height || 280, ...opts }, data, el);
  el.dataset.series = String(u.series.length - 1);
  el.dataset.points = String(data[0] ? data[0].length : 0);
  const ro = new ResizeObserver(() => {
    const w = Math.max(320, el.clientWidth);
    if (Math.abs(w - u.width) > 4) u.setSize({ width: w, height: u.height });
  });
  ro.observe(el);
  return { u, destroy() { ro.disconnect(); u.destroy(); } };
}

const better = (mode) => (mode === 'min' ? (a, b) => a < b : (a, b) => a > b);

// Objective per trial (points, by trial index) and the best so far (a
// step line).  trials: TRIAL objects; mode 'min' | 'max'.
export function historyData(trials, mode) {
  const t = trials.filter((x) => x.objective !== null && x.objective !== undefined)
                  .sort((a, b) => a.index - b.index);
  const xs = [], ys = [], best = [];
  const b = better(mode);
  let cur = null;
  for (const x of t) {
    xs.push(x.index);
    ys.push(x.objective);
    if (cur === null || b(x.objective, cur)) cur = x.objective;
    best.push(cur);
  }
  return [xs, ys, best];
}

export function historyOpts(metric, logY) {
  return {
    height: 280,
    legend: { show: false },
    cursor: { drag: { x: true, y: false } },
    scales: { x: { time: false }, y: { distr: logY ? 3 : 1 } },
    axes: [{ label: 'trial index (order proposed)' }, { label: metric, size: 60 }],
    series: [
      { label: 'index' },
      { label: metric, stroke: '#2f6fdf', paths: () => null,
        points: { show: true, size: 5, stroke: '#2f6fdf', fill: 'rgba(47,111,223,.35)' } },
      { label: 'best so far', stroke: '#e4572e', width: 2,
        paths: uPlot.paths.stepped({ align: 1 }), points: { show: false } },
    ],
  };
}

// Learning curves: one series per trial on the resource axis.  curves:
// [{trial_id, index, status, points: [[resource, value], ...]}].  Stopped
// (and failed) trials are dashed and grey, so early stopping is visible.
export function curvesData(curves, logX) {
  const tables = curves.map((c) => {
    const pts = logX ? c.points.filter((p) => p[0] > 0) : c.points;
    return [pts.map((p) => p[0]), pts.map((p) => p[1])];
  });
  if (!tables.length) return [[]];
  return uPlot.join(tables);
}

export function curvesOpts(metric, curves, logX, logY, resourceName) {
  const series = [{ label: resourceName || 'resource' }];
  curves.forEach((c, i) => {
    const stopped = c.status !== 'completed' && c.status !== 'running';
    series.push({
      label: `#${c.index}`,
      stroke: stopped ? 'rgba(102,112,133,.75)' : c.status === 'running' ? '#e4572e' : colour([0, 2, 4, 6, 7, 8, 9][i % 7]),
      width: stopped ? 1.2 : 1.8,
      dash: stopped ? [5, 4] : undefined,
      spanGaps: true,
      points: { show: false },
      value: (u, v) => fmtNum(v),
    });
  });
  return {
    height: 300,
    legend: { show: curves.length <= 12 },
    cursor: { drag: { x: true, y: false } },
    scales: { x: { time: false, distr: logX ? 3 : 1 }, y: { distr: logY ? 3 : 1 } },
    axes: [{ label: resourceName || 'resource' }, { label: metric, size: 60 }],
    series,
  };
}

// Parameter importance: for each parameter, the share of the variance of
// the objective's ranks explained by the parameter (eta squared, the
// correlation ratio): numbers are cut into up to 10 quantile bins, other
// values are their own group; then eta^2 = between-group sum of squares /
// total sum of squares, normalised to sum 1 over the parameters.  Ranks
// make it robust to the objective's scale and outliers; bins catch effects
// that are not monotonic (an optimum in the middle of a range) that a
// correlation would miss.  docs/dashboard.md says what it does not do
// (interactions).
export function importance(trials, names) {
  const t = trials.filter((x) => x.objective !== null && x.objective !== undefined && x.params);
  if (t.length < 3) return [];
  const order = t.map((x, i) => [x.objective, i]).sort((a, b) => a[0] - b[0]);
  const rank = new Array(t.length);
  for (let i = 0; i < order.length;) {           // average ranks for ties
    let j = i;
    while (j + 1 < order.length && order[j + 1][0] === order[i][0]) j++;
    for (let k = i; k <= j; k++) rank[order[k][1]] = (i + j) / 2;
    i = j + 1;
  }
  const mean = rank.reduce((a, b) => a + b, 0) / rank.length;
  const sst = rank.reduce((a, r) => a + (r - mean) ** 2, 0);
  const out = [];
  for (const name of names) {
    const vals = t.map((x) => x.params[name]);
    const idx = vals.map((v, i) => [v, i]).filter((p) => p[0] !== undefined && p[0] !== null);
    if (idx.length < 3 || sst === 0) { out.push({ name, eta2: 0, n: idx.length }); continue; }
    const groups = new Map();
    if (idx.every((p) => typeof p[0] === 'number')) {
      idx.sort((a, b) => a[0] - b[0]);
      const bins = Math.min(10, new Set(idx.map((p) => p[0])).size);
      idx.forEach((p, k) => {
        const g = Math.min(bins - 1, Math.floor((k * bins) / idx.length));
        if (!groups.has(g)) groups.set(g, []);
        groups.get(g).push(rank[p[1]]);
      });
    } else {
      for (const [v, i] of idx) {
        const k = JSON.stringify(v);
        if (!groups.has(k)) groups.set(k, []);
        groups.get(k).push(rank[i]);
      }
    }
    const m = idx.reduce((a, p) => a + rank[p[1]], 0) / idx.length;
    const tot = idx.reduce((a, p) => a + (rank[p[1]] - m) ** 2, 0);
    let ssb = 0;
    for (const g of groups.values()) {
      const gm = g.reduce((a, b) => a + b, 0) / g.length;
      ssb += g.length * (gm - m) ** 2;
    }
    out.push({ name, eta2: tot > 0 ? ssb / tot : 0, n: idx.length });
  }
  const sum = out.reduce((a, x) => a + x.eta2, 0);
  out.forEach((x) => { x.share = sum > 0 ? x.eta2 / sum : 0; });
  return out.sort((a, b) => b.share - a.share);
}

export function importanceBars(el, imp) {
  clear(el);
  if (!imp.length) {
    el.append(h('p', { class: 'muted' }, 'Needs three trials with a value.'));
    return;
  }
  const max = Math.max(...imp.map((x) => x.share), 1e-9);
  el.append(h('div', { class: 'imp' }, imp.map((x) => [
    h('span', { class: 'name', title: x.name }, x.name),
    h('div', {}, h('div', { class: 'bar', style: { width: (100 * x.share / max).toFixed(1) + '%' } })),
    h('span', { class: 'num', title: `eta² ${x.eta2.toFixed(3)} over ${x.n} trials` },
      (100 * x.share).toFixed(0) + ' %'),
  ])));
  el.dataset.params = String(imp.length);
}

// Parallel coordinates of the parameters and the objective: one polyline
// per trial on a canvas (10,000 take a few tens of milliseconds), coloured
// by objective (the best in warm colours, drawn last); the axes and their
// labels in an SVG over it, laid out so that no two labels touch (names
// in two staggered rows when one row has no room, shortened with '…' past
// that, the full name in a tooltip).  An axis is log only for a parameter
// the spec samples on a log scale (loguniform, int with log: true), and
// spans the spec's range; a uniform one is linear (issue 30, item 11: a
// uniform parameter spanning two decades was drawn on a log axis).
// space: the experiment's search.space (GET /experiments/ID), or null.
export function parcoords(el, trials, names, metric, mode, space) {
  clear(el);
  const t = trials.filter((x) => x.objective !== null && x.objective !== undefined && x.params);
  const axes = names.map((n) => axisOf(n, t.map((x) => x.params[n]), space ? space[n] : null));
  axes.push(axisOf(metric, t.map((x) => x.objective), null));
  const W = Math.max(480, el.clientWidth || 800), H = 300;
  const n = axes.length;
  const NAME = '12px system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';
  const VAL = '11px system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';
  const names2 = axes.map((a) => a.name + (a.log ? ' (log)' : ''));
  const lows = axes.map((a) => String(a.label(0))), highs = axes.map((a) => String(a.label(1)));
  // The margins hold half of the outer names and the last axis's values
  // (every value label is to the right of its axis).
  const valW = Math.min(120, Math.max(textWidth(lows[n - 1], VAL), textWidth(highs[n - 1], VAL)) + 6);
  let pad = { l: 12, r: valW + 6, t: 24, b: 10 };
  let sp = 0, two = false, shown = names2;
  for (let pass = 0; pass < 3; pass++) {
    sp = (W - pad.l - pad.r) / Math.max(1, n - 1);
    const room1 = n > 1 ? sp - 10 : W - 20;
    two = names2.some((s) => textWidth(s, NAME) > room1);
    const room = two ? 2 * sp - 10 : room1;
    shown = names2.map((s) => fit(s, room, NAME));
    const first = textWidth(shown[0], NAME) / 2 + 4, last = textWidth(shown[n - 1], NAME) / 2 + 4;
    const next = { l: Math.max(12, Math.min(first, sp)), r: Math.max(valW + 6, Math.min(last, sp)),
                   t: two ? 38 : 24, b: 10 };
    if (next.l === pad.l && next.r === pad.r && next.t === pad.t) break;
    pad = next;
  }
  const dpr = window.devicePixelRatio || 1;
  const cv = h('canvas', { width: W * dpr, height: H * dpr, style: { width: W + 'px', height: H + 'px' } });
  const over = h('svg:svg', { width: W, height: H, class: 'pc-axes',
    style: { position: 'absolute', left: 0, top: 0, overflow: 'visible' } });
  el.append(h('div', { style: { position: 'relative', width: W + 'px', height: H + 'px' } }, cv, over));
  el.dataset.lines = String(t.length);
  const g = cv.getContext('2d');
  g.scale(dpr, dpr);
  const X = (i) => pad.l + (n > 1 ? i * sp : (W - pad.l - pad.r) / 2);
  const Y = (f) => pad.t + 8 + (1 - f) * (H - pad.t - 8 - pad.b);
  const oa = axes[n - 1];
  const score = (x) => { const f = oa.pos(x.objective); return mode === 'min' ? 1 - f : f; };
  const sorted = t.slice().sort((a, b) => score(a) - score(b));
  g.lineWidth = 1;
  const alpha = t.length > 2000 ? 0.12 : t.length > 300 ? 0.25 : 0.55;
  for (const x of sorted) {
    const s = score(x);
    g.strokeStyle = `hsla(${(220 - 200 * s).toFixed(0)}, 75%, ${(48 - 6 * s).toFixed(0)}%, ${alpha + 0.4 * s * s})`;
    g.beginPath();
    axes.forEach((a, i) => {
      const v = i === n - 1 ? x.objective : x.params[a.name];
      const y = Y(a.pos(v));
      if (i === 0) g.moveTo(X(i), y); else g.lineTo(X(i), y);
    });
    g.stroke();
  }
  axes.forEach((a, i) => {
    const ax = h('svg:g', { class: 'pc-axis', 'data-name': a.name,
      'data-scale': a.log ? 'log' : a.cat ? 'category' : 'linear' });
    ax.append(h('svg:line', { x1: X(i), x2: X(i), y1: Y(0), y2: Y(1), stroke: '#98a2b3' }));
    const name = h('svg:text', { class: 'pc-name', x: X(i), y: two && i % 2 ? 28 : 14, 'font-size': 12,
      fill: '#1d2430', 'text-anchor': 'middle', style: { font: NAME } }, shown[i]);
    name.append(h('svg:title', {}, names2[i]));
    ax.append(name);
    const room = n > 1 && i < n - 1 ? sp - 10 : valW;
    for (const [f, lab, dy] of [[1, highs[i], 10], [0, lows[i], -3]]) {
      const v = h('svg:text', { class: 'pc-value', x: X(i) + 4, y: Y(f) + dy, fill: '#667085',
        style: { font: VAL } }, fit(lab, room, VAL));
      v.append(h('svg:title', {}, lab));
      ax.append(v);
    }
    over.append(ax);
  });
}

// s shortened with '…' to at most px wide in font.
function fit(s, px, font) {
  s = String(s);
  if (textWidth(s, font) <= px) return s;
  let lo = 0, hi = s.length;
  while (lo < hi) {
    const m = (lo + hi + 1) >> 1;
    if (textWidth(s.slice(0, m) + '…', font) <= px) lo = m; else hi = m - 1;
  }
  return lo ? s.slice(0, lo) + '…' : '…';
}

// An axis for values vals of a parameter defined by def (its search.space
// entry; null: none known, as for the objective): {name, log, cat, pos(v)
// in [0, 1], label(0|1)}.
function axisOf(name, vals, def) {
  const present = vals.filter((v) => v !== undefined && v !== null);
  const numeric = present.length && present.every((v) => typeof v === 'number');
  const type = def && def.type;
  if (numeric && type !== 'choice') {
    let lo = Math.min(...present), hi = Math.max(...present);
    const log = type === 'loguniform' || (type === 'int' && def.log === true);
    // the spec's range, when it has one (a trial never leaves it)
    if (def && typeof def.low === 'number' && typeof def.high === 'number') {
      lo = Math.min(lo, def.low);
      hi = Math.max(hi, def.high);
    }
    const logOk = log && lo > 0;
    const f = logOk ? Math.log10 : (v) => v;
    const a = f(lo), b = f(hi);
    return { name, log: logOk, cat: false,
      pos: (v) => (typeof v !== 'number' ? 0.5 : b === a ? 0.5 : (f(v) - a) / (b - a)),
      label: (p) => fmtNum(p ? hi : lo, 3) };
  }
  // categories: the spec's order when it has one, else sorted
  let cats = [...new Set(present.map((v) => JSON.stringify(v)))].sort();
  if (def && Array.isArray(def.values)) {
    const spec = def.values.map((v) => JSON.stringify(v));
    cats = [...spec, ...cats.filter((c) => !spec.includes(c))];
  }
  const at = new Map(cats.map((c, i) => [c, cats.length === 1 ? 0.5 : i / (cats.length - 1)]));
  return { name, log: false, cat: true,
    pos: (v) => at.get(JSON.stringify(v)) ?? 0.5,
    label: (p) => (cats.length ? JSON.parse(cats[p ? cats.length - 1 : 0]) : '') };
}
