// front.js - the Pareto front of an experiment with several objectives or
// constraints (GET /api/v1/experiments/{ref}/front, docs/api.md): with two
// objectives a scatter of every trial with values, the front highlighted
// (a step line through its members, larger points) and infeasible trials
// hollow grey; with more, parallel coordinates of the objectives, front
// members drawn last in a warm colour.  The server says who is on the
// front; the page only draws.  Self-contained: experiment.js mounts it
// and calls update() on each poll.
// Tests read el.dataset: points (trials drawn), front (members), feasible,
// infeasible, objectives (how many), lines (parallel coordinates).
import { get, h, clear, fmtNum } from './api.js';
import { chart } from './plots.js';

const uPlot = globalThis.uPlot;

// Two objectives: x = objective 0, y = objective 1.  Series: feasible
// trials off the front, infeasible ones, the front (points and a step line
// between them, sorted by x).
function scatterData(f) {
  const rows = f.trials.filter((t) => t.values.every((v) => typeof v === 'number'));
  const xs = [...new Set(rows.map((t) => t.values[0]))].sort((a, b) => a - b);
  const at = new Map(xs.map((x, i) => [x, i]));
  const ser = [0, 1, 2].map(() => xs.map(() => null));
  const counts = { points: 0, front: 0, feasible: 0, infeasible: 0 };
  // Several trials may share an x: the series keep one y per x each, so
  // the front's (best) y wins there; every trial still counts.
  const mode1 = f.objectives[1].mode;
  const better = (a, b) => (b === null || (mode1 === 'min' ? a < b : a > b));
  for (const t of rows) {
    const i = at.get(t.values[0]), y = t.values[1];
    const s = t.front ? 2 : t.feasible ? 0 : 1;
    if (better(y, ser[s][i])) ser[s][i] = y;
    counts.points++;
    if (t.front) counts.front++;
    if (t.feasible) counts.feasible++; else counts.infeasible++;
  }
  return { data: [xs, ...ser], counts };
}

function scatterOpts(f) {
  const [a, b] = f.objectives;
  return {
    height: 300,
    legend: { show: true },
    cursor: { drag: { x: true, y: true } },
    scales: { x: { time: false }, y: {} },
    axes: [{ label: `${a.metric} (${a.mode})` }, { label: `${b.metric} (${b.mode})`, size: 60 }],
    series: [
      { label: a.metric, value: (u, v) => fmtNum(v) },
      { label: 'trial', stroke: '#2f6fdf', paths: () => null, value: (u, v) => fmtNum(v),
        points: { show: true, size: 6, stroke: '#2f6fdf', fill: 'rgba(47,111,223,.3)' } },
      { label: 'infeasible', stroke: '#98a2b3', paths: () => null, value: (u, v) => fmtNum(v),
        points: { show: true, size: 6, stroke: '#98a2b3', fill: 'rgba(0,0,0,0)' } },
      { label: 'Pareto front', stroke: '#e4572e', width: 2, spanGaps: true, value: (u, v) => fmtNum(v),
        paths: uPlot.paths.stepped({ align: 1 }),
        points: { show: true, size: 9, stroke: '#e4572e', fill: '#e4572e' } },
    ],
  };
}

// More objectives: one axis per objective (each oriented so that up is
// better), one polyline per trial; the front in red, drawn last.
function objectiveCoords(el, f) {
  const rows = f.trials.filter((t) => t.values.every((v) => typeof v === 'number'));
  const m = f.objectives.length;
  const lo = [], hi = [];
  for (let k = 0; k < m; k++) {
    const vs = rows.map((t) => t.values[k]);
    lo.push(Math.min(...vs));
    hi.push(Math.max(...vs));
  }
  const W = Math.max(480, el.clientWidth || 800), H = 300, pad = { l: 40, r: 40, t: 24, b: 24 };
  const dpr = window.devicePixelRatio || 1;
  const cv = h('canvas', { width: W * dpr, height: H * dpr, style: { width: W + 'px', height: H + 'px' } });
  el.append(cv);
  const g = cv.getContext('2d');
  g.scale(dpr, dpr);
  const X = (k) => pad.l + (k * (W - pad.l - pad.r)) / Math.max(1, m - 1);
  const Y = (k, v) => {
    let p = hi[k] === lo[k] ? 0.5 : (v - lo[k]) / (hi[k] - lo[k]);
    if (f.objectives[k].mode === 'min') p = 1 - p;
    return pad.t + (1 - p) * (H - pad.t - pad.b);
  };
  const order = rows.slice().sort((a, b) => Number(a.front) - Number(b.front));
  for (const t of order) {
    g.strokeStyle = t.front ? 'rgba(228,87,46,.95)' : t.feasible ? 'rgba(47,111,223,.35)' : 'rgba(152,162,179,.45)';
    g.lineWidth = t.front ? 2 : 1;
    g.setLineDash(t.feasible ? [] : [4, 3]);
    g.beginPath();
    for (let k = 0; k < m; k++) {
      if (k === 0) g.moveTo(X(k), Y(k, t.values[k])); else g.lineTo(X(k), Y(k, t.values[k]));
    }
    g.stroke();
  }
  g.setLineDash([]);
  g.font = '12px system-ui, sans-serif';
  f.objectives.forEach((o, k) => {
    g.strokeStyle = '#98a2b3';
    g.beginPath(); g.moveTo(X(k), pad.t); g.lineTo(X(k), H - pad.b); g.stroke();
    g.fillStyle = '#1d2430';
    g.textAlign = 'center';
    g.fillText(`${o.metric} (${o.mode})`, X(k), 14);
  });
  return rows;
}

export function frontCard() {
  const plot = h('div', { class: 'plot', id: 'front' });
  const note = h('span', { class: 'muted', id: 'front-note' });
  const card = h('div', { class: 'card', id: 'front-card', hidden: true },
    h('h2', {}, 'Pareto front'), h('div', { class: 'plot-tools' }, note), plot);
  let c = null;
  let last = '';
  return {
    el: card,
    // Fetch and draw; nothing for an experiment of one objective without
    // constraints (the card stays hidden).
    async update(ref) {
      const f = await get(`experiments/${encodeURIComponent(ref)}/front`);
      if (f.objectives.length < 2 && !f.constrained) return;
      const text = JSON.stringify(f);
      if (text === last) return;
      last = text;
      card.hidden = false;
      if (c) { c.destroy(); c = null; }
      clear(plot);
      plot.dataset.objectives = String(f.objectives.length);
      if (f.objectives.length === 2) {
        const { data, counts } = scatterData(f);
        c = chart(plot, scatterOpts(f), data);
        Object.assign(plot.dataset, { points: String(counts.points), front: String(counts.front),
          feasible: String(counts.feasible), infeasible: String(counts.infeasible) });
      } else {
        const rows = f.objectives.length > 2 ? objectiveCoords(plot, f) : [];
        plot.dataset.lines = String(rows.length);
        plot.dataset.points = String(rows.length);
        plot.dataset.front = String(rows.filter((t) => t.front).length);
      }
      note.textContent = `${f.front.length} of ${f.trials.length} trials on the front` +
        (f.constrained ? ' (infeasible trials never are)' : '');
    },
    destroy() { if (c) c.destroy(); },
  };
}
