// devices.js - every device: what runs there now (reserved against
// measured memory, compute), and a timeline per device of the segments it
// held: which segments of which experiments shared it over time (one lane
// per segment running at once), each bar's inner strip its measured peak
// over its reservation; below each, reserved and measured memory and
// utilisation over time, summed over the segments it held.  Built from
// the store's segment rows (GET /timeline) and the live view (GET
// /devices).  Live: polled every 3 s.
import { get, h, clear, fill, poll, badge, fmtNum, fmtMiB, fmtDur, fmtTime, errorBox, colour,
         hashQuery, setHashQuery } from './api.js';
import { memoryChart, timeTicks, hatchDefs } from './timeaxis.js';

const WINDOWS = [[900, 'last 15 min'], [3600, 'last hour'], [6 * 3600, 'last 6 h'],
                 [86400, 'last day'], [0, 'everything']];

export function mount(el) {
  const q = hashQuery();
  const winSel = h('select', { 'aria-label': 'window' },
    WINDOWS.map(([s, l]) => h('option', { value: s }, l)));
  winSel.value = q.get('window') || '3600';
  const now = h('div', { id: 'devices-now' });
  const tl = h('div', { id: 'timeline', class: 'timeline' });
  const note = h('span', { class: 'muted' });
  const msg = h('div');
  const expColour = new Map();
  el.append(h('h1', {}, 'Devices'), msg, now,
    h('div', { class: 'card' }, h('div', { class: 'row' }, h('h2', {}, 'Timeline'), winSel, note), tl));
  winSel.addEventListener('change', () => {
    const p = hashQuery(); p.set('window', winSel.value); setHashQuery(p); tick().catch(() => {});
  });
  const colourOf = (e) => {
    if (!expColour.has(e)) expColour.set(e, colour(expColour.size));
    return expColour.get(e);
  };

  function drawNow(devs) {
    fill(now, h('div', { class: 'grid' }, devs.map((d) => {
      const tot = d.mem_total_mib || 1;
      return h('div', { class: 'card device', 'data-uuid': d.uuid },
        h('div', { class: 'row' }, h('h2', {}, `${d.is_gpu ? 'GPU ' + d.index : 'host'} · ${d.name}`),
          h('span', { class: 'muted', title: 'UUID (joins NVIDIA DCGM series)' }, d.uuid)),
        h('div', { class: 'membar', title: `reserved ${fmtMiB(d.mem_reserved_mib)}, measured ${fmtMiB(d.mem_used_mib)} of ${fmtMiB(d.mem_total_mib)}` },
          h('i', { class: 'res', style: { width: Math.min(100, 100 * d.mem_reserved_mib / tot) + '%' } }),
          h('i', { class: 'used', style: { width: Math.min(100, 100 * (d.mem_used_mib || 0) / tot) + '%' } })),
        document.body.dataset.readOnly ? h('p', { class: 'muted' }, `${fmtMiB(d.mem_total_mib)} · read-only view: nothing runs here now`) :
        h('p', { class: 'muted' }, `memory: ${fmtMiB(d.mem_reserved_mib)} reserved, ${fmtMiB(d.mem_used_mib)} measured, ` +
          `of ${fmtMiB(d.mem_total_mib)} · compute reserved ${fmtNum(d.compute_reserved, 3)}${d.is_gpu ? ' %' : ' CPUs'} of ${fmtNum(d.compute_total, 3)}${d.is_gpu ? ' %' : ''}` +
          // a GPU's compute may be reserved past 100 %: its segments take turns
          `${d.is_gpu && d.compute_reserved > d.compute_total ? ' (time-sliced)' : ''} · ` +
          `${d.running} running`),
        d.segments.length ? h('table', {}, h('tbody', {}, d.segments.map((s) => h('tr', {},
          h('td', {}, h('i', { class: 'legend-dot', style: { background: colourOf(s.experiment ?? '?') } }),
            s.experiment ? h('a', { href: `#/experiments/${s.experiment_id}` }, s.experiment) : 'another user'),
          h('td', {}, s.trial_id ? h('a', { href: `#/trials/${s.trial_id}` }, 'trial ' + s.trial_id) : ''),
          h('td', {}, s.owner ?? ''),
          h('td', { class: 'num' }, fmtMiB(s.mem_reserved_mib) + ' res.'),
          h('td', { class: 'num' }, fmtMiB(s.mem_used_mib) + ' used'),
          h('td', { class: 'num' }, s.resource_from === null ? '' : `${fmtNum(s.resource_from)} → ${fmtNum(s.resource_to)}`))))) : null);
    })));
  }

  // Lanes: each segment goes to the first lane free at its start.
  function lanes(segs, end) {
    const free = [];
    let maxAt = 0;
    const sorted = segs.slice().sort((a, b) => a.started_at - b.started_at);
    for (const s of sorted) {
      const e = s.ended_at ?? end;
      let k = free.findIndex((t) => t <= s.started_at);
      if (k < 0) { k = free.length; free.push(e); } else free[k] = e;
      s.lane = k;
    }
    // the most segments that overlapped at one moment
    const ev = [];
    for (const s of sorted) { ev.push([s.started_at, 1]); ev.push([s.ended_at ?? end, -1]); }
    ev.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let c = 0;
    for (const [, d] of ev) { c += d; maxAt = Math.max(maxAt, c); }
    return { n: Math.max(1, free.length), max: maxAt };
  }

  // One SVG per device: the segment lanes on top, the memory chart under
  // them and one time axis at the bottom, all through the same X(t), so a
  // bar's start is the moment the reserved memory steps up (issue 30, item
  // 11: a uPlot chart below the lanes had its own plot width and labels,
  // and the two disagreed).
  function drawTimeline(t) {
    // The window starts at the first segment shown when that is later.
    const first = t.segments.length ? Math.min(...t.segments.map((s) => s.started_at)) : t.from;
    const t0 = Math.max(t.from, first - 0.02 * Math.max(1, t.to - first)), t1 = t.to;
    const W = Math.max(600, tl.clientWidth || 900), L = 150, R = 52, laneH = 18;
    const X = (v) => L + ((v - t0) / Math.max(1e-9, t1 - t0)) * (W - L - R);
    const ticks = timeTicks(t0, t1, X, L, W - R);
    fill(tl, hatchDefs());
    note.textContent = t.truncated ? `${t.segments.length} most recent of ${t.total} segments` :
      t.segments.length ? `${t.segments.length} segments` : 'no segment in this window: choose a longer one';
    for (const d of t.devices) {
      const segs = t.segments.filter((s) => s.device === d.uuid);
      if (!segs.length) {
        tl.append(h('div', { class: 'device-row muted', style: { margin: '4px 0 12px' } },
          h('b', {}, `${d.is_gpu ? 'GPU ' + d.index : 'host'}`), ' · no segment in this window'));
        continue;
      }
      const ln = lanes(segs, t1);
      const lanesH = ln.n * laneH + 4, memTop = Math.max(lanesH, 36) + 12, memH = 110;
      const axisY = memTop + memH, H = axisY + 20;
      const svg = h('svg:svg', { width: W, height: H, 'data-uuid': d.uuid, 'data-segments': segs.length,
        'data-max-concurrent': ln.max, class: 'device-timeline', 'data-t0': t0, 'data-t1': t1,
        'data-left': L, 'data-right': W - R });
      svg.append(h('svg:text', { x: 4, y: 16, 'font-size': 12, fill: '#1d2430', 'font-weight': 600 },
        `${d.is_gpu ? 'GPU ' + d.index : 'host'}`));
      svg.append(h('svg:text', { x: 4, y: 31, 'font-size': 11, fill: '#667085' },
        `up to ${ln.max} at once`));
      // gridlines through lanes and chart: the axis's ticks for both
      for (const k of ticks.list) {
        svg.append(h('svg:line', { class: 'grid', x1: k.x, x2: k.x, y1: 2, y2: axisY, stroke: '#eef1f5' }));
      }
      for (const s of segs) {
        const x0 = X(Math.max(t0, s.started_at)), x1 = X(Math.min(t1, s.ended_at ?? t1));
        const y = 4 + s.lane * laneH, w = Math.max(1.5, x1 - x0);
        const fill = colourOf(s.experiment ?? '?');
        const g = h('svg:g', {});
        const over = s.status === 'over_reservation';
        const bad = s.status === 'oom' || s.status === 'failed' || over;
        const r = h('svg:rect', { class: 'seg' + (over ? ' over' : bad ? ' bad' : ''), x: x0, y, width: w, height: laneH - 4, rx: 2, fill,
          'fill-opacity': s.status === 'running' ? 0.9 : 0.6, 'data-segment': s.segment_id,
          'data-experiment': s.experiment_id ?? '', 'data-start': s.started_at, 'data-end': s.ended_at ?? '',
          'data-status': s.status });
        r.append(h('svg:title', {}, `${s.experiment ?? 'another user'} · trial ${s.trial_id ?? '?'} · segment ${s.segment_id ?? '?'}\n` +
          `${over ? 'over its reservation' : s.status} · ${fmtTime(s.started_at)} for ${fmtDur((s.ended_at ?? Date.now() / 1000) - s.started_at)}\n` +
          `reserved ${fmtMiB(s.mem_reserved_mib)} · peak ${fmtMiB(s.peak_mem_mib)} · util ${s.mean_util === null ? '–' : fmtNum(s.mean_util, 3) + ' %'}`));
        g.append(r);
        if (s.peak_mem_mib > 0 && s.mem_reserved_mib > 0 && w > 4) {
          const f = Math.min(1, s.peak_mem_mib / s.mem_reserved_mib);
          g.append(h('svg:rect', { x: x0, y: y + laneH - 7, width: w * f, height: 3, fill: '#17202e',
            'fill-opacity': 0.55, 'pointer-events': 'none' }));
        }
        if (bad && w > 30) {
          g.append(h('svg:text', { x: x0 + w - 2, y: y + 11, 'font-size': 10, 'text-anchor': 'end',
            fill: over ? '#93370d' : '#b42318', 'pointer-events': 'none' }, s.status === 'oom' ? 'OOM' : over ? 'over' : '✕'));
        }
        svg.append(g);
      }
      svg.append(memoryChart(d, segs, t0, t1, X, L, W - R, memTop, memH));
      // the one time axis, its labels spaced by their width (never touching)
      svg.append(h('svg:line', { x1: L, x2: W - R, y1: axisY, y2: axisY, stroke: '#c9d1dc' }));
      for (const k of ticks.list) {
        svg.append(h('svg:line', { x1: k.x, x2: k.x, y1: axisY, y2: axisY + 4, stroke: '#c9d1dc' }));
        svg.append(h('svg:text', { class: 'tick', x: k.x, y: axisY + 15, 'font-size': 10, fill: '#667085',
          'text-anchor': 'middle', 'data-t': k.t }, k.label));
      }
      svg.append(h('svg:text', { class: 'tick-date', x: L - 8, y: axisY + 15, 'font-size': 10, fill: '#667085',
        'text-anchor': 'end' }, ticks.date));
      tl.append(h('div', { class: 'device-row', style: { marginBottom: '14px' } }, svg));
    }
    const legend = [...expColour.entries()].map(([e, c]) =>
      h('span', { style: { marginRight: '14px' } }, h('i', { class: 'legend-dot', style: { background: c } }), e));
    tl.append(h('div', { class: 'plot-tools' }, legend, h('span', {}, 'dark strip: measured peak / reserved'),
      h('span', {}, h('i', { class: 'legend-dot', style: { background: 'rgba(47,111,223,.35)' } }), 'reserved'),
      h('span', {}, h('i', { class: 'legend-dot', style: { background: '#17202e' } }), 'measured peak'),
      h('span', {}, h('i', { class: 'legend-dot', style: { background: '#17a398' } }), 'utilisation (right, %)'),
      tl.querySelector('.mem-whole') &&
        h('span', {}, h('i', { class: 'legend-dot whole' }), 'whole device reserved: off the memory scale')));
  }

  async function tick() {
    const [devs, ] = await Promise.all([get('devices')]);
    drawNow(devs.devices);
    const w = Number(winSel.value);
    const t = await get('timeline' + (w ? `?span=${w}` : ''));
    drawTimeline(t);
    clear(msg);
  }
  const stop = poll(() => tick().catch((e) => { fill(msg, errorBox(e)); throw e; }), 3000);
  return stop;
}
