// The page's "align by structure" on two large traces: both opened through
// the real page in headless Chromium, then aligned in the worker, timed
// from the click to the answer drawn, with the page's main thread watched
// meanwhile — the longest gap between two animation frames, and the long
// tasks (over 50 ms) the browser reports (until each side's roofline
// position, which the page asks for after, is drawn too) — and the progress
// messages the page heard. The native `tracelane diff` on the same two files in the same
// run (both imports included there).
//
// Run after `trunk build --release --offline --locked --public-url ./` and
// `cargo build --release -p tracelane-cli`:
//   node bench/align_browser.mjs               # two synthetic 250 MB traces (seeds 1 and 2; generated if missing)
//   MB=500 node bench/align_browser.mjs
//   node bench/align_browser.mjs A.json B.json
import { chromium } from 'playwright-core';
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, statSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'target/release/tracelane');
const out = path.join(root, 'bench/out');
mkdirSync(out, { recursive: true });

let files = process.argv.slice(2);
if (files.length === 0) {
  const mb = process.env.MB || '250';
  files = [1, 2].map((seed) => {
    const f = path.join(out, `diff_${mb}mb_s${seed}.json`);
    if (!existsSync(f)) execFileSync(cli, ['synth', f, '--mb', mb, '--seed', String(seed)], { stdio: 'inherit' });
    return f;
  });
}
if (files.length !== 2) throw new Error('give two trace files, A and B');

const port = 18900 + Math.floor(Math.random() * 90);
const server = spawn('python3', ['-m', 'http.server', '--bind', '127.0.0.1', String(port)], { cwd: process.env.DIST || path.join(root, 'dist'), stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 800));
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update'] });
console.log(`machine: ${os.cpus().length} cores, ${Math.round(os.totalmem() / 1e9)} GB; ${new Date().toISOString().slice(0, 10)}; ${browser.version()}`);
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.on('pageerror', (e) => console.log('page error:', String(e)));
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.waitForFunction(() => document.querySelectorAll('.tabs [role=tab]').length === 5 && !document.querySelector('.status.loading'), null, { timeout: 60000 });
  // Opened together, the two open in the comparison view, side by side.
  await page.setInputFiles('#file-input', files);
  await page.waitForFunction(() => document.querySelectorAll('.tabs [role=tab]').length === 7 && !document.querySelector('.status.loading')
    && document.querySelectorAll('#compare-cards .card').length === 2, null, { timeout: 1800000, polling: 500 });
  // Watch the main thread from now on.
  await page.evaluate(() => {
    window.__frames = { last: performance.now(), worst: 0, count: 0, long: [] };
    const tick = (t) => {
      const f = window.__frames;
      f.worst = Math.max(f.worst, t - f.last);
      f.last = t;
      f.count += 1;
      if (!f.stop) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
    new PerformanceObserver((l) => l.getEntries().forEach((e) => window.__frames.long.push(e.duration))).observe({ type: 'longtask' });
  });
  const t0 = Date.now();
  await page.click('#compare-align');
  await page.waitForFunction(() => document.querySelector('#align-result') || document.querySelector('#align-error'), null, { timeout: 1800000, polling: 'raf' });
  const pageS = (Date.now() - t0) / 1000;
  // (count, not textContent: that would wait for an error that never comes)
  if (await page.locator('#align-error').count()) throw new Error(await page.locator('#align-error').textContent());
  const heard = await page.locator('#align-result').getAttribute('data-progress-heard');
  const rows = `${await page.locator("#align-tree").getAttribute("data-rows")} (${await page.locator("#align-tree .align-row").count()} in the DOM)`;
  // Then each side on its roofline: asked by the page once the alignment is drawn.
  await page.waitForSelector('#align-roofline', { timeout: 1800000 });
  const rooflineS = (Date.now() - t0) / 1000;
  const placed = await page.locator('#align-roofline').getAttribute('data-placed');
  const f = await page.evaluate(() => { window.__frames.stop = true; return window.__frames; });
  const scopes = await page.locator('#align-summary dd').evaluateAll((els) => els.slice(0, 3).map((e) => e.textContent).join('; '));
  const t1 = Date.now();
  execFileSync(cli, ['diff', ...files, '--format', 'json'], { maxBuffer: 1 << 28 });
  const nativeS = (Date.now() - t1) / 1000;
  const mb = files.map((x) => (statSync(x).size / 1e6).toFixed(0)).join(' + ');
  console.log('files MB | page align s (click → drawn) | click → rooflines drawn s (sides placed?) | progress messages | tree rows drawn | frames | longest frame gap ms | long tasks (ms) | native diff s (imports included)');
  console.log([mb, pageS.toFixed(2), `${rooflineS.toFixed(2)} (${placed === '1' ? 'placed' : 'nothing to place'})`, heard, rows, f.count, f.worst.toFixed(0), f.long.map((x) => x.toFixed(0)).join(' ') || 'none', nativeS.toFixed(2)].join(' | '));
  console.log(`aligned: ${scopes}`);
  await page.close();
} finally {
  await browser.close();
  server.kill();
}
