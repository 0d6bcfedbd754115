// dashboard.mjs - the browser half of tests/test_web.sh: Debian's chromium
// driven by playwright-core against a real `relish serve` that runs real
// experiments on stand-in GPUs.  What a person would check:
//   1. the experiments page lists the experiments, owner and state, one
//      page newest first as the API's;
//   2. the experiment page updates while trials report: more trials with
//      values appear without the page being loaded again;
//   3. the devices timeline shows two segments sharing one GPU (as the
//      API's segment rows say: overlapping in time on one device), its time
//      labels never touch and its bars sit on the memory chart's axis;
//   4. the trial page shows its segments, learning curve and log;
//   5. another user's cancel is refused and says why; the owner's works;
//   6. the experiment page shows as many trials as the API returns (on an
//      experiment that has ended, so both see the same data), the history
//      plot draws 2 series (objective, best so far) with one point per
//      trial with a value, the learning curves one series per curve the
//      API selects, parallel coordinates one line per trial (lr on a log
//      axis, batch as categories: the spec's space), importance
//      one bar per parameter, and the canvases are not blank.
// Screenshots of each page go to $SHOTS.  Exits 1 at the first failure.
// Env: BASE, PLAYWRIGHT (playwright-core's index.mjs), TOKEN_A, TOKEN_B,
// USER_A, USER_B, MAIN, SLOW, OTHER (experiment ids; OTHER is USER_B's), SHOTS.
import { join } from 'node:path';

const env = process.env;
const { chromium } = await import(env.PLAYWRIGHT);
const BASE = env.BASE;
const t00 = Date.now();

function fail(msg) { console.error('FAIL: ' + msg); process.exit(1); }
function ok(msg) { console.log(`ok ${((Date.now() - t00) / 1000).toFixed(1)}s: ${msg}`); }
async function api(path, token, method = 'GET') {
  const r = await fetch(BASE + '/api/v1/' + path, { method, headers: token ? { Authorization: 'Bearer ' + token } : {} });
  const j = await r.json();
  return { status: r.status, j };
}

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
         '--disable-component-update', '--disable-sync', '--no-first-run'],
});
// Each user is a fresh context (its own storage) signed in with its token.
async function pageAs(token) {
  const ctx = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  await ctx.addInitScript((t) => { try { localStorage.setItem('relish.token', t); } catch {} }, token);
  const p = await ctx.newPage();
  p.on('pageerror', (e) => fail('page error: ' + e.message));
  p.on('console', (m) => { if (m.type() === 'error') console.log('console error:', m.text()); });
  return p;
}
const shot = (p, name) => p.screenshot({ path: join(env.SHOTS, name + '.png'), fullPage: true });

try {
  const a = await pageAs(env.TOKEN_A);

  // 1. experiments page
  await a.goto(BASE + '/#/');
  await a.waitForSelector(`tr[data-id="${env.MAIN}"]`, { timeout: 20000 });
  const row = await a.textContent(`tr[data-id="${env.MAIN}"]`);
  if (!row.includes(env.USER_A)) fail('experiments page: the owner is not in the row: ' + row);
  const who = await a.textContent('#who');
  if (!who.includes(env.USER_A)) fail('header does not show the signed-in user: ' + who);
  // progress: trials done of those planned (max_trials), not ended of
  // created (issue 30, item 11: 5 of 7 created read 71 % with 5 of 30 done)
  const mainApi = (await api(`experiments/${env.MAIN}`, env.TOKEN_A)).j;
  const prog = await a.evaluate((id) => {
    const c = document.querySelector(`tr[data-id="${id}"] .progress-cell`);
    return c ? { done: Number(c.dataset.done), planned: Number(c.dataset.planned), text: c.textContent,
      width: parseFloat(c.querySelector('.progress i').style.width) } : null;
  }, env.MAIN);
  const apiDone = mainApi.trials.completed + mainApi.trials.stopped + mainApi.trials.failed;
  if (!prog || prog.planned !== mainApi.planned || mainApi.planned !== 120 || prog.done > apiDone + 5 ||
      prog.done < apiDone - 5 || Math.abs(prog.width - (100 * prog.done) / 120) > 1)
    fail(`progress: ${JSON.stringify(prog)}, the API: planned ${mainApi.planned}, ${apiDone} done of ${mainApi.trials.total} created`);
  ok(`experiments page lists the experiment with its owner; progress ${prog.text} (${prog.width} %: done of planned)`);
  // one page (fewer than 50): newest first, as the API's, nothing older
  const listed = await a.evaluate(() => ({
    ids: [...document.querySelectorAll('.table tbody tr')].map((tr) => Number(tr.dataset.id)),
    older: document.querySelector('#exp-next')?.disabled, newer: document.querySelector('#exp-prev')?.disabled,
    page: document.querySelector('#exp-pager')?.dataset.page }));
  const apiList = (await api('experiments?order=desc&limit=50', env.TOKEN_A)).j;
  if (listed.ids.join() !== apiList.experiments.map((e) => e.id).join() || !listed.older || !listed.newer ||
      listed.page !== '1' || apiList.next_after !== null)
    fail(`experiments page: ${JSON.stringify(listed)}, the API's page: ${apiList.experiments.map((e) => e.id)}`);
  ok(`experiments page: one page of ${listed.ids.length}, newest first, no older or newer page`);

  // 2. live: more trials with values, same page load
  await a.goto(BASE + `/#/experiments/${env.MAIN}`);
  await a.evaluate(() => { window.__sameLoad = true; });
  await a.waitForFunction(() => Number(document.querySelector('#history')?.dataset.points) > 0, null, { timeout: 30000 })
    .catch(() => fail('the experiment page drew no history'));
  const before = await a.evaluate(() => Number(document.querySelector('#history').dataset.points));
  await a.waitForFunction((b) => Number(document.querySelector('#history').dataset.points) > b, before, { timeout: 30000 })
    .catch(() => fail(`the page did not update: still ${before} trials with values`));
  if (!(await a.evaluate(() => window.__sameLoad === true))) fail('the page was loaded again');
  const after = await a.evaluate(() => Number(document.querySelector('#history').dataset.points));
  ok(`the page updated while trials reported (${before} -> ${after} trials with values, no reload)`);

  // 3. devices: two segments sharing one GPU
  const tl = (await api('timeline', env.TOKEN_A)).j;
  const shared = new Set();
  for (const x of tl.segments) for (const y of tl.segments) {
    if (x !== y && x.device === y.device && x.device !== 'host' &&
        x.started_at < (y.ended_at ?? tl.now) && y.started_at < (x.ended_at ?? tl.now)) shared.add(x.device);
  }
  if (!shared.size) fail('the API shows no two segments sharing a GPU: the run did not share');
  await a.goto(BASE + '/#/devices');
  await a.waitForSelector('svg.device-timeline', { timeout: 20000 });
  const rows = await a.evaluate(() => [...document.querySelectorAll('svg.device-timeline')].map((s) => ({
    uuid: s.dataset.uuid, max: Number(s.dataset.maxConcurrent),
    rects: s.querySelectorAll('rect.seg').length,
    overlap: (() => {
      const r = [...s.querySelectorAll('rect.seg')].map((e) => [Number(e.getAttribute('x')), Number(e.getAttribute('x')) + Number(e.getAttribute('width')), Number(e.getAttribute('y'))]);
      return r.some((p) => r.some((q) => q !== p && q[2] !== p[2] && p[0] < q[1] && q[0] < p[1]));
    })(),
  })));
  const sharedRows = rows.filter((r) => shared.has(r.uuid) && r.max >= 2 && r.overlap);
  if (!sharedRows.length) fail('the devices timeline shows no GPU with two segments at once: ' + JSON.stringify(rows));
  // the time labels never touch; each bar sits on the memory chart's axis
  const axis = await a.evaluate(() => [...document.querySelectorAll('svg.device-timeline')].map((svg) => {
    const b = [...svg.querySelectorAll('text.tick, text.tick-date')].map((t) => t.getBoundingClientRect());
    let clash = 0;
    for (let i = 0; i < b.length; i++) for (let j = i + 1; j < b.length; j++)
      if (b[i].left < b[j].right - 0.5 && b[j].left < b[i].right - 0.5) clash++;
    const t0 = Number(svg.dataset.t0), t1 = Number(svg.dataset.t1), L = Number(svg.dataset.left), R = Number(svg.dataset.right);
    let off = 0;
    for (const e of svg.querySelectorAll('rect.seg')) {
      const s = Number(e.dataset.start);
      if (s >= t0) off = Math.max(off, Math.abs(Number(e.getAttribute('x')) - (L + ((s - t0) / (t1 - t0)) * (R - L))));
    }
    return { n: b.length, clash, off, mem: !!svg.querySelector('g.mem path.mem-res') };
  }));
  if (axis.some((x) => x.clash || x.n < 3 || x.off > 0.6 || !x.mem)) fail('devices time axis: ' + JSON.stringify(axis));
  ok(`devices timeline: ${sharedRows.map((r) => `${r.uuid} up to ${r.max} at once (${r.rects} segments)`).join(', ')}`);

  // 4. a trial page: segments and log
  const anyTrial = (await api(`experiments/${env.MAIN}/trials`, env.TOKEN_A)).j.trials.find((t) => t.segments > 0 && t.objective !== null);
  await a.goto(BASE + `/#/trials/${anyTrial.id}`);
  await a.waitForFunction(() => document.querySelector('#log')?.textContent.includes('RELISH epoch='), null, { timeout: 20000 })
    .catch(() => fail('the trial page shows no log lines'));
  const segRows = await a.evaluate(() => document.querySelectorAll('#segments tbody tr').length);
  if (segRows !== anyTrial.segments) fail(`trial page: ${segRows} segment rows, the API ${anyTrial.segments}`);
  const curveSeries = await a.evaluate(() => Number(document.querySelector('#trial-curve')?.dataset.series));
  if (curveSeries !== 1) fail('trial page: no learning curve');
  ok(`trial page: ${segRows} segments, learning curve, log tail`);

  // queue and experiments for the pictures
  await a.goto(BASE + '/#/queue');
  await a.waitForSelector('#shares .pair', { timeout: 20000 });
  ok('queue page: per-user attained time against share');

  // 5. cancel: refused for another user, done for the owner
  const b = await pageAs(env.TOKEN_B);
  await b.goto(BASE + `/#/experiments/${env.SLOW}`);
  await b.click('#cancel', { timeout: 20000 });
  await b.click('#cancel-yes');
  await b.waitForSelector('#cancel-refused', { timeout: 10000 });
  const refusal = await b.textContent('#cancel-refused');
  if (!refusal.includes(`belongs to ${env.USER_A}, not to ${env.USER_B}`)) fail('the refusal says: ' + refusal);
  if ((await api(`experiments/${env.SLOW}`, env.TOKEN_A)).j.status !== 'running') fail('the refused cancel cancelled');
  ok(`${env.USER_B}'s cancel refused: "${refusal.trim()}"`);
  await a.goto(BASE + `/#/experiments/${env.SLOW}`);
  await a.click('#cancel', { timeout: 20000 });
  await a.click('#cancel-yes');
  await a.waitForSelector('#cancel-done', { timeout: 10000 });
  const st = (await api(`experiments/${env.SLOW}`, env.TOKEN_A)).j.status;
  if (st !== 'cancelled') fail('after the owner\'s cancel the experiment is ' + st);
  await a.waitForFunction(() => document.querySelector('.badge')?.textContent === 'cancelled', null, { timeout: 10000 })
    .catch(() => fail('the page does not show the experiment as cancelled'));
  ok(`${env.USER_A}'s cancel worked: the experiment is cancelled`);

  // 6. experiment page against the API (reads: everyone may read all)
  // on the other user's experiment once it has ended, so that the page
  // and the API are compared on the same data
  for (let i = 0; i < 600; i++) {
    if ((await api(`experiments/${env.OTHER}`, env.TOKEN_A)).j.status !== 'running') break;
    await new Promise((r) => setTimeout(r, 500));
  }
  await a.goto(BASE + `/#/experiments/${env.OTHER}`);
  const check = async () => {
    const t = (await api(`experiments/${env.OTHER}/trials`, env.TOKEN_A)).j.trials;
    const withValue = t.filter((x) => x.objective !== null).length;
    const cur = (await api(`experiments/${env.OTHER}/curves?name=accuracy&limit=40`, env.TOKEN_A)).j;
    return { n: t.length, withValue, curves: cur.selected.length };
  };
  // The page and the API agree once the page has drawn what the API has:
  // polled both ways until equal (the run goes on while we look).
  let want, got;
  for (let i = 0; i < 60; i++) {
    want = await check();
    got = await a.evaluate(() => ({
      n: Number(document.querySelector('.table')?.dataset.rows ?? -1),
      withValue: Number(document.querySelector('#history')?.dataset.points ?? -1),
      histSeries: Number(document.querySelector('#history')?.dataset.series ?? -1),
      curves: Number(document.querySelector('#curves')?.dataset.series ?? -1),
      lines: Number(document.querySelector('#parcoords')?.dataset.lines ?? -1),
      params: Number(document.querySelector('#importance')?.dataset.params ?? -1),
      count: document.querySelector('#trial-count')?.textContent,
    }));
    if (got.n === want.n && got.withValue === want.withValue && got.curves === want.curves &&
        got.count === String(want.n) && want.n > 0) break;
    await a.waitForTimeout(500);
  }
  if (got.n !== want.n) fail(`the table has ${got.n} trials, the API ${want.n}`);
  if (String(want.n) !== got.count) fail(`the header says ${got.count} trials, the API ${want.n}`);
  if (got.histSeries !== 2) fail(`history draws ${got.histSeries} series, want 2 (objective, best so far)`);
  if (got.withValue !== want.withValue) fail(`history has ${got.withValue} points, the API ${want.withValue} trials with a value`);
  if (got.curves !== want.curves || got.curves < 2) fail(`learning curves draw ${got.curves} series, the API selects ${want.curves}`);
  if (got.lines !== want.withValue) fail(`parallel coordinates draw ${got.lines} lines, want ${want.withValue}`);
  if (got.params !== 2) fail(`importance shows ${got.params} parameters, want 2`);
  // axes as the spec says: lr is loguniform (log), batch a choice
  const pcAxes = await a.evaluate(() => Object.fromEntries([...document.querySelectorAll('#parcoords g.pc-axis')]
    .map((g) => [g.dataset.name, g.dataset.scale])));
  if (pcAxes.lr !== 'log' || pcAxes.batch !== 'category' || pcAxes.accuracy !== 'linear')
    fail('parallel coordinates axes: ' + JSON.stringify(pcAxes));
  const canvasInk = await a.evaluate(() => [...document.querySelectorAll('#history canvas, #curves canvas')].map((c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
    return n;
  }));
  if (canvasInk.length < 2 || canvasInk.some((n) => n < 500)) fail('a plot canvas is empty: ' + canvasInk);
  ok(`experiment page: ${got.n} trials as the API, history 2 series and ${got.withValue} points, ${got.curves} curves`);


  // Screenshots of every page, once main has SHOT_TRIALS trials with a
  // value (docs/dashboard.md's are taken with more than the test needs).
  const wantShots = Number(env.SHOT_TRIALS || 0);
  for (let i = 0; i < 600; i++) {
    const t = (await api(`experiments/${env.MAIN}/trials`, env.TOKEN_A)).j.trials;
    if (t.filter((x) => x.objective !== null).length >= wantShots) break;
    await a.waitForTimeout(500);
  }
  const pages = [['experiments', '/#/', '.table tbody tr'],
                 ['experiment', `/#/experiments/${env.MAIN}`, '#curves canvas'],
                 ['trial', `/#/trials/${anyTrial.id}`, '#trial-curve canvas'],
                 ['devices', '/#/devices', 'svg.device-timeline'],
                 ['queue', '/#/queue', '#shares .pair']];
  for (const [name, path, sel] of pages) {
    await a.goto(BASE + path);
    await a.waitForSelector(sel, { timeout: 20000 });
    await a.waitForTimeout(1500);
    await shot(a, name);
  }
  ok('screenshots of ' + pages.map((p) => p[0]).join(', '));
} finally {
  await browser.close();
}
console.log(`dashboard.mjs: all checks passed in ${((Date.now() - t00) / 1000).toFixed(1)} s`);
