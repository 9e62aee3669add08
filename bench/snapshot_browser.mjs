// Allocator-snapshot benchmark in the browser: each snapshot pickle is
// opened through the real page in headless Chromium (file picker → the
// import worker reads it → the decoder worker decodes the pickle into
// columns and hands them over → the allocator replayed, the report, the
// summary), and the same bytes are decoded in the same Chromium by
// PyTorch's own memory_viz parser (`unpickle` and `annotate_snapshot` of
// `torch/utils/viz/MemoryViz.js` — what its page runs on a dropped file,
// before it draws anything). Reported: decoding MB/s of each, their
// ratio, and tracelane's whole open (file picked → tab shown).
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
import { statSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
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
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', ...(process.env.CHROMIUM_ARGS ?? '').split(' ').filter(Boolean)] });
const origin = `http://127.0.0.1:${port}`;

/** tracelane: the file picked on the page; the decoder's time and the whole open. */
async function ours(file) {
  const page = await browser.newPage();
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
  const wasmMb = Number(await facts.getAttribute('data-wasm-memory-bytes')) / 1e6;
  const importS = await page.evaluate(() => {
    const e = performance.getEntriesByName('tracelane:import');
    return e.length ? e[e.length - 1].duration / 1000 : NaN;
  });
  await page.close();
  return { decodeS, importS, wasmMb };
}

/** memory_viz's parser on the same bytes, in a blank page of the same origin. */
async function theirs(k) {
  const page = await browser.newPage();
  await page.route(`${origin}/bench-blank`, (r) => r.fulfill({ contentType: 'text/html', body: '<!doctype html><title>memory_viz</title>' }));
  await page.goto(`${origin}/bench-blank`);
  const r = await page.evaluate(async ([code, k]) => {
    const { unpickle, annotate_snapshot } = new Function(`${code}; return { unpickle, annotate_snapshot };`)();
    const buffer = await (await fetch(`/files/${k}`)).arrayBuffer();
    const t0 = performance.now();
    const data = unpickle(buffer);
    const t1 = performance.now();
    annotate_snapshot(data);
    const t2 = performance.now();
    return { unpickleS: (t1 - t0) / 1000, annotateS: (t2 - t1) / 1000, bytes: buffer.byteLength, entries: data.device_traces.reduce((n, d) => n + d.length, 0) };
  }, [memoryViz, k]);
  await page.close();
  return r;
}

console.log(`machine: ${os.cpus().length} cores, ${Math.round(os.totalmem() / 1e9)} GB; ${new Date().toISOString().slice(0, 10)}; Chromium ${browser.version()}; median of ${rounds} rounds`);
console.log(['file', 'MB', 'tracelane decode s', 'MB/s', 'open s', 'wasm MB', 'memory_viz unpickle s', 'MB/s', '+ annotate s', 'decode ratio (ours / theirs MB/s)'].join(' | '));
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
    const row = [path.basename(file), mb.toFixed(1), decodeS.toFixed(3), (mb / decodeS).toFixed(0),
      median(a.map((x) => x.importS)).toFixed(3), median(a.map((x) => x.wasmMb)).toFixed(0)];
    if (memoryViz) {
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
