// timeaxis.js - the devices page's time axis and memory chart, drawn in
// the same SVG as the segment lanes so that both read one X(t).
//   timeTicks  ticks whose labels never touch: the step is the smallest
//              round one (1 s ... 30 days) at which every label fits
//              between its neighbours, measured in the page's font
//   memoryChart  reserved memory, measured peaks (summed over the segments
//              a device held) and utilisation over time, stepped; its
//              scale is what the segments sharing the device reserved and
//              used: a reservation of the whole device is marked as a band
//              and kept off the scale (docs/dashboard.md says why)
import { h, fmtMiB, fmtNum, fmtTime } from './api.js';

const FONT = '10px system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';
let measureCtx = null;
// The width of text in the axis font (a canvas measures what the SVG
// will draw in the same family and size).
export function textWidth(text, font = FONT) {
  if (!measureCtx) measureCtx = document.createElement('canvas').getContext('2d');
  measureCtx.font = font;
  return measureCtx.measureText(String(text)).width;
}

const STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 2 * 3600, 3 * 3600,
  6 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400, 14 * 86400, 30 * 86400];
const GAP = 24; // px between two labels at least (air, not just no contact)

const p2 = (n) => String(n).padStart(2, '0');
function label(t, step) {
  const d = new Date(t * 1000);
  const hm = `${p2(d.getHours())}:${p2(d.getMinutes())}`;
  const md = `${p2(d.getMonth() + 1)}-${p2(d.getDate())}`;
  if (step >= 86400) return md;
  // midnight inside a window of several days: the date, not 00:00
  if (d.getHours() === 0 && d.getMinutes() === 0 && d.getSeconds() === 0) return md;
  return step < 60 ? `${hm}:${p2(d.getSeconds())}` : hm;
}

// Ticks of [t0, t1] drawn at X(t) between px left and right (labels may
// reach `limit`, the SVG's right edge): {list: [{t, x, label, w}], date
// (the day of t0, for the gutter), step}.
export function timeTicks(t0, t1, X, left, right, limit = right + 48) {
  const span = Math.max(1e-9, t1 - t0), px = Math.max(1, right - left);
  const off = -new Date(t0 * 1000).getTimezoneOffset() * 60; // local alignment
  let best = null;
  for (const step of STEPS) {
    if ((span / step) * 20 > px) continue; // no label is narrower than 20 px
    const list = [];
    for (let t = Math.ceil((t0 + off) / step) * step - off; t <= t1 + 1e-9; t += step) {
      const lab = label(t, step), w = textWidth(lab), x = X(t);
      // a label that would leave the axis (its centre is the tick) is left out
      if (x - w / 2 < left - 4 || x + w / 2 > limit - 2) continue;
      list.push({ t, x, label: lab, w });
    }
    const fits = list.every((k, i) => i === 0 || k.x - list[i - 1].x >= (k.w + list[i - 1].w) / 2 + GAP);
    best = { list, step };
    if (fits && list.length) break;
    if (!fits) best = null;
  }
  if (!best) best = { list: [], step: 0 };
  best.date = fmtTime(t0).slice(0, 10);
  return best;
}

// A value scale's round top and ticks: 0, s, 2s, ... <= top.
function niceStep(max, n) {
  const raw = max / Math.max(1, n);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * mag;
}

// A stepped path of ys over xs (each value holds until the next x), from
// the baseline when area.
function stepPath(xs, ys, X, Y, base, area) {
  let d = area ? `M${X(xs[0]).toFixed(2)},${base.toFixed(2)}` : '';
  for (let i = 0; i < xs.length; i++) {
    const x = X(xs[i]).toFixed(2);
    if (i === 0 && !area) d += `M${x},${Y(ys[0]).toFixed(2)}`;
    else {
      if (i > 0) d += `L${x},${Y(ys[i - 1]).toFixed(2)}`;
      d += `L${x},${Y(ys[i]).toFixed(2)}`;
    }
  }
  if (area) d += `L${X(xs[xs.length - 1]).toFixed(2)},${base.toFixed(2)}Z`;
  return d;
}

// The memory chart of device d over [t0, t1] in the band [top, top + H]
// between px left and right.
export function memoryChart(d, segs, t0, t1, X, left, right, top, H) {
  const total = d.mem_total_mib || 0;
  // A segment that reserves (nearly) the whole device: the device held by
  // one, as a whole-host or whole-GPU probe does.  Scaling to it would
  // flatten every other segment's memory to a line at the bottom.
  const whole = (s) => total > 0 && (s.mem_reserved_mib || 0) >= 0.9 * total;
  const ev = [];
  for (const s of segs) {
    const a = Math.max(t0, s.started_at), b = Math.min(t1, s.ended_at ?? t1);
    if (b < a) continue;
    const r = Math.max(0, s.mem_reserved_mib || 0), p = Math.max(0, s.peak_mem_mib || 0);
    const u = s.mean_util || 0, wh = whole(s) ? 1 : 0;
    ev.push([a, r, p, u, wh, wh ? 0 : r], [b, -r, -p, -u, -wh, wh ? 0 : -r]);
  }
  ev.sort((x, y) => x[0] - y[0]);
  const xs = [t0], res = [0], peak = [0], util = [0], held = [0], part = [0];
  let cr = 0, cp = 0, cu = 0, cw = 0, cq = 0;
  for (let i = 0; i < ev.length;) {
    const t = ev[i][0];
    while (i < ev.length && ev[i][0] === t) {
      cr += ev[i][1]; cp += ev[i][2]; cu += ev[i][3]; cw += ev[i][4]; cq += ev[i][5]; i++;
    }
    xs.push(t); res.push(cr); peak.push(cp); util.push(Math.min(100, Math.max(0, cu)));
    held.push(cw); part.push(cq);
  }
  xs.push(t1); res.push(cr); peak.push(cp); util.push(Math.min(100, Math.max(0, cu)));
  held.push(cw); part.push(cq);
  const resMax = Math.max(...res), partMax = Math.max(...part), peakMax = Math.max(...peak);
  const anyWhole = held.some((c) => c > 0);
  let want = anyWhole ? Math.max(partMax, peakMax) : Math.max(resMax, peakMax);
  if (want <= 0) want = anyWhole ? resMax : 1;
  const step = niceStep(want * 1.1, 3);
  const top_ = Math.max(step, Math.ceil((want * 1.1) / step) * step);
  const base = top + H;
  const Y = (v) => base - (Math.min(v, top_) / top_) * H; // clipped at the top
  const U = (v) => base - (v / 100) * H;
  const g = h('svg:g', { class: 'mem', 'data-scale-mib': top_, 'data-res-max': resMax,
    'data-part-max': partMax, 'data-peak-max': peakMax, 'data-top': top, 'data-height': H });
  g.append(h('svg:rect', { x: left, y: top, width: right - left, height: H, fill: 'none', stroke: '#e3e7ee' }));
  for (let v = 0; v <= top_ + 1e-9; v += step) {
    g.append(h('svg:line', { x1: left, x2: right, y1: Y(v), y2: Y(v), stroke: '#f0f2f5' }));
    g.append(h('svg:text', { class: 'mib-tick', x: left - 6, y: Y(v) + 3, 'font-size': 10, fill: '#667085',
      'text-anchor': 'end' }, fmtMiB(Math.round(v))));
  }
  for (const v of [0, 50, 100]) {
    g.append(h('svg:text', { class: 'pct-tick', x: right + 6, y: U(v) + 3, 'font-size': 10, fill: '#17a398' },
      v + ' %'));
  }
  g.append(h('svg:text', { x: 4, y: top + 12, 'font-size': 11, fill: '#667085' }, 'memory'));
  // whole-device reservations: bands over their time, labelled
  let labelEnd = -Infinity;
  for (let i = 0; i < xs.length - 1; i++) {
    if (!held[i + 1] || (i > 0 && held[i])) continue;
    let j = i + 1;
    while (j < xs.length - 1 && held[j + 1]) j++;
    const a = X(xs[i + 1]), b = X(xs[Math.min(j + 1, xs.length - 1)]);
    let mib = 0;
    for (let k = i + 1; k <= j; k++) mib = Math.max(mib, res[k] - part[k]);
    const what = `${d.is_gpu ? 'whole GPU' : 'whole host'} reserved (${fmtMiB(mib)}), off the scale`;
    const band = h('svg:rect', { class: 'mem-whole', x: a, y: top, width: Math.max(1, b - a), height: H,
      fill: 'url(#whole-hatch)', 'fill-opacity': 1, 'data-mib': mib });
    band.append(h('svg:title', {}, what));
    g.append(band);
    // its label over the band, or beside it when the band is narrow (kept
    // inside the chart, left out where it would touch the previous one)
    const txt = `${d.is_gpu ? 'whole GPU' : 'whole host'} ${fmtMiB(mib)}`, tw = textWidth(txt);
    const cx = Math.min(Math.max((a + b) / 2, left + tw / 2 + 2), right - tw / 2 - 2);
    if (cx - tw / 2 >= labelEnd + 6) {
      labelEnd = cx + tw / 2;
      g.append(h('svg:text', { class: 'mem-whole-label', x: cx, y: top + 12, 'font-size': 10,
        'text-anchor': 'middle', fill: '#5b6473' }, txt));
    }
  }
  g.append(h('svg:path', { class: 'mem-res', d: stepPath(xs, res, X, Y, base, true),
    fill: 'rgba(47,111,223,.15)', stroke: '#2f6fdf', 'stroke-width': 1.2 }));
  g.append(h('svg:path', { class: 'mem-peak', d: stepPath(xs, peak, X, Y, base, false),
    fill: 'none', stroke: '#17202e', 'stroke-width': 1.2 }));
  g.append(h('svg:path', { class: 'mem-util', d: stepPath(xs, util, X, U, base, false),
    fill: 'none', stroke: '#17a398', 'stroke-dasharray': '4 3', 'stroke-width': 1 }));
  // hover: the values at the pointer's moment
  const read = h('svg:text', { class: 'mem-read', x: left + 6, y: top + 24, 'font-size': 10, fill: '#1d2430' });
  const cur = h('svg:line', { y1: top, y2: base, stroke: '#98a2b3', visibility: 'hidden' });
  const hit = h('svg:rect', { x: left, y: top, width: right - left, height: H, fill: 'transparent' });
  hit.addEventListener('mousemove', (e) => {
    const box = hit.getBoundingClientRect();
    const x = left + (e.clientX - box.left);
    const t = t0 + ((x - left) / Math.max(1, right - left)) * (t1 - t0);
    let lo = 0, hi = xs.length - 1;
    while (lo < hi) { const m = (lo + hi + 1) >> 1; if (xs[m] <= t) lo = m; else hi = m - 1; }
    cur.setAttribute('x1', x); cur.setAttribute('x2', x); cur.setAttribute('visibility', 'visible');
    read.textContent = `${fmtTime(t).slice(11)} · reserved ${fmtMiB(res[lo])} · peak ${fmtMiB(peak[lo])}` +
      ` · util ${fmtNum(util[lo], 3)} %`;
  });
  hit.addEventListener('mouseleave', () => { cur.setAttribute('visibility', 'hidden'); read.textContent = ''; });
  g.append(cur, read, hit);
  return g;
}

// The hatch the whole-device bands are filled with: one per page.
export function hatchDefs() {
  return h('svg:svg', { width: 0, height: 0, style: { position: 'absolute' }, 'aria-hidden': 'true' },
    h('svg:defs', {}, h('svg:pattern', { id: 'whole-hatch', width: 6, height: 6,
      patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
    h('svg:rect', { width: 6, height: 6, fill: 'rgba(152,162,179,.12)' }),
    h('svg:line', { x1: 0, y1: 0, x2: 0, y2: 6, stroke: 'rgba(152,162,179,.45)', 'stroke-width': 2 }))));
}
