// Allocator-snapshot benchmark in the browser: each snapshot pickle is
// opened through the real page in headless Chromium (file picker → the
// import worker sees a snapshot and hands the file over → the decoder
// worker reads it and decodes the pickle into columns, a read at a time,
// and hands them over → the allocator replayed, the report, the summary),
// and the same bytes are decoded in the same Chromium by PyTorch's own
// memory_viz parser (`unpickle` and `annotate_snapshot` of
// `torch/utils/viz/MemoryViz.js` — what its page runs on a dropped file,
// before it draws anything). Reported: decoding MB/s of each, their
// ratio, tracelane's whole open (file picked → tab shown), each worker's
// wasm memory, and the peak resident memory of the tab's renderer process
// (each open in a browser of its own). DIST=dir measures another build
// (e.g. an older commit's dist/) the same way.
//
// memory_viz's file is PyTorch's (BSD-3-Clause) and not in this
// repository: give its path (a PyTorch source checkout's
// torch/utils/viz/MemoryViz.js) as MEMORYVIZ; its three functions are
// taken out by name (its d3 imports are not loaded). memory_viz reads
// protocols 2-4 only, so the generated snapshots are protocol 4.
//
// Run after `trunk build --release --offline --locked --public-url ./`:
//   MEMORYVIZ=.../MemoryViz.js node bench/snapshot_browser.mjs            # 100 MB (generated if missing)
//   SIZES="10 100 400" MEMORYVIZ=... node bench/snapshot_browser.mjs
//   MEMORYVIZ=... node bench/snapshot_browser.mjs FILE.pickle...
//   ROUNDS=3 ...                                                           # rounds per file (default 3)
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import { statSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { root, snapshotFiles, memoryVizFunctions } from './snapshot_files.mjs';

const rounds = Number(process.env.ROUNDS ?? 3);
const files = snapshotFiles('100');
const memoryViz = memoryVizFunctions(['version_space', 'annotate_snapshot', 'unpickle']);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// One origin serves the app (/dist/) and the files (/files/k): memory_viz
// fetches the bytes as its page does from a URL.
const served = mkdtempSync(path.join(os.tmpdir(), 'snapshot-bench-'));
symlinkSync(path.resolve(process.env.DIST || path.join(root, 'dist')), path.join(served, 'dist'));
mkdirSync(path.join(served, 'files'));
files.forEach((f, k) => symlinkSync(path.resolve(f), path.join(served, 'files', String(k))));
const port = 18900 + Math.floor(Math.random() * 90);
const server = spawn('python3', ['-m', 'http.server', '--bind', '127.0.0.1', String(port)], { cwd: served, stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 800));
const launchOptions = { executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', ...(process.env.CHROMIUM_ARGS ?? '').split(' ').filter(Boolean)] };
const browser = await chromium.launch(launchOptions);
const origin = `http://127.0.0.1:${port}`;

/** Chromium's renderer processes now (pid → their peak resident memory, VmHWM). */
function renderers() {
  const peaks = new Map();
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmd.includes('--type=renderer')) continue;
      const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (hwm) peaks.set(pid, Number(hwm[1]) * 1024);
    } catch { /* the process ended meanwhile */ }
  }
  return peaks;
}

/** tracelane: the file picked on the page, in a browser of its own (so the
 *  tab's renderer process — page and workers — holds this open alone); the
 *  decoder's time, the whole open, the workers' wasm memory and the
 *  renderer's peak resident memory. */
async function ours(file) {
  const before = new Set(renderers().keys());
  const own = await chromium.launch(launchOptions);
  const page = await own.newPage();
  await page.goto(`${origin}/dist/`);
  await page.waitForFunction(() => document.querySelectorAll('.tabs [role=tab]').length === 5 && !document.querySelector('.status.loading'), null, { timeout: 60000 });
  await page.waitForTimeout(1000);
  await page.evaluate(() => performance.clearMeasures());
  await page.setInputFiles('#file-input', file);
  const name = path.basename(file);
  const outcome = await page.waitForFunction((n) => {
    const err = document.querySelector('#import-error');
    if (document.querySelector('.file-name')?.textContent === n) return 'ok';
    return err && err.textContent.includes(n) ? err.textContent : false;
  }, name, { timeout: 900000, polling: 100 }).then((h) => h.jsonValue());
  if (outcome !== 'ok') throw new Error(`${name}: ${outcome}`);
  const facts = page.locator('#trace-facts');
  const decodeS = Number(await facts.getAttribute('data-decode-ms')) / 1000;
  const waitS = Number(await facts.getAttribute('data-decode-read-wait-ms') ?? 0) / 1000;
  const wasmMb = Number(await facts.getAttribute('data-wasm-memory-bytes')) / 1e6;
  const decoderMb = Number(await facts.getAttribute('data-decoder-wasm-memory-bytes')) / 1e6;
  const rendererMb = Math.max(0, ...[...renderers()].filter(([pid]) => !before.has(pid)).map(([, b]) => b)) / 1e6;
  const importS = await page.evaluate(() => {
    const e = performance.getEntriesByName('tracelane:import');
    return e.length ? e[e.length - 1].duration / 1000 : NaN;
  });
  await own.close();
  return { decodeS, waitS, importS, wasmMb, decoderMb, rendererMb };
}

/** memory_viz's parser on the same bytes, in a blank page of the same origin. */
async function theirs(k) {
  const page = await browser.newPage();
  await page.route(`${origin}/bench-blank`, (r) => r.fulfill({ contentType: 'text/html', body: '<!doctype html><title>memory_viz</title>' }));
  await page.goto(`${origin}/bench-blank`);
  const r = await page.evaluate(async ([code, k]) => {
    try {
    const { unpickle, annotate_snapshot } = new Function(`${code}; return { unpickle, annotate_snapshot };`)();
    const buffer = await (await fetch(`/files/${k}`)).arrayBuffer();
    const t0 = performance.now();
    const data = unpickle(buffer);
    const t1 = performance.now();
    annotate_snapshot(data);
    const t2 = performance.now();
    return { unpickleS: (t1 - t0) / 1000, annotateS: (t2 - t1) / 1000, bytes: buffer.byteLength, entries: data.device_traces.reduce((n, d) => n + d.length, 0) };
    } catch (e) {
      return { failed: String(e) };
    }
  }, [memoryViz, k]).catch((e) => ({ failed: String(e).split('\n')[0] }));
  await page.close();
  return r;
}

console.log(`machine: ${os.cpus().length} cores, ${Math.round(os.totalmem() / 1e9)} GB; ${new Date().toISOString().slice(0, 10)}; Chromium ${browser.version()}; median of ${rounds} rounds`);
console.log(['file', 'MB', 'tracelane decoder s (reading the file and decoding)', 'MB/s', 'of which waiting for reads s', 'decoding MB/s', 'open s', 'import worker wasm MB', 'decoder wasm MB', 'renderer peak RSS MB', 'memory_viz unpickle s', 'MB/s', '+ annotate s', 'decode ratio (ours / theirs MB/s)'].join(' | '));
try {
  for (const [k, file] of files.entries()) {
    const mb = statSync(file).size / 1e6;
    const a = [];
    const b = [];
    for (let round = 0; round < rounds; round++) {
      a.push(await ours(file));
      if (memoryViz) b.push(await theirs(k));
    }
    const decodeS = median(a.map((x) => x.decodeS));
    const waitS = median(a.map((x) => x.waitS));
    const row = [path.basename(file), mb.toFixed(1), decodeS.toFixed(3), (mb / decodeS).toFixed(0),
      waitS.toFixed(3), (mb / (decodeS - waitS)).toFixed(0),
      median(a.map((x) => x.importS)).toFixed(3), median(a.map((x) => x.wasmMb)).toFixed(0),
      median(a.map((x) => x.decoderMb)).toFixed(0), median(a.map((x) => x.rendererMb)).toFixed(0)];
    const failed = b.find((x) => x.failed);
    if (failed) {
      row.push(`failed: ${failed.failed.slice(0, 80)}`, '—', '—', '—');
    } else if (memoryViz) {
      const u = median(b.map((x) => x.unpickleS));
      row.push(u.toFixed(3), (mb / u).toFixed(0), median(b.map((x) => x.annotateS)).toFixed(3), (u / decodeS).toFixed(2));
    } else {
      row.push('—', '—', '—', 'MEMORYVIZ not given');
    }
    console.log(row.join(' | '));
  }
} finally {
  await browser.close();
  server.kill();
}
