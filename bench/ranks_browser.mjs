// Many ranks in a browser tab: a generated run of N ranks (`tracelane synth
// --ranks N --mb MB`, written if missing) opened through the real page's
// "Open ranks…" in headless Chromium — the pool of ranks workers imports and
// summarises every rank, one combines them — timed by the page
// (`data-import-ms`: first file handed out → every rank in; then the
// report), with the largest worker's wasm memory and the browser's peak
// resident memory (all its processes, sampled every 100 ms), against the
// baseline measured in the same run: one rank of the same set opened
// alone the same way, and the native `tracelane ranks` on the whole set.
// Then the top collective is clicked: its ranks (up to 8) are imported
// again and stacked in one timeline — timed from the click to the trace
// shown, with the worker's wasm memory, against one rank opened as a
// trace the usual way (Open trace…) in the same run.
//
// Run after `trunk build --release --offline --locked --public-url ./` and
// `cargo build --release -p tracelane-cli`:
//   node bench/ranks_browser.mjs              # 8 32 64 ranks × 50 MB
//   RANKS="8 32" MB=10 node bench/ranks_browser.mjs
import { chromium } from 'playwright-core';
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'target/release/tracelane');
const out = path.join(root, 'bench/out');
mkdirSync(out, { recursive: true });
const mb = process.env.MB || '50';
const sets = (process.env.RANKS || '8 32 64').split(/\s+/).filter(Boolean).map(Number);

const port = 18700 + Math.floor(Math.random() * 90);
const server = spawn('python3', ['-m', 'http.server', '--bind', '127.0.0.1', String(port)], { cwd: path.join(root, 'dist'), stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 800));
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update'] });

/** Resident memory of every Chromium process, MB. */
function browserRssMb() {
  const ps = execFileSync('ps', ['-C', 'chromium,chrome,headless_shell', '-o', 'rss=']).toString();
  return ps.split('\n').filter(Boolean).reduce((a, b) => a + Number(b), 0) / 1024;
}

/** One rank opened as a trace (Open trace…): seconds to its tab, worker wasm MB. */
async function openTrace(file) {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.waitForFunction(() => document.querySelectorAll('.tabs [role=tab]').length === 5 && !document.querySelector('.status.loading'), null, { timeout: 60000 });
  const t0 = Date.now();
  await page.setInputFiles('#file-input', file);
  await page.waitForFunction((n) => document.querySelector('.file-name')?.textContent === n, path.basename(file), { timeout: 1800000 });
  const s = (Date.now() - t0) / 1000;
  const mem = Number(await page.locator('#trace-facts').getAttribute('data-wasm-memory-bytes')) / 1e6;
  await page.close();
  return { s, mem };
}

async function openRun(files, stackTop = false) {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.waitForFunction(() => document.querySelectorAll('.tabs [role=tab]').length === 5 && !document.querySelector('.status.loading'), null, { timeout: 60000 });
  let peak = browserRssMb();
  const timer = setInterval(() => { try { peak = Math.max(peak, browserRssMb()); } catch { /* ps raced a process exit */ } }, 100);
  const t0 = Date.now();
  await page.setInputFiles('#ranks-input', files);
  await page.waitForFunction(() => document.querySelector('#ranks-panel')?.dataset.state === 'ready', null, { timeout: 1800000 });
  const wall = (Date.now() - t0) / 1000;
  clearInterval(timer);
  const d = await page.locator('#ranks-panel').evaluate((e) => ({ ...e.dataset }));
  const stragglers = await page.locator('#stragglers tbody tr').evaluateAll((rs) => rs.map((r) => Number(r.dataset.rank)));
  let stack = null;
  if (stackTop) {
    const row = page.locator('#rank-collectives tbody tr').first();
    const ranks = (await row.getAttribute('data-ranks')).split(',').length;
    const c0 = Date.now();
    await row.click();
    await page.waitForFunction(() => / · ranks /.test(document.querySelector('.file-name')?.textContent ?? '') && document.querySelector('#timeline')?.dataset.view, null, { timeout: 1800000 });
    stack = { ranks, s: (Date.now() - c0) / 1000, mem: Number(await page.locator('#trace-facts').getAttribute('data-wasm-memory-bytes')) / 1e6 };
  }
  await page.close();
  return { wall, importS: Number(d.importMs) / 1000, workerMb: Number(d.workerMemory) / 1e6, peakMb: peak, summarised: Number(d.summarised), stragglers, stack };
}

console.log(`machine: ${os.cpus().length} cores, ${Math.round(os.totalmem() / 1e9)} GB; ${new Date().toISOString().slice(0, 10)}; ${browser.version()}`);
console.log(['ranks', 'JSON MB', 'import s', 'to report s', 'MB/s', 'vs N × 1 rank', 'largest worker wasm MB', 'browser peak RSS MB', 'vs 1 rank', 'native ranks s', 'browser vs native', 'straggler'].join(' | '));
try {
  for (const n of sets) {
    const dir = path.join(out, `ranks_${n}x${mb}`);
    if (!existsSync(path.join(dir, `rank${n - 1}.pt.trace.json`))) execFileSync(cli, ['synth', dir, '--ranks', String(n), '--mb', mb], { stdio: 'inherit' });
    const files = readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => path.join(dir, f));
    const jsonMb = files.reduce((a, f) => a + statSync(f).size, 0) / 1e6;
    const one = await openRun([path.join(dir, 'rank0.pt.trace.json')]);
    const all = await openRun(files, true);
    const single = await openTrace(path.join(dir, 'rank0.pt.trace.json'));
    const t0 = process.hrtime.bigint();
    execFileSync(cli, ['ranks', dir], { stdio: 'ignore' });
    const native = Number(process.hrtime.bigint() - t0) / 1e9;
    const strag = [...new Set(all.stragglers)].join(',');
    console.log([n, jsonMb.toFixed(0), all.importS.toFixed(2), all.wall.toFixed(2), (jsonMb / all.importS).toFixed(0),
      (all.importS / (n * one.importS)).toFixed(2), all.workerMb.toFixed(0), all.peakMb.toFixed(0), (all.peakMb / one.peakMb).toFixed(2),
      native.toFixed(2), (all.importS / native).toFixed(1), strag].join(' | '));
    const st = all.stack;
    console.log(`  top collective clicked: ${st.ranks} ranks stacked in ${st.s.toFixed(2)} s (${(st.s / (st.ranks * single.s)).toFixed(2)} × ${st.ranks} × one rank opened as a trace, ${single.s.toFixed(2)} s); worker wasm ${st.mem.toFixed(0)} MB (one rank: ${single.mem.toFixed(0)} MB)`);
  }
} finally {
  await browser.close();
  server.kill();
}
