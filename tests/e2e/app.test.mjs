// End-to-end tests of the built app (dist/) in Debian's Chromium, driven by
// playwright-core. Run through scripts/test-all.sh (it builds dist/ first),
// or: node --test tests/e2e/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import zlib from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dist = path.join(root, 'dist');
const fixtures = path.join(root, 'tests/fixtures');
const artifacts = path.join(root, 'target/e2e-artifacts');
const cli = path.join(root, 'target/release/tracelane');
mkdirSync(artifacts, { recursive: true });

let server, browser, base;

before(async () => {
  const port = 18000 + Math.floor(Math.random() * 2000);
  server = spawn('python3', ['-m', 'http.server', '--bind', '127.0.0.1', String(port)], { cwd: dist, stdio: 'ignore' });
  base = `http://127.0.0.1:${port}/`;
  for (let i = 0; i < 100; i++) {
    try { if ((await fetch(base)).ok) break; } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
});

after(async () => {
  await browser?.close();
  server?.kill();
});

/** A fresh page that records every request and every console error. */
async function open(url = base) {
  const page = await browser.newPage({ acceptDownloads: true, viewport: { width: 1400, height: 1000 } });
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

async function tabCount(page) {
  return page.locator('.tabs [role=tab]').count();
}

/** Opens a file with the file picker and waits until its tab is active. */
async function openFile(page, rel) {
  const before = await page.locator('.file-name').textContent().catch(() => null);
  await page.setInputFiles('#file-input', path.join(fixtures, rel));
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
}

async function waitForDemo(page) {
  await page.waitForFunction(() => document.querySelectorAll('.tabs [role=tab]').length === 4 && !document.querySelector('.status.loading'), null, { timeout: 60000 });
}

function cliRows(rel) {
  return JSON.parse(execFileSync(cli, ['ops', path.join(fixtures, rel), '--format', 'json']).toString());
}

function cliCsv(rel) {
  return execFileSync(cli, ['ops', path.join(fixtures, rel), '--format', 'csv']).toString();
}

async function exportCsv(page) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
  const file = path.join(artifacts, `export-${Date.now()}.csv`);
  await download.saveAs(file);
  return readFileSync(file, 'utf8');
}

const lines = (text) => text.trim().split('\n').slice(1).sort();

test('first load shows the built-in demo with its op table', async () => {
  const page = await open();
  await waitForDemo(page);
  assert.ok(await page.locator('#demo-line').isVisible());
  assert.match(await page.locator('#import-headline').textContent(), /events, .* in \d+\.\d\d s/);
  assert.ok(await page.locator('.tr').count() > 3);
  const measures = await page.evaluate(() => performance.getEntriesByName('tracelane:import').length);
  assert.ok(measures >= 1, 'performance.measure tracelane:import');
  await page.screenshot({ path: path.join(artifacts, 'demo.png'), fullPage: true });
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('each public fixture gives the same table as the CLI', async () => {
  const page = await open();
  await waitForDemo(page);
  for (const rel of ['public/hta_triton_example.json.gz', 'public/hta_simple_add_a100.json.gz', 'public/hta_amd_mi250_rocm.json.gz',
    'public/hta_cpu_only_rank34.json.gz', 'public/hta_compare_pair/base.json.gz', 'public/hta_nccl_2rank_rank0.json.gz',
    'torch-cpu/mlp_train_cpu.pt.trace.json.gz', 'neuron-provisional/torchneuron_rmsnorm.json']) {
    await openFile(page, rel);
    const want = cliRows(rel);
    const shown = await page.locator('#row-count').textContent();
    assert.equal(shown, `${want.length} rows`, rel);
    // The first rows on screen are the CLI's first rows (same default sort).
    const names = await page.locator('.tr .td:first-child').allTextContents();
    assert.deepEqual(names.slice(0, 5), want.slice(0, 5).map((r) => r.name), rel);
    // Exported numbers equal the CLI's, row for row.
    assert.deepEqual(lines(await exportCsv(page)), lines(cliCsv(rel)), rel);
  }
  await page.screenshot({ path: path.join(artifacts, 'nccl-or-last.png'), fullPage: true });
  await page.close();
});

test('a truncated file shows a warning and the rows that were complete', async () => {
  const page = await open();
  await waitForDemo(page);
  await openFile(page, 'edge/truncated.json');
  assert.ok(await page.locator('.badge.warn').isVisible());
  assert.equal(await page.locator('#row-count').textContent(), '2 rows');
  assert.match(await page.locator('#diagnostics').textContent(), /cut off after 2 complete events/);
  await page.screenshot({ path: path.join(artifacts, 'truncated.png'), fullPage: true });
  await page.close();
});

test('a PNG shows an error and the previous trace stays open', async () => {
  const page = await open();
  await waitForDemo(page);
  const tabs = await tabCount(page);
  const shownBefore = await page.locator('.file-name').textContent();
  await page.setInputFiles('#file-input', path.join(fixtures, 'edge/image.png'));
  await page.waitForSelector('#import-error', { timeout: 30000 });
  assert.match(await page.locator('#import-error').textContent(), /image\.png.*not a trace: the file is a PNG image, not JSON/);
  assert.equal(await tabCount(page), tabs);
  assert.equal(await page.locator('.file-name').textContent(), shownBefore);
  assert.ok(await page.locator('.tr').count() > 0);
  await page.screenshot({ path: path.join(artifacts, 'png-error.png'), fullPage: true });
  await page.close();
});

test('names from a trace render as text, never as HTML', async () => {
  const page = await open();
  await waitForDemo(page);
  await openFile(page, 'edge/xss_name.json');
  await page.waitForTimeout(300);
  assert.equal(await page.locator('.tr .td:first-child').first().textContent(), '<img src=x onerror=alert(1)>');
  assert.equal(await page.locator('.tbody img').count(), 0);
  assert.deepEqual(page.dialogs, []);
  await page.close();
});

test('no network request leaves the page other than its own files', async () => {
  const page = await open();
  await waitForDemo(page);
  await openFile(page, 'public/hta_triton_example.json.gz');
  const foreign = page.requests.filter((u) => !u.startsWith(base) && !u.startsWith('data:') && !u.startsWith('blob:'));
  assert.deepEqual(foreign, []);
  await page.close();
});

test('sorting, filtering, grouping and drag-and-drop work', async () => {
  const page = await open();
  await waitForDemo(page);
  // Drop a file the way a user does: a drop event carrying a DataTransfer.
  const bytes = [...readFileSync(path.join(fixtures, 'torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz'))];
  const dt = await page.evaluateHandle((bytes) => {
    const d = new DataTransfer();
    d.items.add(new File([new Uint8Array(bytes)], 'trace-without-extension'));
    return d;
  }, bytes);
  await page.dispatchEvent('.page', 'drop', { dataTransfer: dt });
  await page.waitForFunction(() => document.querySelector('.file-name')?.textContent === 'trace-without-extension', null, { timeout: 30000 });
  // Default sort (CPU total, largest first) puts the annotation first.
  assert.equal(await page.locator('.tr .td:first-child').first().textContent(), 'rmsnorm_naive');
  await page.click('.th[data-col="Calls"]');
  assert.equal(await page.locator('.tr .td:first-child').first().textContent(), 'aten::to');
  await page.click('.th[data-col="Calls"]');
  assert.notEqual(await page.locator('.tr .td:first-child').first().textContent(), 'aten::to');
  await page.fill('#filter', 'aten::m');
  assert.equal(await page.locator('#row-count').textContent(), '2 rows');
  await page.check('#filter-regex');
  await page.fill('#filter', '^aten::(mul|add)$');
  assert.equal(await page.locator('#row-count').textContent(), '2 rows');
  await page.fill('#filter', '');
  await page.selectOption('#group-by', 'shape');
  assert.ok(await page.locator('.th[data-col="Input shapes"]').isVisible());
  await page.locator('.tr').first().click();
  assert.ok(await page.locator('#row-details').isVisible());
  const [md] = await Promise.all([page.waitForEvent('download'), page.click('#export-md')]);
  const mdFile = path.join(artifacts, 'export.md');
  await md.saveAs(mdFile);
  const mdText = readFileSync(mdFile, 'utf8');
  assert.match(mdText, /^\| Name \| Input shapes \| Calls \|/);
  assert.equal(mdText.trim().split('\n').length, 2 + 16);
  await page.screenshot({ path: path.join(artifacts, 'sorted-filtered.png'), fullPage: true });
  await page.close();
});

test('selecting a row shows what it launched and where it sits', async () => {
  const page = await open();
  await waitForDemo(page);
  await openFile(page, 'public/hta_triton_example.json.gz');
  await page.fill('#filter', 'triton_poi');
  await page.locator('.tr').first().click();
  await page.waitForSelector('#row-details-lists', { timeout: 10000 });
  const text = await page.locator('#row-details').textContent();
  assert.match(text, /Device events it launched/);
  assert.match(text, /cuLaunchKernel/);
  assert.match(text, /Torch-Compiled Region: 0\/0/);
  await page.keyboard.press('Tab');
  await page.screenshot({ path: path.join(artifacts, 'details.png'), fullPage: true });
  await page.close();
});

test('?url= loads a trace the browser fetches itself', async () => {
  copyFileSync(path.join(fixtures, 'public/hta_triton_example.json.gz'), path.join(dist, 'e2e-url-trace.json.gz'));
  const page = await open(`${base}?url=e2e-url-trace.json.gz`);
  await page.waitForFunction(() => document.querySelector('.file-name')?.textContent === 'e2e-url-trace.json.gz', null, { timeout: 30000 });
  assert.equal(await page.locator('#demo-line').count(), 0);
  assert.equal(await page.locator('#row-count').textContent(), `${cliRows('public/hta_triton_example.json.gz').length} rows`);
  const foreign = page.requests.filter((u) => !u.startsWith(base));
  assert.deepEqual(foreign, []);
  await page.close();
});

test('10,000+ rows: only the visible ones are in the DOM', async () => {
  const file = path.join(artifacts, 'many_ops.json');
  if (!existsSync(file)) {
    const events = [];
    for (let i = 0; i < 12000; i++) {
      events.push({ ph: 'X', cat: 'cpu_op', name: `op_${i}`, pid: 1, tid: 1, ts: i * 10, dur: 5 + (i % 7), args: { 'External id': i + 1 } });
    }
    writeFileSync(file, JSON.stringify({ traceEvents: events }));
  }
  const page = await open();
  await waitForDemo(page);
  await page.setInputFiles('#file-input', file);
  await page.waitForFunction(() => document.querySelector('.file-name')?.textContent === 'many_ops.json', null, { timeout: 30000 });
  assert.equal(await page.locator('#row-count').textContent(), '12000 rows');
  assert.ok(await page.locator('.tr').count() < 80);
  await page.locator('.tbody').evaluate((el) => { el.scrollTop = 28 * 9000; });
  await page.waitForTimeout(200);
  const names = await page.locator('.tr .td:first-child').allTextContents();
  assert.ok(names.length < 80 && names.length > 10, String(names.length));
  await page.close();
});

test('Cancel stops an import and keeps the open trace', async () => {
  const big = path.join(artifacts, 'big_synth.json');
  if (!existsSync(big)) execFileSync(cli, ['synth', big, '--mb', '300']);
  const page = await open();
  await waitForDemo(page);
  const tabs = await tabCount(page);
  await page.setInputFiles('#file-input', big);
  await page.waitForSelector('.status.loading button', { timeout: 10000 });
  await page.click('.status.loading button');
  await page.waitForFunction(() => !document.querySelector('.status.loading'), null, { timeout: 10000 });
  assert.equal(await tabCount(page), tabs);
  assert.ok(await page.locator('.tr').count() > 0);
  // The open trace still has its model in the worker: row details work.
  await page.locator('.tr').first().click();
  await page.waitForSelector('#row-details-lists', { timeout: 10000 });
  // The page still imports afterwards.
  await openFile(page, 'public/hta_triton_example.json.gz');
  assert.equal(await tabCount(page), tabs + 1);
  await page.close();
});

test('a large trace parsed by two workers gives the CLI\'s table', async () => {
  // Above 16 MB the page hands the second half to the helper worker, which
  // sends its part to the primary to be merged; the table must be the
  // sequential import's (the CLI's).
  const big = path.join(artifacts, 'split_synth.json');
  if (!existsSync(big)) execFileSync(cli, ['synth', big, '--mb', '40', '--seed', '5']);
  const page = await open();
  await waitForDemo(page);
  await page.setInputFiles('#file-input', big);
  await page.waitForFunction(() => document.querySelector('.file-name')?.textContent === 'split_synth.json', null, { timeout: 120000 });
  assert.equal(await page.locator('#trace-facts').getAttribute('data-workers'), '2');
  assert.match(await page.locator('#import-headline').textContent(), /two workers/);
  const want = execFileSync(cli, ['ops', big, '--format', 'csv']).toString();
  assert.deepEqual(lines(await exportCsv(page)), lines(want));
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('large files opened together are each parsed by two workers', async () => {
  // The helper is replaced after its part only once no file waits, so the
  // second file of a batch still has one.
  const files = [6, 7].map((seed) => {
    const f = path.join(artifacts, `batch_synth_${seed}.json`);
    if (!existsSync(f)) execFileSync(cli, ['synth', f, '--mb', '24', '--seed', String(seed)]);
    return f;
  });
  const page = await open();
  await waitForDemo(page);
  const tabs = await tabCount(page);
  await page.setInputFiles('#file-input', files);
  await page.waitForFunction((n) => document.querySelectorAll('.tabs [role=tab]').length === n + 2 && !document.querySelector('.status.loading'), tabs, { timeout: 120000 });
  for (const k of [tabs, tabs + 1]) {
    await page.locator('.tabs [role=tab]').nth(k).click();
    await page.waitForSelector('#trace-facts');
    assert.equal(await page.locator('#trace-facts').getAttribute('data-workers'), '2', await page.locator('.file-name').textContent());
  }
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the release build works from a sub-path (GitHub Pages project sites)', async () => {
  const port = 20500 + Math.floor(Math.random() * 1000);
  const repoServer = spawn('python3', ['-m', 'http.server', '--bind', '127.0.0.1', String(port)], { cwd: root, stdio: 'ignore' });
  try {
    const sub = `http://127.0.0.1:${port}/dist/`;
    for (let i = 0; i < 100; i++) {
      try { if ((await fetch(sub)).ok) break; } catch { /* not up yet */ }
      await new Promise((r) => setTimeout(r, 100));
    }
    const page = await open(sub);
    await waitForDemo(page);
    assert.ok(await page.locator('.tr').count() > 3);
    assert.deepEqual(page.requests.filter((u) => !u.startsWith(sub)), []);
    await page.close();
  } finally {
    repoServer.kill();
  }
});

/** Decodes an 8-bit RGB(A) PNG (what Chromium's screenshots are) to {width, height, channels, pixels}. */
function decodePng(buf) {
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

/** RGB of the pixel at (x, y) of a page screenshot (CSS px; device scale 1). */
async function pixelAt(page, x, y) {
  const png = decodePng(await page.screenshot({ clip: { x: Math.round(x), y: Math.round(y), width: 1, height: 1 } }));
  return [...png.pixels.subarray(0, 3)];
}

/** The timeline's view: start (ns after the trace start), ns per px, width. */
async function timelineView(page) {
  const [start, nsPerPx, width] = (await page.locator('#timeline').getAttribute('data-view')).split(' ').map(Number);
  return { start, nsPerPx, width };
}

/** Page coordinates of time `relNs` (after the trace start) on display row `row`. */
async function plotPoint(page, relNs, row) {
  const v = await timelineView(page);
  const box = await page.locator('#timeline canvas.overlay').boundingBox();
  return { x: box.x + (relNs - v.start) / v.nsPerPx, y: box.y + row * 18 + 9 };
}

async function openTimeline(page, rel) {
  await openFile(page, rel);
  await page.click('#show-timeline');
  await page.waitForSelector('#timeline canvas.overlay');
  // The first frame is painted once the worker's draw list arrived.
  await page.waitForFunction(() => performance.getEntriesByName('tracelane:frame').length > 0, null, { timeout: 20000 });
}

test('timeline: lanes, ruler, keys, paint, click a kernel → its launch and op, the chain links', async () => {
  const rel = 'public/hta_triton_example.json.gz';
  const page = await open();
  await waitForDemo(page);
  await openTimeline(page, rel);
  // Headless Chromium's GL is software (SwiftShader): the app picks Canvas2D there.
  assert.equal(await page.locator('#timeline canvas.rects').getAttribute('data-renderer'), 'canvas2d');
  const labels = await page.locator('.lane-label').allTextContents();
  assert.ok(labels.some((l) => l.includes('stream 7')), labels.join(' | '));
  assert.ok(labels.some((l) => /thread 1670242/.test(l)), labels.join(' | '));
  const groups = await page.locator('button.lane-group').allTextContents();
  assert.ok(groups.length >= 2 && groups.some((g) => /device/.test(g)), groups.join(' | '));
  // Hover over the long ProfilerStep annotation: a tooltip names it.
  const stepRow = Number(await page.locator('.lane-label', { hasText: '3100453' }).getAttribute('data-row'));
  const info = JSON.parse(execFileSync(cli, ['info', path.join(fixtures, rel), '--format', 'json']).toString());
  const span = info.last_end_ns - info.first_start_ns;
  let pt = await plotPoint(page, span * 0.6, stepRow);
  await page.mouse.move(pt.x, pt.y);
  await page.waitForSelector('#timeline-tooltip', { timeout: 10000 });
  assert.match(await page.locator('#timeline-tooltip').textContent(), /ProfilerStep#1.*user_annotation.*self/);
  // The slice is painted: the annotation colour (#9c755f) under the pointer's row.
  const colour = await pixelAt(page, pt.x + 40, pt.y);
  assert.ok(Math.abs(colour[0] - 0x9c) < 24 && Math.abs(colour[1] - 0x75) < 24 && Math.abs(colour[2] - 0x5f) < 24, `${colour}`);
  const ticks = await page.locator('#timeline-ruler .tick').allTextContents();
  assert.ok(ticks.length >= 3 && ticks.every((t) => / (ns|µs|ms|s)$/.test(t)), ticks.join(' | '));
  const before = await page.locator('#timeline-range').textContent();
  await page.focus('#timeline');
  await page.keyboard.press('w');
  await page.keyboard.press('d');
  assert.notEqual(await page.locator('#timeline-range').textContent(), before);
  assert.notDeepEqual(await page.locator('#timeline-ruler .tick').allTextContents(), ticks);
  await page.keyboard.press('0');
  assert.equal(await page.locator('#timeline-range').textContent(), before);
  // Click the kernel: where it starts, on the stream's row.
  const events = JSON.parse(execFileSync('gzip', ['-dc', path.join(fixtures, rel)]).toString()).traceEvents;
  const kernel = events.find((e) => e.cat === 'kernel');
  const kernelRel = Math.round(kernel.ts * 1000) - info.first_start_ns;
  const streamRow = Number(await page.locator('.lane-label', { hasText: 'stream 7' }).getAttribute('data-row'));
  pt = await plotPoint(page, kernelRel, streamRow);
  await page.mouse.click(pt.x + 1, pt.y);
  await page.waitForSelector('#timeline-picked h2', { timeout: 10000 });
  assert.equal(await page.locator('#timeline-picked h2').textContent(), 'triton_poi_fused_add_cos_sin_0');
  assert.match(await page.locator('#timeline-picked').textContent(), /Launched by cuLaunchKernel/);
  assert.equal(await page.locator('#timeline-picked .picked-op').textContent(), 'triton_poi_fused_add_cos_sin_0');
  // Its dependency chain: op → launch → kernel, with the launch delay.
  const chain = await page.locator('#timeline-chain li').allTextContents();
  assert.equal(chain.length, 3, chain.join(' | '));
  assert.match(chain[0], /^op/);
  assert.match(chain[1], /^runtime\s*cuLaunchKernel/);
  assert.match(chain[2], /^device.*launch delay .* \(queued /);
  assert.match(await page.locator('#timeline-picked').textContent(), /grid|stream/);
  await page.screenshot({ path: path.join(artifacts, 'timeline.png'), fullPage: true });
  // A chain link selects the launch and brings it into view.
  await page.click('#timeline-chain a:text("cuLaunchKernel")');
  await page.waitForFunction(() => document.querySelector('#timeline-picked h2')?.textContent === 'cuLaunchKernel', null, { timeout: 10000 });
  // F fits the selected slice: the visible span shrinks to about it.
  await page.focus('#timeline');
  await page.keyboard.press('f');
  assert.ok((await timelineView(page)).nsPerPx * (await timelineView(page)).width < span / 10);
  await page.keyboard.press('0');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('plain JSON: the details show args read back from the file (kernel and op)', async () => {
  // The worker keeps no args text for a plain-JSON file: it reads an event's
  // args from the file when the event is selected.
  const plain = path.join(artifacts, 'hta_triton_example.json');
  writeFileSync(plain, zlib.gunzipSync(readFileSync(path.join(fixtures, 'public/hta_triton_example.json.gz'))));
  const page = await open();
  await waitForDemo(page);
  await page.setInputFiles('#file-input', plain);
  await page.waitForFunction(() => document.querySelector('.file-name')?.textContent === 'hta_triton_example.json', null, { timeout: 60000 });
  await page.click('#show-timeline');
  await page.waitForFunction(() => performance.getEntriesByName('tracelane:frame').length > 0, null, { timeout: 20000 });
  const info = JSON.parse(execFileSync(cli, ['info', plain, '--format', 'json']).toString());
  const events = JSON.parse(readFileSync(plain, 'utf8')).traceEvents;
  const kernel = events.find((e) => e.cat === 'kernel');
  const streamRow = Number(await page.locator('.lane-label', { hasText: 'stream 7' }).getAttribute('data-row'));
  const pt = await plotPoint(page, Math.round(kernel.ts * 1000) - info.first_start_ns, streamRow);
  await page.mouse.click(pt.x + 1, pt.y);
  await page.waitForSelector('#timeline-picked h2', { timeout: 10000 });
  assert.equal(await page.locator('#timeline-picked h2').textContent(), 'triton_poi_fused_add_cos_sin_0');
  const details = await page.locator('#timeline-picked').textContent();
  assert.match(details, /registers per thread/);
  assert.match(details, /warps per SM/);
  // Its op's args come from the file too: all of them, not only the parsed ones.
  await page.click('#timeline-chain a:text("triton_poi_fused_add_cos_sin_0") >> nth=0');
  await page.waitForFunction(() => /Record function id/.test(document.querySelector('#timeline-picked')?.textContent ?? ''), null, { timeout: 10000 });
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('timeline (WebGL2 forced): search steps through matches; Shift+drag selects a range with its op table; groups collapse', async () => {
  const rel = 'public/hta_triton_example.json.gz';
  const page = await open(`${base}?renderer=webgl2`);
  await waitForDemo(page);
  await openTimeline(page, rel);
  await page.waitForFunction(() => document.querySelector('#timeline canvas.rects')?.getAttribute('data-renderer') === 'webgl2', null, { timeout: 10000 });
  {
    // WebGL2 paints too: the ProfilerStep annotation's colour on its row.
    const stepRow = Number(await page.locator('.lane-label', { hasText: '3100453' }).getAttribute('data-row'));
    const info = JSON.parse(execFileSync(cli, ['info', path.join(fixtures, rel), '--format', 'json']).toString());
    const pt = await plotPoint(page, (info.last_end_ns - info.first_start_ns) * 0.6, stepRow);
    const colour = await pixelAt(page, pt.x, pt.y);
    assert.ok(Math.abs(colour[0] - 0x9c) < 24 && Math.abs(colour[1] - 0x75) < 24 && Math.abs(colour[2] - 0x5f) < 24, `${colour}`);
  }
  const events = JSON.parse(execFileSync('gzip', ['-dc', path.join(fixtures, rel)]).toString()).traceEvents;
  const matches = events.filter((e) => e.ph === 'X' && /triton_poi/i.test(e.name)).length;
  await page.fill('#timeline-search', 'TRITON_POI');
  await page.press('#timeline-search', 'Enter');
  await page.waitForFunction((n) => document.querySelector('#search-count')?.textContent === `1 / ${n}`, matches, { timeout: 10000 });
  await page.press('#timeline-search', 'Enter');
  await page.waitForFunction((n) => document.querySelector('#search-count')?.textContent === `2 / ${n}`, matches, { timeout: 10000 });
  await page.press('#timeline-search', 'Shift+Enter');
  await page.press('#timeline-search', 'Shift+Enter');
  await page.waitForFunction((n) => document.querySelector('#search-count')?.textContent === `${n} / ${n}`, matches, { timeout: 10000 });
  assert.match(await page.locator('#timeline-picked h2').textContent(), /triton_poi/);
  await page.fill('#timeline-search', '');
  await page.keyboard.press('Escape');
  // Shift+drag across nearly the whole plot (this trace's events sit early on).
  await page.focus('#timeline');
  await page.keyboard.press('0');
  const box = await page.locator('#timeline canvas.overlay').boundingBox();
  const v = await timelineView(page);
  await page.keyboard.down('Shift');
  await page.mouse.move(box.x + v.width * 0.01, box.y + 30);
  await page.mouse.down();
  await page.mouse.move(box.x + v.width * 0.5, box.y + 30, { steps: 4 });
  await page.mouse.move(box.x + v.width * 0.97, box.y + 30, { steps: 4 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  await page.waitForSelector('#range-table .tr', { timeout: 10000 });
  const length = await page.locator('#ruler-selection').textContent();
  assert.match(length, / (ns|µs|ms|s)$/);
  assert.match(await page.locator('#range-table h2').textContent(), /Op table of/);
  const rangeRows = await page.locator('#range-table .tr').allTextContents();
  assert.ok(rangeRows.some((r) => r.includes('cuLaunchKernel')), rangeRows.join(' | '));
  await page.screenshot({ path: path.join(artifacts, 'timeline-range.png'), fullPage: true });
  // F fits the range.
  await page.focus('#timeline');
  await page.keyboard.press('f');
  const fitted = await timelineView(page);
  assert.ok(Math.abs(fitted.nsPerPx - v.nsPerPx * 0.96) / v.nsPerPx < 0.02, `${fitted.nsPerPx} vs ${v.nsPerPx * 0.96}`);
  // Collapse the device group: its stream lanes go; expand: they come back.
  const device = page.locator('button.lane-group', { hasText: 'device' }).first();
  await device.click();
  assert.equal(await page.locator('.lane-label', { hasText: 'stream 7' }).count(), 0);
  assert.equal(await device.getAttribute('aria-expanded'), 'false');
  await device.click();
  assert.equal(await page.locator('.lane-label', { hasText: 'stream 7' }).count(), 1);
  // Colour by name repaints without errors.
  await page.check('#colour-by-name');
  await page.waitForTimeout(200);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('timeline: an op-table row highlights its occurrences; counters and instants get lanes', async () => {
  const page = await open();
  await waitForDemo(page);
  await openFile(page, 'public/hta_triton_example.json.gz');
  await page.locator('.tr', { hasText: 'cuLaunchKernel' }).first().click();
  await page.click('#show-timeline');
  await page.waitForSelector('#timeline canvas.overlay');
  await page.waitForFunction(() => /highlighting “cuLaunchKernel”/.test(document.querySelector('#search-count')?.textContent ?? ''), null, { timeout: 10000 });
  await page.click('#clear-highlight');
  assert.equal(await page.locator('#search-count').textContent(), '');
  // A trace with counters and [memory] instants.
  await openTimeline(page, 'edge/counters.json');
  const counters = await page.locator('.lane-label.counter').allTextContents();
  assert.deepEqual(counters.sort(), ['bandwidth (peak 3.5)', 'memory.allocated (peak 10)', 'memory.reserved (peak 20)'].sort());
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('compare: dropping the three RMSNorm traces opens them side by side, numbers equal to `tracelane compare`', async () => {
  const page = await open();
  await waitForDemo(page);
  const files = ['naive', 'fused', 'compiled'].map((v) => path.join(fixtures, `torch-cpu/rmsnorm_${v}_cpu.pt.trace.json.gz`));
  // Opened together, they open in the comparison view (on these three, not the demo's copies).
  await page.setInputFiles('#file-input', files);
  await page.waitForFunction(() => document.querySelectorAll('.tabs [role=tab]').length === 7, null, { timeout: 30000 });
  await page.waitForFunction(() => document.querySelectorAll('#compare-cards .card').length === 3, null, { timeout: 20000 });
  const cli = JSON.parse(execFileSync(path.join(root, 'target/release/tracelane'), ['compare', ...files,
    '--region', 'rmsnorm_naive', '--region', 'rmsnorm_fused', '--region', 'rmsnorm_compiled', '--format', 'json']).toString()).variants;
  const cards = await page.locator('#compare-cards .card').evaluateAll((els) => els.map((e) => ({ ...e.dataset, text: e.textContent })));
  assert.equal(cards.length, 3);
  for (const [k, card] of cards.entries()) {
    const v = cli[k];
    assert.equal(Number(card.occurrences), v.occurrences);
    assert.equal(Number(card.cpuOps), v.cpu_ops);
    assert.equal(Number(card.deviceEvents), v.device_events);
    assert.ok(Math.abs(Number(card.cpuSelfNs) / 1000 - v.cpu_self_us) < 0.001, `${card.cpuSelfNs} vs ${v.cpu_self_us}`);
    assert.ok(Math.abs(Number(card.wallMedianNs) / 1000 - v.wall_us) < 0.001);
    assert.match(card.text, /no device events in this trace \(a CPU-only capture\)/);
  }
  assert.match(cards[0].text, /^baseline/);
  assert.match(cards[1].text, /6 CPU ops → 1/);
  // The op-to-kernel map: the eager ops in order; the compiled region with its graph call.
  const naiveOps = await page.locator('.map-column').nth(0).locator('.map-op-name').allTextContents();
  assert.deepEqual(naiveOps, ['aten::pow', 'aten::mean', 'aten::add', 'aten::rsqrt', 'aten::mul', 'aten::mul']);
  const compiled = await page.locator('.map-column').nth(2).textContent();
  assert.match(compiled, /Torch-Compiled Region: 0\/0/);
  assert.match(compiled, /Call CompiledFxGraph/);
  // The chart has a bar per variant per metric; the diff lists removed eager ops.
  assert.equal(await page.locator('#compare-chart rect.bar').count(), 6);
  const diff = await page.locator('#compare-diff tbody tr').allTextContents();
  assert.ok(diff.some((r) => /^opaten::addremoved/.test(r)), diff.join(' | '));
  assert.ok(diff.some((r) => /aten::rms_norm.*added/.test(r)), diff.join(' | '));
  // Making the fused variant the baseline reorders and recomputes.
  await page.locator('.spec-row').nth(1).locator('.make-baseline').click();
  await page.waitForFunction(() => document.querySelector('#compare-cards .card.baseline')?.dataset.label.includes('fused'), null, { timeout: 10000 });
  await page.screenshot({ path: path.join(artifacts, 'compare.png'), fullPage: true });
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('compare: regions inside one trace (TorchNeuron): 2,355 / 403.3 / 375.5 µs of device time', async () => {
  const page = await open();
  await waitForDemo(page);
  await openFile(page, 'neuron-provisional/torchneuron_rmsnorm.json');
  await page.click('#open-compare');
  await page.waitForSelector('.spec-row');
  // Start from two variants of the same trace: naive and compiled.
  while (await page.locator('.spec-row').count() > 0) await page.locator('.remove-variant').first().click();
  for (const region of ['rmsnorm_naive', 'rmsnorm_fused', 'rmsnorm_compiled']) {
    await page.click('#add-variant');
    const row = page.locator('.spec-row').last();
    await row.locator('.spec-trace').selectOption({ label: 'torchneuron_rmsnorm.json' });
    await row.locator('.spec-region').selectOption(`name:${region}`);
  }
  await page.waitForFunction(() => document.querySelectorAll('#compare-cards .card').length === 3, null, { timeout: 20000 });
  const cards = await page.locator('#compare-cards .card').evaluateAll((els) => els.map((e) => ({ ...e.dataset, text: e.textContent })));
  // The seed article's table: 2,355 / 403.3 / 375.5 µs of device time.
  assert.deepEqual(cards.map((c) => Number(c.deviceNs)), [2355000, 403300, 375500]);
  assert.match(cards[1].text, /device time 2,355 µs → 403 µs \(5\.8× less\); 6 device events → 1; 6 CPU ops → 1/);
  assert.match(cards[2].text, /device time 2,355 µs → 376 µs \(6\.3× less\); 6 device events → 1; 6 CPU ops → 1/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a Neuron Explorer system_profile.json opens: table with device time, framework/runtime/hardware lanes, its warning', async () => {
  const rel = 'neuron-provisional/system_profile.json';
  const page = await open();
  await waitForDemo(page);
  await openFile(page, rel);
  assert.match(await page.locator('#trace-facts').textContent(), /24 slices/);
  // The same table as the CLI.
  const cli = cliRows(rel);
  const hw = cli.find((r) => r.name === 'nc_exec_running');
  assert.equal(hw.device_total_us, 2355);
  const tableText = await page.locator('.table').textContent();
  assert.match(tableText, /nc_exec_running/);
  assert.match(tableText, /aten::mul \[trace\.json\]/);
  assert.match(await page.locator('.diagnostics').textContent(), /example warning: 12 events dropped on NC 1/);
  await page.click('#show-timeline');
  await page.waitForFunction(() => performance.getEntriesByName('tracelane:frame').length > 0, null, { timeout: 20000 });
  const groups = await page.locator('button.lane-group').allTextContents();
  for (const part of ['/framework', '/neuron_rt', '/neuron_hw', '/system']) {
    assert.ok(groups.some((g) => g.includes(part)), groups.join(' | '));
  }
  const lanes = await page.locator('.lane-label').allTextContents();
  assert.ok(lanes.includes('NC0:0') && lanes.includes('NC:1') && lanes.includes('TID:0'), lanes.join(' | '));
  assert.ok(lanes.some((l) => l.startsWith('host memory.usage (peak')), lanes.join(' | '));
  // Click the first hardware execution: its chain reaches the framework op through the runtime.
  const row = Number(await page.locator('.lane-label', { hasText: 'NC0:0' }).getAttribute('data-row'));
  const v = await timelineView(page);
  const box = await page.locator('#timeline canvas.overlay').boundingBox();
  // nc_exec_running #1 starts 40 µs after the trace start and lasts 620 µs.
  await page.mouse.click(box.x + (40000 + 300000 - v.start) / v.nsPerPx, box.y + row * 18 + 9);
  await page.waitForSelector('#timeline-chain li', { timeout: 10000 });
  const chain = await page.locator('#timeline-chain li').allTextContents();
  assert.match(chain[0], /^op\s*aten::mul \[trace\.json\]/);
  assert.match(chain[1], /^runtime\s*nrt_execute/);
  assert.match(chain[2], /^device\s*nc_exec_running/);
  assert.match(await page.locator('#timeline-picked .args').textContent(), /model_name/);
  await page.screenshot({ path: path.join(artifacts, 'neuron-system-profile.png'), fullPage: true });
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a Perfetto .pftrace opens: slices, counters and flows on their tracks', async () => {
  const rel = 'perfetto/neuron_like_system.pftrace';
  const page = await open();
  await waitForDemo(page);
  await openFile(page, rel);
  const facts = await page.locator('#trace-facts').textContent();
  assert.match(facts, /156 slices/);
  const tableText = await page.locator('.table').textContent();
  assert.match(tableText, /aten::rms_norm/);
  assert.match(await page.locator('.diagnostics').textContent(), /Perfetto protobuf trace/);
  await page.click('#show-timeline');
  await page.waitForFunction(() => performance.getEntriesByName('tracelane:frame').length > 0, null, { timeout: 20000 });
  const lanes = await page.locator('.lane-label').allTextContents();
  for (const lane of ['neuron_rt/NC:0', 'neuron_hw/NC1:2', 'framework/TID:0']) {
    assert.ok(lanes.some((l) => l.includes(lane)), lanes.join(' | '));
  }
  assert.ok(lanes.some((l) => /HBM usage \(peak/.test(l)), lanes.join(' | '));
  // The runtime lane holds three nesting levels (nrt_execute ⊃ kmgr ⊃ kbl) plus its instants row.
  const rt = page.locator('.lane-label', { hasText: 'neuron_rt/NC:0' });
  assert.equal(Math.round((await rt.boundingBox()).height), 4 * 18);
  // Its flows chain framework → runtime → hardware: click the first hardware execution
  // (34 µs after the trace start, 40 µs long).
  const row = Number(await page.locator('.lane-label', { hasText: 'neuron_hw/NC0:0' }).getAttribute('data-row'));
  const v = await timelineView(page);
  const box = await page.locator('#timeline canvas.overlay').boundingBox();
  await page.mouse.click(box.x + (54000 - v.start) / v.nsPerPx, box.y + row * 18 + 9);
  await page.waitForSelector('#timeline-chain li', { timeout: 10000 });
  const chain = await page.locator('#timeline-chain li a').allTextContents();
  assert.deepEqual(chain, ['aten::linear', 'nrt_execute', 'nc_exec_running /models/linear.neff']);
  await page.screenshot({ path: path.join(artifacts, 'perfetto.png'), fullPage: true });
  assert.deepEqual(page.errors, []);
  await page.close();
});
