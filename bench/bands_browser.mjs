// Allocation-bands benchmark in the browser: each snapshot pickle is
// opened through the real page in headless Chromium, the Memory view's
// bands are built (the whole snapshot) and painted, then the window is
// zoomed in step by step around its middle with the wheel (each step a
// new frame: raster and paint, nothing built). Reported: tracelane's build
// and its frames (raster + paint, the worker's own times), and memory_viz's
// layout of the same allocations in the same Chromium — PyTorch's
// `process_alloc_data` of `torch/utils/viz/MemoryViz.js`, which its Active
// Memory Timeline runs before drawing, for as many allocations drawn alone
// as tracelane drew (its `max_entries`) — after its own `unpickle` and
// `annotate_snapshot`, which are not counted.
//
// memory_viz's file is PyTorch's (BSD-3-Clause) and not in this
// repository: give its path as MEMORYVIZ (without it only tracelane is
// measured). Its d3 drawing is not run (it needs d3 from a CDN): the ratio
// is of the layouts only, memory_viz's SVG of thousands of polygons comes
// on top of it.
//
// Run after `trunk build --release --offline --locked --public-url ./`:
//   MEMORYVIZ=.../MemoryViz.js node bench/bands_browser.mjs FILE.pickle...
//   SIZES="10 100" MEMORYVIZ=... node bench/bands_browser.mjs   # generated with tools/gen_snapshot.py
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import { statSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { root, snapshotFiles, memoryVizFunctions } from './snapshot_files.mjs';

const files = snapshotFiles('10 100');
// process_alloc_data's own helpers come with it (its hover text, unused here).
const memoryViz = memoryVizFunctions(['version_space', 'annotate_snapshot', 'unpickle', 'process_alloc_data']);

const served = mkdtempSync(path.join(os.tmpdir(), 'bands-bench-'));
symlinkSync(path.resolve(process.env.DIST || path.join(root, 'dist')), path.join(served, 'dist'));
mkdirSync(path.join(served, 'files'));
files.forEach((f, k) => symlinkSync(path.resolve(f), path.join(served, 'files', String(k))));
const port = 18800 + Math.floor(Math.random() * 90);
const server = spawn('python3', ['-m', 'http.server', '--bind', '127.0.0.1', String(port)], { cwd: served, stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 800));
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update'] });
const origin = `http://127.0.0.1:${port}`;

/** Waits for the bands frame after `asked` and returns its facts. */
async function frame(page, asked) {
  await page.waitForFunction((n) => {
    const b = document.querySelector('#memory-bands');
    return b && Number(b.dataset.asked) > n && b.dataset.painted === b.dataset.asked;
  }, asked, { timeout: 900000, polling: 50 });
  return page.evaluate(() => ({ ...document.querySelector('#memory-bands').dataset }));
}

async function ours(file) {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  await page.goto(`${origin}/dist/`);
  await page.waitForFunction(() => document.querySelectorAll('.tabs [role=tab]').length === 5 && !document.querySelector('.status.loading'), null, { timeout: 60000 });
  await page.setInputFiles('#file-input', file);
  await page.waitForFunction((n) => document.querySelector('.file-name')?.textContent === n, path.basename(file), { timeout: 900000 });
  await page.click('#show-memory');
  const whole = await frame(page, 0);
  await page.locator('#memory-bands canvas').scrollIntoViewIfNeeded();
const box = await page.locator('#memory-bands canvas').boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + 20);
  const frames = [Number(whole.rasterMs) + Number(whole.paintMs)];
  let last = whole;
  for (let k = 0; k < 12; k++) {
    await page.mouse.wheel(0, -300);
    last = await frame(page, Number(last.asked));
    frames.push(Number(last.rasterMs) + Number(last.paintMs));
  }
  await page.close();
  return { whole, frames, width: Math.round(box.width) };
}

async function theirs(k, maxEntries) {
  const page = await browser.newPage();
  await page.route(`${origin}/bench-blank`, (r) => r.fulfill({ contentType: 'text/html', body: '<!doctype html><title>memory_viz</title>' }));
  await page.goto(`${origin}/bench-blank`);
  const r = await page.evaluate(async ([code, k, maxEntries]) => {
    const f = new Function(`${code}; return { unpickle, annotate_snapshot, process_alloc_data };`)();
    const data = f.unpickle(await (await fetch(`/files/${k}`)).arrayBuffer());
    f.annotate_snapshot(data);
    const t0 = performance.now();
    const laid = f.process_alloc_data(data, 0, false, maxEntries);
    const t1 = performance.now();
    return { layoutMs: t1 - t0, polygons: laid.allocations_over_time.length, points: laid.allocations_over_time.reduce((n, d) => n + d.timesteps.length, 0) };
  }, [memoryViz, k, maxEntries]);
  await page.close();
  return r;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`machine: ${os.cpus().length} cores, ${Math.round(os.totalmem() / 1e9)} GB; ${new Date().toISOString().slice(0, 10)}; Chromium ${browser.version()}`);
console.log(['file', 'MB', 'allocations', 'drawn alone', 'pieces', 'build ms', 'frame ms whole', 'frame ms zoomed (median, max of 12)', 'canvas px', 'memory_viz layout ms', 'its points', 'layout ratio (memory_viz / tracelane build)'].join(' | '));
try {
  for (const [k, file] of files.entries()) {
    const a = await ours(file);
    const b = memoryViz ? await theirs(k, Number(a.whole.bands)) : null;
    const zoomed = a.frames.slice(1);
    console.log([
      path.basename(file), (statSync(file).size / 1e6).toFixed(1), a.whole.allocations, a.whole.bands, a.whole.pieces,
      Number(a.whole.buildMs).toFixed(0), a.frames[0].toFixed(1), `${median(zoomed).toFixed(1)}, ${Math.max(...zoomed).toFixed(1)}`,
      `${a.width} × 320`,
      b ? b.layoutMs.toFixed(0) : '-', b ? b.points : '-', b ? (b.layoutMs / Number(a.whole.buildMs)).toFixed(2) : '-',
    ].join(' | '));
  }
} finally {
  await browser.close();
  server.kill();
}
