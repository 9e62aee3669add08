// Shared by the end-to-end test files (one per view): the static server for
// dist/, Debian's Chromium through playwright-core, and helpers that wait on
// explicit signals from the page — never on wall time.
import { before, after } from 'node:test';
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import zlib from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const dist = path.join(root, 'dist');
export const fixtures = path.join(root, 'tests/fixtures');
export const artifacts = path.join(root, 'target/e2e-artifacts');
export const cli = path.join(root, 'target/release/tracelane');
mkdirSync(artifacts, { recursive: true });

/** The server's base URL and the browser, once `useBrowser()`'s hook ran. */
export const env = { base: '', browser: null, server: null };

/** Starts a static server on `dir` at a free-ish port; resolves when it answers. */
export async function serve(dir, portBase) {
  const port = portBase + Math.floor(Math.random() * 1000);
  const server = spawn('python3', ['-m', 'http.server', '--bind', '127.0.0.1', String(port)], { cwd: dir, stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}/`;
  for (let i = 0; i < 200; i++) {
    try { if ((await fetch(url)).ok) break; } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { server, url };
}

/** Registers the hooks that start the server and the browser for a test file. */
export function useBrowser() {
  before(async () => {
    const { server, url } = await serve(dist, 18000 + Math.floor(Math.random() * 8) * 1000);
    env.server = server;
    env.base = url;
    env.browser = await chromium.launch({
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync'],
    });
  });
  after(async () => {
    await env.browser?.close();
    env.server?.kill();
  });
}

/** A fresh page that records every request and every console error. */
export async function open(url = env.base) {
  const page = await env.browser.newPage({ acceptDownloads: true, viewport: { width: 1400, height: 1000 } });
  page.requests = [];
  page.errors = [];
  page.dialogs = [];
  page.on('request', (r) => page.requests.push(r.url()));
  page.on('pageerror', (e) => page.errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') page.errors.push(m.text()); });
  page.on('dialog', async (d) => { page.dialogs.push(d.message()); await d.dismiss(); });
  await page.goto(url);
  return page;
}

/** Waits until the active tab's file name is `name`; fails on an import error. */
export async function waitForTab(page, name) {
  await page.waitForFunction((name) => {
    const err = document.querySelector('#import-error');
    return document.querySelector('.file-name')?.textContent === name || (err && err.textContent);
  }, name, { timeout: 60000 });
  const err = await page.locator('#import-error').textContent().catch(() => null);
  if (err !== null) throw new Error(`import failed: ${err}`);
}

export async function tabCount(page) {
  return page.locator('.tabs [role=tab]').count();
}

/**
 * Opens a file with the file picker and waits until its tab is active (or its
 * error shows). A trace opens on its summary; `view` then shows another
 * (`'first'`: the engines of a device profile, else the op table, where most
 * tests start; `null`: stay on the summary).
 */
export async function openFile(page, rel, view = 'first') {
  const before = await page.locator('.file-name').textContent().catch(() => null);
  await page.setInputFiles('#file-input', path.isAbsolute(rel) ? rel : path.join(fixtures, rel));
  const name = path.basename(rel);
  await page.waitForFunction(
    ([name, before]) => {
      const err = document.querySelector('#import-error');
      const cur = document.querySelector('.file-name')?.textContent;
      return (cur === name && cur !== before) || (err && err.textContent.includes(name));
    },
    [name, before],
    { timeout: 60000 },
  );
  const opened = await page.evaluate((name) => document.querySelector('.file-name')?.textContent === name, name);
  if (view === null || !opened) return;
  const target = view === 'first' ? ((await page.locator('#show-engines').count()) ? 'engines' : 'table') : view;
  await page.click(`#show-${target}`);
}

/**
 * Waits for the demo: five traces, opened on the comparison of the TorchNeuron
 * article's RMSNorm. Then, unless `onComparison`, shows the first tab (on
 * its summary) and its op table, where most tests start.
 */
export async function waitForDemo(page, onComparison = false) {
  await page.waitForFunction(() => document.querySelectorAll('.tabs [role=tab]').length === 5 && !document.querySelector('.status.loading')
    && document.querySelectorAll('#compare-cards .card').length === 3, null, { timeout: 60000 });
  if (!onComparison) {
    await page.locator('.tabs [role=tab]').first().click();
    await page.click('#show-table');
    await page.waitForSelector('#row-count');
  }
}

/**
 * Shows the Analyses view and waits until every analysis it asked for has
 * its exact answer (the view's `data-answered-exact` counter).
 */
export async function showExactAnalyses(page) {
  await page.click('#show-analyses');
  await page.waitForFunction(() => {
    const a = document.querySelector('#analyses');
    return a && a.dataset.asked !== '0' && a.dataset.answeredExact === a.dataset.asked;
  }, null, { timeout: 60000 });
}

export function cliRows(rel) {
  return JSON.parse(execFileSync(cli, ['ops', path.join(fixtures, rel), '--format', 'json']).toString());
}

export function cliCsv(rel) {
  return execFileSync(cli, ['ops', path.join(fixtures, rel), '--format', 'csv']).toString();
}

export async function exportCsv(page) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
  const file = path.join(artifacts, `export-${process.pid}-${Date.now()}.csv`);
  await download.saveAs(file);
  return readFileSync(file, 'utf8');
}

/** A CSV's data lines, sorted (row order is not what these tests compare). */
export const lines = (text) => text.trim().split('\n').slice(1).sort();

/** Decodes an 8-bit RGB(A) PNG (what Chromium's screenshots are) to {width, height, channels, pixels}. */
export function decodePng(buf) {
  let off = 8;
  let width = 0, height = 0, channels = 4;
  const idat = [];
  while (off < buf.length) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString('ascii', off + 4, off + 8);
    const data = buf.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      channels = data[9] === 6 ? 4 : 3;
    } else if (type === 'IDAT') idat.push(data);
    off += 12 + len;
  }
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    for (let x = 0; x < stride; x++) {
      const v = raw[y * (stride + 1) + 1 + x];
      const a = x >= channels ? pixels[y * stride + x - channels] : 0;
      const b = y > 0 ? pixels[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? pixels[(y - 1) * stride + x - channels] : 0;
      const p = a + b - c;
      const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
      const paeth = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      pixels[y * stride + x] = (v + [0, a, b, (a + b) >> 1, paeth][filter]) & 255;
    }
  }
  return { width, height, channels, pixels };
}

/**
 * Waits until the timeline (`#timeline`, or a split pane's `#timeline-a` /
 * `#timeline-b`) shows the scene the page last asked for: the
 * rectangle canvas's `data-shown` (the last frame the worker painted and
 * saw reach the screen) equals its `data-scene` (the latest one wanted).
 * (`data-painted` alone can run ahead of the screen: the worker's frame
 * goes to the compositor only when its painting task ends.)
 */
export async function waitForPainted(page, timeline = '#timeline') {
  await page.waitForFunction((sel) => {
    const c = document.querySelector(`${sel} canvas.rects`);
    return c && c.dataset.scene && c.dataset.painted === c.dataset.scene && c.dataset.shown === c.dataset.scene;
  }, timeline, { timeout: 20000 });
}

/** RGB of the pixel at (x, y) of a page screenshot (CSS px; device scale 1), once the current scene is painted. */
export async function pixelAt(page, x, y) {
  await waitForPainted(page);
  const png = decodePng(await page.screenshot({ clip: { x: Math.round(x), y: Math.round(y), width: 1, height: 1 } }));
  return [...png.pixels.subarray(0, 3)];
}

/** The timeline's view: start (ns after the trace start), ns per px, width. */
export async function timelineView(page, timeline = '#timeline') {
  const [start, nsPerPx, width] = (await page.locator(timeline).getAttribute('data-view')).split(' ').map(Number);
  return { start, nsPerPx, width };
}

/** Page coordinates of time `relNs` (after the trace start) on display row `row`. */
export async function plotPoint(page, relNs, row) {
  const v = await timelineView(page);
  const box = await page.locator('#timeline canvas.overlay').boundingBox();
  return { x: box.x + (relNs - v.start) / v.nsPerPx, y: box.y + row * 18 + 9 };
}

/**
 * Selects a time range with Shift+drag across the plot, from `from` to `to`
 * (fractions of its width), and waits for the range's op table.
 */
export async function selectRange(page, from, to) {
  const box = await page.locator('#timeline canvas.overlay').boundingBox();
  const v = await timelineView(page);
  await page.keyboard.down('Shift');
  await page.mouse.move(box.x + v.width * from, box.y + 30);
  await page.mouse.down();
  await page.mouse.move(box.x + v.width * (from + to) / 2, box.y + 30, { steps: 4 });
  await page.mouse.move(box.x + v.width * to, box.y + 30, { steps: 4 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  await page.waitForSelector('#range-table .tr', { timeout: 10000 });
}

/** axe-core's serious and critical violations on the page as it is now, each prefixed with `where`. */
export async function axeViolations(page, where) {
  if (!(await page.evaluate(() => typeof window.axe !== 'undefined'))) {
    await page.addScriptTag({ path: path.join(root, 'node_modules/axe-core/axe.min.js') });
  }
  const found = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
  });
  return found.map((f) => `${where}: ${f}`);
}

/** Shows the timeline of the active trace and waits for its first painted frame. */
export async function showTimeline(page) {
  await page.click('#show-timeline');
  await page.waitForSelector('#timeline canvas.overlay');
  await waitForPainted(page);
}

export async function openTimeline(page, rel) {
  await openFile(page, rel);
  await showTimeline(page);
}
