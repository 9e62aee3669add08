// End-to-end tests of the built app (dist/) in Debian's Chromium, driven by
// playwright-core. Run through scripts/test-all.sh (it builds dist/ first),
// or: node --test tests/e2e/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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
  // The page still imports afterwards.
  await openFile(page, 'public/hta_triton_example.json.gz');
  assert.equal(await tabCount(page), tabs + 1);
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

test('timeline: lanes, keyboard zoom and pan, clicking a kernel names its op', async () => {
  const rel = 'public/hta_triton_example.json.gz';
  const page = await open();
  await waitForDemo(page);
  await openFile(page, rel);
  await page.click('#show-timeline');
  await page.waitForSelector('#timeline canvas');
  const labels = await page.locator('.lane-label').allTextContents();
  assert.ok(labels.some((l) => l.includes('stream 7')), labels.join(' | '));
  assert.ok(labels.some((l) => /thread 1670242/.test(l)), labels.join(' | '));
  // Hover over the long ProfilerStep annotation: a tooltip names it.
  const canvasBox = await page.locator('#timeline canvas').boundingBox();
  const stepLane = await page.locator('.lane-label', { hasText: '3100453' }).boundingBox();
  await page.mouse.move(canvasBox.x + 700, stepLane.y + 9);
  await page.waitForSelector('#timeline-tooltip', { timeout: 10000 });
  assert.match(await page.locator('#timeline-tooltip').textContent(), /ProfilerStep#1.*user_annotation.*self/);
  const ticks = await page.locator('#timeline-ruler .tick').allTextContents();
  assert.ok(ticks.length >= 3 && ticks.every((t) => / (ns|µs|ms|s)$/.test(t)), ticks.join(' | '));
  const before = await page.locator('#timeline-range').textContent();
  await page.focus('#timeline');
  await page.keyboard.press('w');
  await page.keyboard.press('d');
  const after = await page.locator('#timeline-range').textContent();
  assert.notEqual(after, before);
  assert.notDeepEqual(await page.locator('#timeline-ruler .tick').allTextContents(), ticks);
  await page.keyboard.press('0');
  assert.equal(await page.locator('#timeline-range').textContent(), before);
  // Click where the kernel is: its start relative to the trace start.
  const info = JSON.parse(execFileSync(cli, ['info', path.join(fixtures, rel), '--format', 'json']).toString());
  const events = JSON.parse(execFileSync('gzip', ['-dc', path.join(fixtures, rel)]).toString()).traceEvents;
  const kernel = events.find((e) => e.cat === 'kernel');
  const base = info.clock_offset_ns;
  const kernelNs = Math.round(kernel.ts * 1000) + 0;
  const x = ((kernelNs - info.first_start_ns) / (info.last_end_ns - info.first_start_ns)) * 1100;
  const deviceTop = await page.locator('.lane-label:not(.device)').evaluateAll((els) => els.reduce((s, e) => s + e.getBoundingClientRect().height, 0));
  const box = await page.locator('#timeline canvas').boundingBox();
  await page.mouse.click(box.x + x, box.y + deviceTop + 9);
  await page.waitForSelector('#timeline-picked h2', { timeout: 10000 });
  assert.equal(await page.locator('#timeline-picked h2').textContent(), 'triton_poi_fused_add_cos_sin_0');
  assert.match(await page.locator('#timeline-picked').textContent(), /Launched by cuLaunchKernel/);
  assert.equal(await page.locator('#timeline-picked .picked-op').textContent(), 'triton_poi_fused_add_cos_sin_0');
  assert.ok(base >= 0);
  await page.screenshot({ path: path.join(artifacts, 'timeline.png'), fullPage: true });
  await page.close();
});
