// scale.mjs - the dashboard on a 10,000-trial database (tests/test_web_scale.sh,
// bench/bench_web.sh): the experiment page holds every trial but draws one
// page of the table, the learning curves the server selects, and every
// trial in the history and parallel coordinates; the devices timeline
// draws the segments the API returns for its window.  Prints the time to
// a drawn page (LOADS times: the median and every figure), asserts the
// rest.  Also (issue 30, item 11) the parallel coordinates' axes follow the
// spec's space and no two of their labels touch, the devices timeline's
// time labels never touch, its bars and memory chart share one time axis,
// and the host's memory chart is scaled to the small segments, not the
// whole-host probe; and (issue 27, item 1) with EXPS experiments in the
// store the experiments page shows the API's pages of 50, newest first,
// next, previous and filtered.
// Env: BASE, PLAYWRIGHT, EXP, N (trials), LOADS (default 1), EXPS
// (experiments in the store, default 1).
const env = process.env;
const { chromium } = await import(env.PLAYWRIGHT);
const BASE = env.BASE, N = Number(env.N), LOADS = Number(env.LOADS || 1);
const fail = (m) => { console.error('FAIL: ' + m); process.exit(1); };
const api = async (p) => (await fetch(BASE + '/api/v1/' + p)).json();

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
         '--disable-component-update', '--disable-sync', '--no-first-run'] });
try {
  const times = [];
  let page;
  for (let i = 0; i < LOADS; i++) {
    const ctx = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    page = await ctx.newPage();
    page.on('pageerror', (e) => fail('page error: ' + e.message));
    const t0 = Date.now();
    await page.goto(`${BASE}/#/experiments/${env.EXP}`);
    await page.waitForFunction((n) => document.querySelector('.table')?.dataset.rows === String(n) &&
      document.querySelector('#curves')?.dataset.series && document.querySelector('#parcoords')?.dataset.lines,
      N, { timeout: 120000 }).catch(() => fail(`the experiment page did not show ${N} trials within 120 s`));
    times.push(Date.now() - t0);
    if (i < LOADS - 1) await ctx.close();
  }
  const s = await page.evaluate(() => ({
    dom: document.querySelectorAll('.table tbody tr').length,
    pager: document.querySelector('.pager')?.textContent ?? '',
    curves: Number(document.querySelector('#curves').dataset.series),
    hist: Number(document.querySelector('#history').dataset.points),
    lines: Number(document.querySelector('#parcoords').dataset.lines),
    heap: performance.memory ? performance.memory.usedJSHeapSize : 0,
  }));
  const sel = (await api(`experiments/${env.EXP}/curves?name=accuracy&limit=40`)).selected.length;
  if (s.dom !== 50) fail(`the table draws ${s.dom} rows, want one page of 50`);
  if (!s.pager.includes(`page 1 of ${Math.ceil(N / 50)}`)) fail('pager says: ' + s.pager);
  if (s.curves !== sel || sel > 40) fail(`curves: ${s.curves} drawn, the API selects ${sel} (at most 40 + running)`);
  if (s.hist !== N || s.lines !== N) fail(`history ${s.hist} points, parallel coordinates ${s.lines} lines, want ${N}`);
  // ---- the parallel coordinates of the big experiment (issue 30, item 11):
  // axes from the spec's space (log only for log parameters: dropout and
  // the warmup fraction are uniform and linear although their values span
  // decades), and no two labels touching, at two widths
  const exp1 = await api(`experiments/${env.EXP}`);
  if (!exp1.space || !exp1.space.dropout) fail('GET /experiments/ID has no space: ' + JSON.stringify(exp1.space));
  const wantScale = (d) => (!d ? 'linear' : d.type === 'choice' ? 'category'
    : d.type === 'loguniform' || (d.type === 'int' && d.log) ? 'log' : 'linear');
  const pcCheck = async (p, width) => {
    const r = await p.evaluate(() => {
      const svg = document.querySelector('#parcoords svg.pc-axes');
      if (!svg) return null;
      const box = svg.getBoundingClientRect();
      const texts = [...svg.querySelectorAll('text')].map((t) => {
        const b = t.getBoundingClientRect();
        return { s: t.textContent, l: b.left, r: b.right, t: b.top, b: b.bottom };
      });
      const clash = [];
      for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
        const a = texts[i], c = texts[j];
        if (a.l < c.r - 0.5 && c.l < a.r - 0.5 && a.t < c.b - 0.5 && c.t < a.b - 0.5) clash.push([a.s, c.s]);
      }
      const outside = texts.filter((t) => t.l < box.left - 0.5 || t.r > box.right + 0.5).map((t) => t.s);
      return { axes: [...svg.querySelectorAll('g.pc-axis')].map((g) => [g.dataset.name, g.dataset.scale]),
        n: texts.length, clash, outside, width: box.width };
    });
    if (!r) fail('no parallel coordinates axes');
    if (r.clash.length) fail(`parallel coordinates at ${width} px: labels overlap: ${JSON.stringify(r.clash)}`);
    if (r.outside.length) fail(`parallel coordinates at ${width} px: labels outside the plot: ${r.outside}`);
    for (const [name, scale] of r.axes) {
      const want = name === 'accuracy' ? 'linear' : wantScale(exp1.space[name]);
      if (scale !== want) fail(`parallel coordinates: ${name} is drawn ${scale}, its spec says ${want} (${JSON.stringify(exp1.space[name])})`);
    }
    const sc = Object.fromEntries(r.axes);
    if (sc.dropout !== 'linear' || sc.warmup_fraction_of_schedule !== 'linear' || sc.lr !== 'log' ||
        sc.weight_decay !== 'log' || sc.activation !== 'category' || sc.layers !== 'linear')
      fail('parallel coordinates axes: ' + JSON.stringify(sc));
    return r;
  };
  const pc1 = await pcCheck(page, 1400);
  const narrow = await browser.newContext({ viewport: { width: 760, height: 1000 } });
  const np = await narrow.newPage();
  np.on('pageerror', (e) => fail('page error: ' + e.message));
  await np.goto(`${BASE}/#/experiments/${env.EXP}`);
  await np.waitForFunction(() => document.querySelector('#parcoords')?.dataset.lines, null, { timeout: 120000 });
  const pc2 = await pcCheck(np, 760);
  await narrow.close();
  console.log(`parallel coordinates: ${pc1.axes.map(([n, s]) => `${n} ${s}`).join(', ')};` +
    ` ${pc1.n} labels at ${pc1.width.toFixed(0)} px and ${pc2.n} at ${pc2.width.toFixed(0)} px, none touching`);

  // the next page of the table, and a filter, answer at once
  const t1 = Date.now();
  await page.click('.pager button:nth-of-type(3)');
  await page.waitForFunction(() => document.querySelector('.pager').textContent.includes('page 2 of'));
  await page.fill('.table input[type=search]', 'completed');
  await page.waitForFunction(() => document.querySelector('.table').dataset.shown !== document.querySelector('.table').dataset.rows);
  const tableMs = Date.now() - t1;
  const t2 = Date.now();
  await page.goto(`${BASE}/#/devices`);
  await page.waitForSelector('svg.device-timeline', { timeout: 60000 });
  const devMs = Date.now() - t2;
  const tl = await api('timeline?span=3600');
  const rects = await page.evaluate(() => document.querySelectorAll('svg.device-timeline rect.seg').length);
  if (rects !== tl.segments.length) fail(`the timeline draws ${rects} segments, the API gives ${tl.segments.length}`);
  // ---- the devices timeline (issue 30, item 11): time labels never touch
  // (at two widths), the lanes and the memory chart share one time axis
  // (a bar starts where the reserved memory steps up), and the host's
  // chart is scaled to the small segments, not to the probe that reserved
  // the whole host (marked as a band instead)
  const devCheck = async (p, width) => {
    const r = await p.evaluate(() => [...document.querySelectorAll('svg.device-timeline')].map((svg) => {
      const box = svg.getBoundingClientRect();
      const ticks = [...svg.querySelectorAll('text.tick, text.tick-date')].map((t) => {
        const b = t.getBoundingClientRect();
        return { s: t.textContent, l: b.left, r: b.right };
      });
      const clash = [];
      for (let i = 0; i < ticks.length; i++) for (let j = i + 1; j < ticks.length; j++) {
        const a = ticks[i], c = ticks[j];
        if (a.l < c.r - 0.5 && c.l < a.r - 0.5) clash.push(a.s + '|' + c.s);
      }
      const outside = ticks.filter((t) => t.l < box.left - 0.5 || t.r > box.right + 0.5).map((t) => t.s);
      const t0 = Number(svg.dataset.t0), t1 = Number(svg.dataset.t1);
      const L = Number(svg.dataset.left), R = Number(svg.dataset.right);
      const X = (v) => L + ((v - t0) / (t1 - t0)) * (R - L);
      let worst = 0, firstBar = Infinity;
      for (const e of svg.querySelectorAll('rect.seg')) {
        const s = Number(e.dataset.start);
        if (s < t0) continue;
        worst = Math.max(worst, Math.abs(Number(e.getAttribute('x')) - X(s)));
        firstBar = Math.min(firstBar, Number(e.getAttribute('x')));
      }
      // where the reserved memory first rises above the baseline
      const g = svg.querySelector('g.mem');
      const base = Number(g.dataset.top) + Number(g.dataset.height);
      const pts = (svg.querySelector('path.mem-res').getAttribute('d').match(/-?[\d.]+,-?[\d.]+/g) || [])
        .map((q) => q.split(',').map(Number));
      const rise = pts.find((q) => q[1] < base - 0.01);
      const peakTop = Math.min(...(svg.querySelector('path.mem-peak').getAttribute('d').match(/-?[\d.]+,-?[\d.]+/g) || [])
        .map((q) => Number(q.split(',')[1])));
      return { uuid: svg.dataset.uuid, width: box.width, ticks: ticks.map((t) => t.s), clash, outside, worst,
        firstBar, rise: rise ? rise[0] : null, uplot: svg.parentElement.querySelectorAll('.uplot').length,
        scale: Number(g.dataset.scaleMib), resMax: Number(g.dataset.resMax), partMax: Number(g.dataset.partMax),
        peakMax: Number(g.dataset.peakMax), peakFrac: (base - peakTop) / Number(g.dataset.height),
        whole: [...svg.querySelectorAll('.mem-whole')].map((b) => Number(b.dataset.mib)),
        wholeLabel: svg.querySelector('.mem-whole-label')?.textContent ?? '',
        over: [...svg.querySelectorAll('rect.seg[data-status="over_reservation"]')].map((e) => e.getAttribute('class')),
        oom: svg.querySelectorAll('rect.seg[data-status="oom"]').length };
    }));
    if (!r.length) fail('no device timeline');
    for (const d of r) {
      if (d.ticks.length < 4) fail(`${d.uuid} at ${width} px: ${d.ticks.length} time labels: ${d.ticks}`);
      if (d.clash.length) fail(`${d.uuid} at ${width} px: time labels overlap: ${d.clash}`);
      if (d.outside.length) fail(`${d.uuid} at ${width} px: time labels outside: ${d.outside}`);
      if (d.worst > 0.6) fail(`${d.uuid}: a bar is ${d.worst} px off the shared time axis`);
      if (d.rise === null || Math.abs(d.rise - d.firstBar) > 0.6)
        fail(`${d.uuid}: the memory chart rises at x=${d.rise}, the first bar starts at ${d.firstBar}: two time axes`);
      if (d.uplot) fail(`${d.uuid}: a second (uPlot) chart with its own axis`);
    }
    const host = r.find((d) => d.uuid === 'host');
    if (!host) fail('no host timeline: ' + r.map((d) => d.uuid));
    // the segment relish stopped over its reservation is that, not an OOM
    // (issue 30, item 8): its own status and an amber outline
    if (host.over.length !== 1 || host.over[0] !== 'seg over' || host.oom !== 0)
      fail(`host: over-reservation segments ${JSON.stringify(host.over)}, oom ${host.oom}`);
    if (!host.whole.includes(23567) || !host.wholeLabel.includes('whole host'))
      fail(`host: the whole-host reservation is not marked: ${JSON.stringify(host.whole)} "${host.wholeLabel}"`);
    if (host.resMax < 23567 || host.scale >= 23567 / 10 || host.scale < Math.max(host.partMax, host.peakMax) ||
        host.peakFrac < 0.5)
      fail(`host memory scale ${host.scale} MiB (reserved up to ${host.resMax}, others ${host.partMax}, ` +
           `peaks ${host.peakMax}): the small segments' peaks reach ${(100 * host.peakFrac).toFixed(0)} % of the chart`);
    return r;
  };
  const dv1 = await devCheck(page, 1400);
  await page.setViewportSize({ width: 760, height: 1000 });
  await page.waitForFunction(() => Number(document.querySelector('svg.device-timeline')?.getAttribute('width')) < 760,
    null, { timeout: 20000 }).catch(() => fail('the timeline was not drawn again at 760 px'));
  const dv2 = await devCheck(page, 760);
  const h1 = dv1.find((d) => d.uuid === 'host');
  console.log(`devices: ${dv1.length} timelines, time labels ${dv1[0].ticks.join(' ')} at ${dv1[0].width} px,` +
    ` ${dv2[0].ticks.join(' ')} at ${dv2[0].width} px, none touching; bars on the memory chart's axis;` +
    ` host memory scale ${h1.scale} MiB (whole host ${h1.whole[0]} MiB marked, peaks up to ${h1.peakMax} MiB` +
    ` reach ${(100 * h1.peakFrac).toFixed(0)} % of the chart)`);

  // ---- the experiments page: 50 a page from the API's pages, newest
  // first, next and previous, filters (issue 27, item 1)
  const E = Number(env.EXPS || 1);
  if (E > 50) {
    const ctx = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const ep = await ctx.newPage();
    ep.on('pageerror', (e) => fail('page error: ' + e.message));
    const asked = [];
    ep.on('request', (q) => { if (q.url().includes('/api/v1/experiments?')) asked.push(q.url()); });
    const ids = () => ep.evaluate(() => [...document.querySelectorAll('.table tbody tr')].map((tr) => Number(tr.dataset.id)));
    const waitPage = async (n, what) => {
      await ep.waitForFunction((k) => document.querySelector('#exp-pager')?.dataset.page === String(k) &&
        document.querySelectorAll('.table tbody tr').length > 0, n, { timeout: 30000 })
        .catch(() => fail(`experiments page: ${what}: page ${n} not shown`));
      await ep.waitForTimeout(200);
    };
    const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
    const t3 = Date.now();
    await ep.goto(`${BASE}/#/`);
    await waitPage(1, 'first');
    const firstMs = Date.now() - t3;
    const p1 = await ids();
    const a1 = await api('experiments?order=desc&limit=50');
    if (!same(p1, a1.experiments.map((e) => e.id)) || p1.length !== 50 || p1[0] !== E)
      fail(`page 1 shows ${p1.length} rows ${p1.slice(0, 3)}..., the API's newest 50 are ${a1.experiments.slice(0, 3).map((e) => e.id)}...`);
    await ep.click('#exp-next');
    await waitPage(2, 'next');
    const p2 = await ids();
    const a2 = await api(`experiments?order=desc&limit=50&after=${a1.next_after}`);
    if (!same(p2, a2.experiments.map((e) => e.id)) || Math.max(...p2) >= Math.min(...p1))
      fail(`page 2 shows ${p2.slice(0, 3)}..., the API ${a2.experiments.slice(0, 3).map((e) => e.id)}...`);
    await ep.click('#exp-next');
    await waitPage(3, 'next again');
    await ep.click('#exp-prev');
    await waitPage(2, 'previous');
    if (!same(await ids(), p2)) fail('previous from page 3 is not page 2: ' + (await ids()).slice(0, 3));
    await ep.click('#exp-prev');
    await waitPage(1, 'previous again');
    if (!same(await ids(), p1)) fail('previous from page 2 is not page 1');
    if (!(await ep.evaluate(() => document.querySelector('#exp-prev').disabled))) fail('page 1 offers a newer page');
    // a filter: failed ones of bob, more than a page of them
    await ep.selectOption('select[aria-label=state]', 'failed');
    await ep.selectOption('select[aria-label=owner]', 'bob');
    await ep.waitForFunction(() => location.hash.includes('user=bob') && location.hash.includes('status=failed'));
    await ep.waitForFunction(() => [...document.querySelectorAll('.table tbody tr')].length === 50 &&
      [...document.querySelectorAll('.table tbody tr')].every((tr) => tr.textContent.includes('bob') &&
        tr.querySelector('.badge')?.textContent === 'failed'), null, { timeout: 30000 })
      .catch(() => fail('the failed/bob filter does not show a page of bob\'s failed experiments'));
    const f1 = await ids();
    const af = await api('experiments?order=desc&limit=50&status=failed&user=bob');
    if (!same(f1, af.experiments.map((e) => e.id))) fail('filtered page 1 is not the API\'s');
    await ep.click('#exp-next');
    await waitPage(2, 'filtered next');
    const f2 = await ids();
    const af2 = await api(`experiments?order=desc&limit=50&status=failed&user=bob&after=${af.next_after}`);
    if (!same(f2, af2.experiments.map((e) => e.id))) fail('filtered page 2 is not the API\'s');
    // the oldest page, from an address: 39 rows, nothing older; its newer page
    await ep.goto(`${BASE}/#/?after=40&page=200`);
    await ep.waitForFunction(() => document.querySelectorAll('.table tbody tr').length === 39 &&
      document.querySelector('#exp-next')?.disabled, null, { timeout: 30000 })
      .catch(() => fail('the page after=40 does not show the 39 oldest with no older page'));
    const last = await ids();
    if (last[0] !== 39 || last[38] !== 1) fail('the oldest page: ' + last.slice(0, 3));
    await ep.click('#exp-prev');
    await ep.waitForFunction(() => Number(document.querySelector('.table tbody tr')?.dataset.id) === 89, null, { timeout: 30000 })
      .catch(async () => fail('newer than the oldest page: ' + (await ids()).slice(0, 3)));
    const bad = asked.filter((u) => !/[?&]limit=50(&|$)/.test(u));
    if (bad.length) fail('the page asked for experiments without a page size: ' + bad);
    const dom = await ep.evaluate(() => document.querySelectorAll('.table tbody tr').length);
    console.log(`experiments: ${E} in the store; page 1 (ids ${p1[0]}..${p1[49]}) drawn in ${firstMs} ms;` +
      ` next, next, previous, previous; failed+bob pages 1 and 2 as the API; the oldest page 39 rows;` +
      ` ${asked.length} list requests, all limit=50; ${dom} rows in the DOM`);
    await ctx.close();
  }

  const sorted = times.slice().sort((a, b) => a - b);
  console.log(`scale: ${N} trials: experiment page drawn in ${sorted[Math.floor(sorted.length / 2)]} ms` +
    ` (median of ${LOADS}: ${times.join(', ')} ms); table 50 of ${N} rows, next page + filter ${tableMs} ms;` +
    ` ${s.curves} curves; history and parallel coordinates ${N}; JS heap ${(s.heap / 1048576).toFixed(0)} MiB;` +
    ` devices timeline ${rects} segments in ${devMs} ms`);
} finally {
  await browser.close();
}
