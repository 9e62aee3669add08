// End-to-end: the Memory view against `tracelane memory --format json` for
// the same files — the peak and what holds it, a picked moment, PyTorch's
// categories from a raw memory timeline opened with the trace — and its
// curves as timeline lanes.
// Run through scripts/test-all.sh (it builds dist/ first), or: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import {
  artifacts, cli, fixtures, open, openFile, root, useBrowser, waitForDemo, waitForPainted, waitForTab,
} from './helpers.mjs';

useBrowser();

const memory = (files, ...args) => JSON.parse(execFileSync(cli, ['memory', ...files.map((f) => path.join(fixtures, f)), '--format', 'json', ...args]).toString());

/** Waits until the Memory view has answered its latest question. */
async function waitForMemory(page) {
  await page.waitForFunction(() => {
    const m = document.querySelector('#memory');
    return m && m.dataset.asked !== '0' && m.dataset.answered === m.dataset.asked && document.querySelector('#memory-devices');
  }, null, { timeout: 30000 });
}

/** Per device as shown: its name, peak, bytes at the moment, and live rows (`peak` or `at`). */
async function shownDevices(page, which) {
  return page.evaluate((which) => [...document.querySelectorAll('#memory-devices tbody tr')].map((tr, k) => ({
    device: tr.dataset.device,
    peak: Number(tr.dataset.peakBytes),
    at: tr.dataset.atBytes === '' ? null : Number(tr.dataset.atBytes),
    live: [...document.querySelectorAll(`#memory-live-${which}-${k} tbody tr`)].map((r) => [r.dataset.op, Number(r.dataset.bytes)]),
  })), which);
}

/** *Show the peak* of the k-th device opens the timeline, where CUDA:0's curves are lanes. */
async function showPeakOnTimeline(page, k) {
  await page.waitForSelector('#memory[data-counter-lanes="true"]', { timeout: 30000 });
  await page.click(`#memory-show-peak-${k}`);
  await page.waitForSelector('#timeline canvas.overlay');
  await waitForPainted(page);
  const lanes = await page.locator('.lane-label').allTextContents();
  for (const lane of ['memory allocated · CUDA:0', 'memory reserved · CUDA:0']) {
    assert.ok(lanes.some((l) => l.includes(lane)), lanes.join(' | '));
  }
}

const liveRows = (groups) => groups.slice(0, 50).map((g) => [g.op, g.bytes]);

test('memory: the peak, what holds it and a picked moment equal the CLI\'s; the curves are timeline lanes', async () => {
  const rel = 'torch-memory/mem_train_cuda.pt.trace.json.gz';
  const want = memory([rel]);
  const page = await open();
  await waitForDemo(page);
  // A trace without memory records has no Memory view.
  assert.equal(await page.locator('#show-memory').count(), 0);
  await openFile(page, rel, 'memory');
  await waitForMemory(page);
  // A CUDA trace has no Neuron HBM: no table, no heading for one.
  assert.equal(await page.locator('#memory [id^="memory-hbm-"]').count(), 0);
  assert.doesNotMatch(await page.locator('#memory').textContent(), /Neuron HBM/);
  const shown = await shownDevices(page, 'peak');
  assert.deepEqual(shown.map((d) => [d.device, d.peak, d.at]), want.devices.map((d) => [d.device, d.peak_allocated_bytes, null]));
  for (const [k, d] of shown.entries()) {
    assert.deepEqual(d.live, liveRows(want.devices[k].live_at_peak), d.device);
  }
  // A moment: what is live then, as `--at` lists it.
  const atUs = (want.devices[1].peak_at_us / 2).toFixed(3);
  const wantAt = memory([rel], '--at', atUs);
  await page.fill('#memory-at', atUs);
  await page.click('#memory-at-go');
  await page.waitForFunction(() => [...document.querySelectorAll('#memory-devices tbody tr')].every((tr) => tr.dataset.atBytes !== ''), null, { timeout: 30000 });
  await waitForMemory(page);
  const at = await shownDevices(page, 'at');
  assert.deepEqual(at.map((d) => [d.device, d.at]), wantAt.devices.map((d) => [d.device, d.allocated_at_bytes]));
  for (const [k, d] of at.entries()) {
    assert.deepEqual(d.live, liveRows(wantAt.devices[k].live_at), d.device);
  }
  await page.screenshot({ path: path.join(artifacts, 'memory.png'), fullPage: true });
  // The peak on the timeline, where the curves are lanes.
  await showPeakOnTimeline(page, want.devices.findIndex((d) => d.device === 'CUDA:0'));
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('memory: a raw memory timeline opened with its trace gives the categories; alone it says what it is', async () => {
  const trace = 'torch-memory/mem_train_cuda.pt.trace.json.gz';
  const raw = 'torch-memory/mem_train_cuda.memory_timeline.raw.json.gz';
  const want = memory([trace, raw]);
  const page = await open();
  await waitForDemo(page);
  await page.setInputFiles('#file-input', [path.join(fixtures, trace), path.join(fixtures, raw)]);
  await waitForTab(page, 'mem_train_cuda.pt.trace.json.gz + memory timeline');
  await page.click('#show-memory');
  await waitForMemory(page);
  const k = want.devices.findIndex((x) => x.categories);
  const d = want.devices[k];
  const categories = await page.locator(`#memory-categories-${k} tbody tr`).evaluateAll((rows) => rows.map((r) => [r.dataset.category, Number(r.dataset.bytes)]));
  assert.deepEqual(categories, d.categories.at_peak.map((c) => [c.category, c.bytes]));
  const shownCategories = await page.locator(`#memory-live-peak-${k} tbody tr td:nth-child(4)`).allTextContents();
  assert.deepEqual(shownCategories, d.live_at_peak.slice(0, 50).map((g) => g.category ?? '—'));
  // Alone, the timeline is refused with what to do, and nothing is lost.
  const tabs = await page.locator('.tabs [role=tab]').count();
  await page.setInputFiles('#file-input', path.join(fixtures, raw));
  await page.waitForFunction(() => document.querySelector('#import-error')?.textContent, null, { timeout: 60000 });
  assert.match(await page.locator('#import-error').textContent(), /raw memory timeline.*open it together with that trace/);
  assert.equal(await page.locator('.tabs [role=tab]').count(), tabs);
  assert.deepEqual(page.errors, []);
  await page.close();
});

/** Waits until the Memory view has answered with an allocator snapshot's tables. */
async function waitForSnapshot(page) {
  await page.waitForFunction(() => {
    const m = document.querySelector('#memory');
    return m && m.dataset.asked !== '0' && m.dataset.answered === m.dataset.asked && document.querySelector('#memory-snapshot-0');
  }, null, { timeout: 60000 });
}

/** The rows of the snapshot's tables as shown, cell by cell. */
const snapshotRows = (page) => page.evaluate(() => [...document.querySelectorAll('#memory [id^="memory-snapshot-"] tbody tr')]
  .map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent.trim())));

/** The body rows of the CLI's Markdown tables (`--top 50`: the page's rows per table), cell by cell. */
function cliRows(files) {
  const md = execFileSync(cli, ['memory', ...files.map((f) => path.join(fixtures, f)), '--format', 'md', '--top', '50']).toString();
  return md.split('\n').filter((l) => l.startsWith('| ') && !/^\|[-:| ]+\|$/.test(l))
    .map((l) => l.slice(2, -2).split(' | '));
}

test('memory: an allocator snapshot dropped alone opens — its OOM explained and what held the peak as the CLI prints them, its curves timeline lanes', async () => {
  const rel = 'memory-snapshots/snap_oom_fragmented_cuda.pickle';
  const want = memory([rel]).snapshot;
  const page = await open();
  await waitForDemo(page);
  await openFile(page, rel, 'memory');
  await waitForSnapshot(page);
  // The page's tables are the CLI's, row for row, cell for cell.
  const heads = await page.evaluate(() => [...document.querySelectorAll('#memory [id^="memory-snapshot-"] thead tr')]
    .map((tr) => [...tr.querySelectorAll('th')].map((th) => th.textContent.trim())));
  const rows = await snapshotRows(page);
  assert.ok(rows.length > 3, JSON.stringify(rows));
  const headText = new Set(heads.map((h) => JSON.stringify(h)));
  assert.deepEqual(rows, cliRows([rel]).filter((r) => !headText.has(JSON.stringify(r))));
  const shown = await page.locator('#memory').textContent();
  assert.deepEqual(want.devices.flatMap((d) => d.ooms.map((o) => o.cause)), ['fragmentation']);
  assert.match(shown, /fragmentation/i);
  assert.ok(shown.includes(want.devices[0].ooms[0].explanation.slice(0, 60)), shown);
  // Decoded in the decoder worker: the import's phases say how long.
  assert.ok(Number(await page.locator('#trace-facts').getAttribute('data-decode-ms')) > 0);
  await showPeakOnTimeline(page, 0);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('memory: a snapshot past the first read is handed to the decoder, which reads the file itself (gzipped too, and in the tar of a trace dropped with it): its tables the CLI\'s', async () => {
  // Generated (tools/gen_snapshot.py): 3 MB, well past the 64 KiB that
  // decide the format, so the import worker hands the file over mid-read.
  const plain = path.join(artifacts, 'handed_over.pickle');
  execFileSync('python3', [path.join(root, 'tools/gen_snapshot.py'), plain, '--mb', '3', '--protocol', '5']);
  const gz = `${plain}.gz`;
  writeFileSync(gz, gzipSync(readFileSync(plain)));
  const page = await open();
  await waitForDemo(page);
  for (const file of [plain, gz]) {
    const md = execFileSync(cli, ['memory', file, '--format', 'md', '--top', '50']).toString();
    const want = md.split('\n').filter((l) => l.startsWith('| ') && !/^\|[-:| ]+\|$/.test(l)).map((l) => l.slice(2, -2).split(' | '));
    await openFile(page, file, 'memory');
    await waitForSnapshot(page);
    const heads = await page.evaluate(() => [...document.querySelectorAll('#memory [id^="memory-snapshot-"] thead tr')]
      .map((tr) => JSON.stringify([...tr.querySelectorAll('th')].map((th) => th.textContent.trim()))));
    const rows = await snapshotRows(page);
    assert.ok(rows.length > 3, file);
    assert.deepEqual(rows, want.filter((r) => !heads.includes(JSON.stringify(r))), file);
    // The decoder worker decoded it and said how much memory it then held.
    assert.ok(Number(await page.locator('#trace-facts').getAttribute('data-decoder-wasm-memory-bytes')) > 0, file);
  }
  // Dropped with a trace, it travels in the page's tar: the decoder reads
  // the tar member by member, the snapshot decoded as it is read.
  const trace = path.join(fixtures, 'memory-snapshots/snap_train_cuda.pt.trace.json.gz');
  const md = execFileSync(cli, ['memory', trace, gz, '--format', 'md', '--top', '50']).toString();
  const all = md.split('\n').filter((l) => l.startsWith('| ')).map((l) => JSON.stringify(l.slice(2, -2).split(' | ')));
  await page.setInputFiles('#file-input', [trace, gz]);
  await waitForTab(page, 'snap_train_cuda.pt.trace.json.gz + allocator snapshot');
  await page.click('#show-memory');
  await waitForSnapshot(page);
  const rows = await snapshotRows(page);
  assert.ok(rows.length > 3, JSON.stringify(rows));
  for (const row of rows) assert.ok(all.includes(JSON.stringify(row)), `${row.join(' | ')} is not a row of tracelane memory`);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('memory: a snapshot dropped with its trace shares the trace\'s clock; a damaged pickle is refused and the trace open stays', async () => {
  const trace = 'memory-snapshots/snap_train_cuda.pt.trace.json.gz';
  const snap = 'memory-snapshots/snap_train_cuda.pickle';
  const want = memory([trace, snap]);
  const page = await open();
  await waitForDemo(page);
  await page.setInputFiles('#file-input', [path.join(fixtures, trace), path.join(fixtures, snap)]);
  await waitForTab(page, 'snap_train_cuda.pt.trace.json.gz + allocator snapshot');
  await page.click('#show-memory');
  await waitForSnapshot(page);
  // The trace's own [memory] devices and the snapshot's tables, the
  // snapshot's times from the trace's start as the CLI gives them.
  const shown = await shownDevices(page, 'peak');
  assert.deepEqual(shown.map((d) => [d.device, d.peak]), want.devices.map((d) => [d.device, d.peak_allocated_bytes]));
  const all = cliRows([trace, snap]).map((r) => JSON.stringify(r));
  const rows = await snapshotRows(page);
  assert.ok(rows.length > 3, JSON.stringify(rows));
  for (const row of rows) assert.ok(all.includes(JSON.stringify(row)), `${row.join(' | ')} is not a row of tracelane memory`);
  await page.screenshot({ path: path.join(artifacts, 'memory-snapshot.png'), fullPage: true });
  await page.locator('#memory').screenshot({ path: path.join(artifacts, 'memory-view.png') });
  // A pickle cut short of its first entry: a clear refusal, nothing lost.
  const tabs = await page.locator('.tabs [role=tab]').count();
  const damaged = path.join(artifacts, 'damaged.pickle');
  const fs = await import('node:fs');
  fs.writeFileSync(damaged, fs.readFileSync(path.join(fixtures, snap)).subarray(0, 40));
  await page.setInputFiles('#file-input', damaged);
  await page.waitForFunction(() => document.querySelector('#import-error')?.textContent, null, { timeout: 60000 });
  assert.match(await page.locator('#import-error').textContent(), /cannot be read as a PyTorch allocator snapshot/);
  assert.equal(await page.locator('.tabs [role=tab]').count(), tabs);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('memory: a Neuron system profile\'s HBM usage — peak, categories, spill — as the CLI prints it, its peak on the timeline', async () => {
  const rel = 'neuron-wild/system_profile.explorer.json';
  const text = execFileSync(cli, ['memory', path.join(fixtures, rel)]).toString();
  const page = await open();
  await waitForDemo(page);
  await openFile(page, rel, 'memory');
  await page.waitForFunction(() => {
    const m = document.querySelector('#memory');
    return m && m.dataset.asked !== '0' && m.dataset.answered === m.dataset.asked && document.querySelector('#memory-hbm-0');
  }, null, { timeout: 30000 });
  const rows = await page.evaluate(() => [...document.querySelectorAll('#memory-hbm-0 tbody tr, #memory-hbm-1 tbody tr')]
    .map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent.trim())));
  // Every row the page shows is a row of the CLI's tables, cell for cell.
  const cliRows = text.split('\n').map((l) => l.trim().split(/\s{2,}/));
  for (const row of rows) {
    assert.ok(cliRows.some((c) => JSON.stringify(c) === JSON.stringify(row)), `${row.join(' | ')} not in:\n${text}`);
  }
  assert.equal(rows[0][0], 'HBM 0 of device 0');
  assert.ok(rows.some((r) => r[0] === 'dram_spill (spill)'), JSON.stringify(rows));
  await page.click('#memory-show-peak-0');
  await page.waitForSelector('#timeline canvas.overlay');
  await waitForPainted(page);
  const lanes = await page.locator('.lane-label').allTextContents();
  assert.ok(lanes.some((l) => l.includes('total bytes')), lanes.join(' | '));
  assert.deepEqual(page.errors, []);
  await page.close();
});

/** Waits until the bands canvas has painted the last frame asked (`n`: at least that many asked). */
async function waitForBands(page, n = 1) {
  await page.waitForFunction((n) => {
    const b = document.querySelector('#memory-bands');
    return b && Number(b.dataset.asked) >= n && b.dataset.painted === b.dataset.asked;
  }, n, { timeout: 60000 });
  return page.evaluate(() => ({ ...document.querySelector('#memory-bands').dataset }));
}

/** Hovers cell (x, y) of the bands canvas and waits for the answer about it. */
async function hoverBand(page, x, y) {
  const asked = Number(await page.locator('#memory-band-tip').getAttribute('data-asked'));
  await page.locator('#memory-bands canvas').hover({ position: { x, y } });
  await page.waitForFunction((asked) => {
    const t = document.querySelector('#memory-band-tip');
    return Number(t.dataset.asked) > asked && t.dataset.answered === t.dataset.asked;
  }, asked, { timeout: 30000 });
  return page.evaluate(() => ({ band: document.querySelector('#memory-band-tip').dataset.band, text: document.querySelector('#memory-band-tip').textContent }));
}

test('memory: a snapshot\'s allocations are bands over real time — every one drawn, the stack\'s top the CLI\'s peak; hover names a band\'s stack; a range is built before it is drawn', async () => {
  const rel = 'memory-snapshots/snap_train_cuda.pickle';
  const want = memory([rel]).snapshot.devices[0];
  const page = await open();
  await waitForDemo(page);
  await openFile(page, rel, 'memory');
  await waitForSnapshot(page);
  const whole = await waitForBands(page);
  assert.equal(whole.error, '');
  // Every allocation (the CLI's allocs, and blocks live from before the
  // trace) is drawn alone: none summarised; the stack's top is the peak.
  assert.equal(Number(whole.allocations), want.allocs + want.replay.before_trace);
  assert.equal(whole.bands, whole.allocations);
  assert.equal(whole.summarised, '0');
  assert.equal(Number(whole.top), want.peak_allocated_bytes);
  assert.equal(whole.builds, '1');
  await page.locator('#memory-bands').screenshot({ path: path.join(artifacts, 'memory-bands.png') });
  // The bottom of the stack mid-run is a band: its block, times and stack.
  const box = await page.locator('#memory-bands canvas').boundingBox();
  const hit = await hoverBand(page, Math.round(box.width / 2), Math.round(box.height) - 3);
  assert.match(hit.band, /^\d+$/, hit.text);
  assert.match(hit.text, /block.*requested, at 0x[0-9a-f]+.*made (at|before)/s);
  assert.match(hit.text, /\.py:\d+/);
  // The wheel zooms the window; it only paints (nothing is built again).
  const asked = Number(whole.asked);
  await page.locator('#memory-bands canvas').hover({ position: { x: Math.round(box.width / 2), y: 20 } });
  await page.mouse.wheel(0, -300);
  const zoomed = await waitForBands(page, asked + 1);
  assert.equal(zoomed.builds, '1');
  assert.ok(Number(zoomed.viewTo) - Number(zoomed.viewFrom) < Number(whole.viewTo) - Number(whole.viewFrom), JSON.stringify(zoomed));
  assert.equal(zoomed.rangeFrom, whole.rangeFrom);
  // Drawing the window builds that range: what is live in it, no more.
  await page.click('#memory-bands-draw-window');
  const ranged = await waitForBands(page, Number(zoomed.asked) + 1);
  assert.equal(ranged.builds, '2');
  assert.deepEqual([ranged.rangeFrom, ranged.rangeTo], [zoomed.viewFrom, zoomed.viewTo]);
  assert.ok(Number(ranged.allocations) <= Number(whole.allocations));
  assert.equal(ranged.bands, ranged.allocations);
  // A typed range, in µs from the start; then the whole snapshot again.
  await page.fill('#memory-bands-from', '0');
  await page.fill('#memory-bands-to', String(((want.last_us - want.first_us) / 2).toFixed(0)));
  await page.click('#memory-bands-draw');
  const typed = await waitForBands(page, Number(ranged.asked) + 1);
  assert.equal(typed.builds, '3');
  assert.ok(Number(typed.rangeTo) < Number(whole.rangeTo), JSON.stringify(typed));
  await page.click('#memory-bands-whole');
  const again = await waitForBands(page, Number(typed.asked) + 1);
  assert.deepEqual([again.allocations, again.top, again.rangeFrom, again.rangeTo], [whole.allocations, whole.top, whole.rangeFrom, whole.rangeTo]);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('memory: two allocator snapshots opened together are compared in the Compare view, table for table as `tracelane memory A B`', async () => {
  const files = ['memory-snapshots/snap_train_cuda.pickle', 'memory-snapshots/snap_oom_fragmented_cuda.pickle'];
  const page = await open();
  await waitForDemo(page);
  const tabs = await page.locator('.tabs [role=tab]').count();
  await page.setInputFiles('#file-input', files.map((f) => path.join(fixtures, f)));
  await page.waitForFunction((n) => document.querySelectorAll('.tabs [role=tab]').length === n, tabs + 2, { timeout: 60000 });
  await page.waitForSelector('#compare-snapshots[data-shown="true"]', { timeout: 60000 });
  // No ops, no device events: no empty cards above the snapshots' tables.
  await page.waitForSelector('#compare-no-ops', { timeout: 60000 });
  assert.equal(await page.locator('#compare-cards').count(), 0);
  const heads = await page.evaluate(() => [...document.querySelectorAll('#compare-snapshots thead tr')]
    .map((tr) => [...tr.querySelectorAll('th')].map((th) => th.textContent.trim())));
  const rows = await page.evaluate(() => [...document.querySelectorAll('#compare-snapshots tbody tr')]
    .map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent.trim())));
  assert.ok(rows.length > 3, JSON.stringify(rows));
  const headText = new Set(heads.map((h) => JSON.stringify(h)));
  assert.deepEqual(rows, cliRows(files).filter((r) => !headText.has(JSON.stringify(r))));
  // The titles name the two files as the CLI does.
  const titles = await page.locator('#compare-snapshots .report-table h3').allTextContents();
  assert.ok(titles.some((t) => t.includes('snap_train_cuda.pickle (baseline) against snap_oom_fragmented_cuda.pickle')), titles.join(' | '));
  await page.locator('#compare-snapshots').screenshot({ path: path.join(artifacts, 'memory-compare.png') });
  assert.deepEqual(page.errors, []);
  await page.close();
});
