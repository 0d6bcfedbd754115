// front.mjs - the browser half of tests/test_web_front.sh: the experiment
// page of an experiment with two objectives and a constraint draws a
// scatter with the front highlighted, the same trials on it as the API's
// front, the infeasible ones apart; one with three objectives draws
// parallel coordinates, one line per trial with values; one with a single
// objective shows no front card.  Exits 1 at the first failure.
// Env: BASE, PLAYWRIGHT, TOKEN, TWO, THREE, ONE (experiment ids), SHOTS.
import { join } from 'node:path';

const env = process.env;
const { chromium } = await import(env.PLAYWRIGHT);
function fail(msg) { console.error('FAIL: ' + msg); process.exit(1); }
function ok(msg) { console.log('ok: ' + msg); }
async function api(path) {
  const r = await fetch(env.BASE + '/api/v1/' + path, { headers: { Authorization: 'Bearer ' + env.TOKEN } });
  return r.json();
}

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
         '--disable-component-update', '--disable-sync', '--no-first-run'],
});
try {
  const ctx = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  await ctx.addInitScript((t) => { try { localStorage.setItem('relish.token', t); } catch {} }, env.TOKEN);
  const p = await ctx.newPage();
  p.on('pageerror', (e) => fail('page error: ' + e.message));

  // two objectives and a constraint: the scatter
  const f2 = await api(`experiments/${env.TWO}/front`);
  const withValues = f2.trials.length;
  const infeasible = f2.trials.filter((t) => !t.feasible).length;
  if (!f2.front.length || !infeasible) fail(`the fixture has no teeth: front ${f2.front.length}, infeasible ${infeasible}`);
  await p.goto(env.BASE + `/#/experiments/${env.TWO}`);
  await p.waitForFunction(() => document.querySelector('#front')?.dataset.points !== undefined, null, { timeout: 30000 })
    .catch(() => fail('no front plot on a two-objective experiment'));
  const d2 = await p.evaluate(() => ({ ...document.querySelector('#front').dataset,
    hidden: document.querySelector('#front-card').hidden,
    note: document.querySelector('#front-note').textContent }));
  if (d2.hidden) fail('the front card is hidden');
  if (d2.objectives !== '2') fail(`objectives ${d2.objectives}, expected 2`);
  if (Number(d2.points) !== withValues) fail(`the scatter drew ${d2.points} trials, the API has ${withValues}`);
  if (Number(d2.front) !== f2.front.length) fail(`the scatter highlights ${d2.front} on the front, the API ${f2.front.length}`);
  if (Number(d2.infeasible) !== infeasible) fail(`${d2.infeasible} drawn infeasible, the API says ${infeasible}`);
  if (Number(d2.series) !== 3) fail(`the scatter has ${d2.series} series, expected 3 (trials, infeasible, front)`);
  if (!d2.note.includes(`${f2.front.length} of ${withValues}`)) fail('the note does not say the front: ' + d2.note);
  // the canvas is not blank
  const ink = await p.evaluate(() => {
    const c = document.querySelector('#front canvas');
    const g = c.getContext('2d');
    const px = g.getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 3; i < px.length; i += 4) if (px[i] > 0) n++;
    return n;
  });
  if (ink < 500) fail(`the front scatter is blank (${ink} pixels drawn)`);
  await p.screenshot({ path: join(env.SHOTS, 'front2.png'), fullPage: true });
  ok(`two objectives: ${d2.points} trials, ${d2.front} on the front, ${d2.infeasible} infeasible, as the API`);

  // three objectives: parallel coordinates
  const f3 = await api(`experiments/${env.THREE}/front`);
  await p.goto(env.BASE + `/#/experiments/${env.THREE}`);
  await p.waitForFunction(() => document.querySelector('#front')?.dataset.lines !== undefined, null, { timeout: 30000 })
    .catch(() => fail('no parallel coordinates on a three-objective experiment'));
  const d3 = await p.evaluate(() => ({ ...document.querySelector('#front').dataset }));
  if (d3.objectives !== '3') fail(`objectives ${d3.objectives}, expected 3`);
  if (Number(d3.lines) !== f3.trials.length) fail(`${d3.lines} lines, the API has ${f3.trials.length} trials`);
  if (Number(d3.front) !== f3.front.length) fail(`${d3.front} lines on the front, the API ${f3.front.length}`);
  await p.screenshot({ path: join(env.SHOTS, 'front3.png'), fullPage: true });
  ok(`three objectives: ${d3.lines} lines, ${d3.front} on the front`);

  // one objective: no front card
  await p.goto(env.BASE + `/#/experiments/${env.ONE}`);
  await p.waitForFunction(() => Number(document.querySelector('#history')?.dataset.points) > 0, null, { timeout: 30000 })
    .catch(() => fail('the one-objective page drew nothing'));
  await p.waitForTimeout(2500); // one more poll: the card would have appeared
  if (!(await p.evaluate(() => document.querySelector('#front-card').hidden))) fail('a one-objective experiment shows a front card');
  ok('one objective: no front card');
} finally {
  await browser.close();
}
