// End-to-end: the Memory view against `tracelane memory --format json` for
// the same files — the peak and what holds it, a picked moment, PyTorch's
// categories from a raw memory timeline opened with the trace — and its
// curves as timeline lanes.
// Run through scripts/test-all.sh (it builds dist/ first), or: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import {
  artifacts, cli, fixtures, open, openFile, useBrowser, waitForDemo, waitForPainted, waitForTab,
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
  await page.waitForSelector('#memory[data-counter-lanes="true"]', { timeout: 30000 });
  await page.click(`#memory-show-peak-${want.devices.findIndex((d) => d.device === 'CUDA:0')}`);
  await page.waitForSelector('#timeline canvas.overlay');
  await waitForPainted(page);
  const lanes = await page.locator('.lane-label').allTextContents();
  for (const lane of ['memory allocated · CUDA:0', 'memory reserved · CUDA:0']) {
    assert.ok(lanes.some((l) => l.includes(lane)), lanes.join(' | '));
  }
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

test('memory: an allocator snapshot dropped on the page says what reads it; the trace open stays', async () => {
  const page = await open();
  await waitForDemo(page);
  const tabs = await page.locator('.tabs [role=tab]').count();
  await page.setInputFiles('#file-input', path.join(fixtures, 'memory-snapshots/snap_oom_fragmented_cuda.pickle'));
  await page.waitForFunction(() => document.querySelector('#import-error')?.textContent, null, { timeout: 60000 });
  assert.match(await page.locator('#import-error').textContent(), /allocator snapshot.*tracelane memory FILE/);
  assert.equal(await page.locator('.tabs [role=tab]').count(), tabs);
  // The CLI reads it.
  const want = memory(['memory-snapshots/snap_oom_fragmented_cuda.pickle']).snapshot;
  assert.deepEqual(want.devices.flatMap((d) => d.ooms.map((o) => o.cause)), ['fragmentation']);
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
