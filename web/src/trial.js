// trial.js - one trial: its parameters, learning curve (every metric it
// reports, one chosen at a time), its segments (device, reservation,
// measured peak, outcome; out-of-memory ends and the re-placement that
// followed each) and the tail of its latest segment's log, followed while
// the segment runs.  Live: polled every 2 s.
import { get, h, clear, fill, poll, badge, fmtNum, fmtDur, fmtTime, fmtMiB, errorBox } from './api.js';
import { chart } from './plots.js';

const TAIL = 16384;

export function mount(el, [id]) {
  let trial = null;
  let metrics = [];
  let segs = [];
  let metricName = null;
  let objMetric = null;
  let plot = null;
  let lastKey = '';
  const head = h('div');
  const msg = h('div');
  const paramsEl = h('div');
  const curveEl = h('div', { class: 'plot', id: 'trial-curve' });
  const nameSel = h('select', { 'aria-label': 'metric' });
  const segEl = h('div', { id: 'segments' });
  const logHead = h('div', { class: 'plot-tools' });
  const logEl = h('pre', { class: 'log', id: 'log' }, '…');
  nameSel.addEventListener('change', () => { metricName = nameSel.value; lastKey = ''; drawCurve(); });

  el.append(head, msg,
    h('div', { class: 'grid' },
      h('div', { class: 'card' }, h('h2', {}, 'Parameters'), paramsEl),
      h('div', { class: 'card' }, h('h2', {}, 'Learning curve'),
        h('div', { class: 'plot-tools' }, 'metric ', nameSel), curveEl)),
    h('div', { class: 'card', style: { marginTop: '16px' } }, h('h2', {}, 'Segments'), segEl),
    h('div', { class: 'card' }, h('h2', {}, 'Log'), logHead, logEl));

  function drawHead() {
    const t = trial;
    fill(head, 
      h('div', { class: 'row' }, h('h1', {}, `Trial ${t.id}`), badge(t.status),
        h('span', { class: 'muted' }, 'of ', h('a', { href: `#/experiments/${t.experiment_id}` }, t.experiment),
          ` · index ${t.index} (its place in the order proposed)`)),
      h('div', { class: 'kv' },
        h('div', {}, h('span', {}, 'objective'), h('b', {}, fmtNum(t.objective))),
        h('div', {}, h('span', {}, 'at resource'), h('b', {}, fmtNum(t.objective_resource))),
        h('div', {}, h('span', {}, 'resource done'), h('b', {}, fmtNum(t.resource))),
        h('div', {}, h('span', {}, 'segments'), h('b', {}, String(t.segments))),
        h('div', {}, h('span', {}, 'out of memory'), h('b', {}, String(t.oom))),
        h('div', {}, h('span', {}, 'estimate / peak'), h('b', {}, `${fmtMiB(t.est_mem_mib)} / ${fmtMiB(t.peak_mem_mib)}`)),
        h('div', {}, h('span', {}, 'basis'), h('b', {}, t.basis ?? '–')),
        h('div', {}, h('span', {}, 'updated'), h('b', {}, fmtTime(t.updated_at)))),
      t.error ? h('div', { class: 'error' }, t.error) : null);
    fill(paramsEl, h('table', {}, h('tbody', {},
      Object.entries(t.params || {}).map(([k, v]) => h('tr', {}, h('th', {}, k),
        h('td', { class: 'num' }, typeof v === 'number' ? fmtNum(v, 6) : JSON.stringify(v)))))));
  }

  function drawCurve() {
    const names = [...new Set(metrics.map((m) => m.name))];
    if (names.length !== nameSel.options.length) {
      fill(nameSel, names.map((n) => h('option', { value: n }, n)));
      if (!metricName || !names.includes(metricName))
        metricName = names.includes(objMetric) ? objMetric : names[0];
      nameSel.value = metricName || '';
    }
    const pts = metrics.filter((m) => m.name === metricName).sort((a, b) => a.resource - b.resource);
    const key = metricName + ':' + pts.length;
    if (key === lastKey) return;
    lastKey = key;
    if (plot) plot.destroy();
    plot = chart(curveEl, {
      height: 260,
      scales: { x: { time: false } },
      axes: [{ label: 'resource' }, { label: metricName || '', size: 60 }],
      series: [{ label: 'resource' }, { label: metricName, stroke: '#2f6fdf', width: 2,
                                       points: { show: true, size: 5 } }],
    }, [pts.map((m) => m.resource), pts.map((m) => m.value)]);
  }

  function drawSegments() {
    const rows = segs.map((g, i) => {
      const next = segs[i + 1];
      // out of memory, or stopped by relish over its reservation: both
      // are placed again with more memory
      const mem = g.status === 'oom' || g.status === 'over_reservation';
      const replaced = mem && next
        ? `re-placed: ${fmtMiB(g.mem_reserved_mib)} → ${fmtMiB(next.mem_reserved_mib)} on ${next.device ?? '–'}` : '';
      const dur = g.started_at ? (g.ended_at ?? Date.now() / 1000) - g.started_at : null;
      return h('tr', { class: mem ? g.status : undefined },
        h('td', { class: 'num' }, g.seq), h('td', {}, `${fmtNum(g.resource_from)} → ${fmtNum(g.resource_to)}`),
        h('td', {}, g.status === 'over_reservation'
          ? h('span', { class: 'badge over_reservation', title: 'relish stopped it above the memory it reserved; the device did not run out' }, 'over reservation')
          : badge(g.status)), h('td', { title: g.device ?? '' }, shortDev(g.device)),
        h('td', { class: 'num' }, fmtMiB(g.mem_reserved_mib)), h('td', { class: 'num' }, fmtMiB(g.peak_mem_mib)),
        h('td', { class: 'num' }, g.mean_util === null ? '–' : fmtNum(g.mean_util, 3) + ' %'),
        h('td', { class: 'num' }, g.compute_share === null ? '–' : fmtNum(g.compute_share, 3)),
        h('td', {}, fmtTime(g.started_at)), h('td', { class: 'num' }, fmtDur(dur)),
        h('td', {}, g.exit_code ?? (g.signal ? 'sig ' + g.signal : '–')),
        h('td', { style: { whiteSpace: 'normal' } }, [replaced, replaced && g.message ? ' · ' : '', g.message ?? '']));
    });
    fill(segEl, h('div', { style: { overflowX: 'auto' } }, h('table', {},
      h('thead', {}, h('tr', {}, ['seq', 'range', 'outcome', 'device', 'reserved', 'peak', 'util',
        'share', 'started', 'took', 'exit', 'note'].map((c) => h('th', {}, c)))),
      h('tbody', {}, rows))));
  }

  let logSeg = null, logOffset = 0, logText = '';
  async function loadLog() {
    const g = [...segs].reverse().find((x) => x.log_path || x.started_at);
    if (!g) { logEl.textContent = 'No segment has started yet.'; return; }
    if (g.segment_id !== logSeg) { logSeg = g.segment_id; logOffset = -1; logText = ''; }
    const q = logOffset < 0 ? `tail=${TAIL}` : `offset=${logOffset}`;
    let r;
    try { r = await get(`segments/${g.segment_id}/log?${q}`); } catch (e) {
      logEl.textContent = e.status === 404 ? 'This segment has no log.' : String(e.message);
      return;
    }
    const off = Number(r.headers.get('Relish-Log-Offset') || 0);
    const size = Number(r.headers.get('Relish-Log-Size') || 0);
    const st = r.headers.get('Relish-Segment-Status') || g.status;
    logText = (logOffset < 0 ? '' : logText) + r.text;
    if (logText.length > 4 * TAIL) logText = logText.slice(-2 * TAIL);
    logOffset = off + new TextEncoder().encode(r.text).length;
    const atEnd = logEl.scrollTop + logEl.clientHeight >= logEl.scrollHeight - 8;
    logEl.textContent = logText || '(empty)';
    if (atEnd) logEl.scrollTop = logEl.scrollHeight;
    fill(logHead, `segment ${g.seq} (id ${g.segment_id}) · ${size} bytes · `, badge(st),
      st === 'running' ? ' following' : '');
  }

  async function tick() {
    trial = await get(`trials/${id}`);
    if (objMetric === null) {
      const e = await get(`experiments/${trial.experiment_id}`).catch(() => null);
      objMetric = e?.objective?.metric ?? '';
    }
    const [m, s] = await Promise.all([get(`trials/${id}/metrics`), get(`trials/${id}/segments`)]);
    metrics = m.metrics;
    segs = s.segments;
    drawHead();
    drawCurve();
    drawSegments();
    await loadLog();
  }
  const stop = poll(() => tick().catch((e) => { fill(msg, errorBox(e)); throw e; }), 2000);
  return () => { stop(); if (plot) plot.destroy(); };
}

export function shortDev(d) {
  if (!d) return '–';
  return d.length > 16 ? d.slice(0, 12) + '…' : d;
}
