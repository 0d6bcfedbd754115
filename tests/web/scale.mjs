// scale.mjs - the dashboard on a 10,000-trial database (tests/test_web_scale.sh,
// bench/bench_web.sh): the experiment page holds every trial but draws one
// page of the table, the learning curves the server selects, and every
// trial in the history and parallel coordinates; the devices timeline
// draws the segments the API returns for its window.  Prints the time to
// a drawn page (LOADS times: the median and every figure), asserts the
// rest.  Env: BASE, PLAYWRIGHT, EXP, N (trials), LOADS (default 1).
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
  const sorted = times.slice().sort((a, b) => a - b);
  console.log(`scale: ${N} trials: experiment page drawn in ${sorted[Math.floor(sorted.length / 2)]} ms` +
    ` (median of ${LOADS}: ${times.join(', ')} ms); table 50 of ${N} rows, next page + filter ${tableMs} ms;` +
    ` ${s.curves} curves; history and parallel coordinates ${N}; JS heap ${(s.heap / 1048576).toFixed(0)} MiB;` +
    ` devices timeline ${rects} segments in ${devMs} ms`);
} finally {
  await browser.close();
}
