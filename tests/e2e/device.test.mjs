// End-to-end: inside the device — a Neuron device profile (its Parquet
// folder, its tables picked as files, a .zip of them) in the Engines view
// and the timeline, and the roofline of a GPU trace, against the CLI's
// answers for the same files.
// Run through scripts/test-all.sh (it builds dist/ first), or: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import {
  artifacts, cli, fixtures, open, openFile, useBrowser, waitForDemo, waitForPainted, waitForTab,
} from './helpers.mjs';

useBrowser();

const profileDir = path.join(fixtures, 'neuron-provisional/device_profile');
const cliJson = (...args) => JSON.parse(execFileSync(cli, [...args, '--format', 'json'], { maxBuffer: 1 << 28 }).toString());

/** Waits until a view has answered its latest question. */
async function waitForAnswer(page, sel) {
  await page.waitForFunction((sel) => {
    const a = document.querySelector(sel);
    return a && a.dataset.asked !== '0' && a.dataset.answered === a.dataset.asked;
  }, sel, { timeout: 30000 });
}

/** The Engines view's rows against `tracelane engines`' JSON. */
async function checkEngines(page, want) {
  // A profile opens on its summary; the engines are a click away.
  if (await page.locator('#show-engines').getAttribute('aria-selected') !== 'true') {
    await page.click('#show-engines');
  }
  await waitForAnswer(page, '#engines');
  const rows = await page.locator('#engine-table tbody tr').evaluateAll((rs) => rs.map((r) => ({ ...r.dataset })));
  assert.deepEqual(rows.map((r) => r.engine), want.engines.map((e) => e.engine));
  for (const [k, e] of want.engines.entries()) {
    assert.ok(Math.abs(Number(rows[k].busyPct) - e.busy_pct) < 1e-5, `${e.engine} ${rows[k].busyPct} ${e.busy_pct}`);
    assert.equal(Number(rows[k].instructions), e.instructions);
  }
  if (want.utilization) {
    const u = await page.locator('#engine-utilization').evaluate((e) => ({ ...e.dataset }));
    for (const k of ['hfu', 'mfu', 'mbu']) {
      assert.ok(Math.abs(Number(u[k]) - want.utilization[`${k}_pct`]) < 1e-9, `${k} ${u[k]}`);
    }
  } else {
    assert.equal(await page.locator('#engine-utilization').count(), 0);
  }
  const queues = await page.locator('#dma-queues tbody tr').evaluateAll((rs) => rs.map((r) => [r.dataset.name, r.dataset.bytes]));
  assert.deepEqual(queues, [want.dma_all, ...want.dma_queues].map((d) => [d.name, String(d.bytes)]));
}

test('engines: a dropped profile folder opens as engine and DMA lanes, busy % as the CLI computes it', async () => {
  const want = cliJson('engines', profileDir);
  const page = await open();
  await waitForDemo(page);
  // The Parquet decoder is its own module, fetched when a profile opens.
  const decoder = () => page.requests.filter((u) => /decoder_bg\.wasm$/.test(u)).length;
  assert.equal(decoder(), 0, 'the decoder is not part of the first download');
  await page.setInputFiles('#folder-input', profileDir);
  await waitForTab(page, 'device_profile (11 tables)');
  assert.equal(decoder(), 1);
  // A device profile opens on its Engines view.
  await checkEngines(page, want);
  assert.match(await page.locator('#engines-source').textContent(), /Parquet profile directory.*schema 7\.4\.0/);
  const tables = await page.locator('#profile-tables tbody tr').evaluateAll((rs) => rs.map((r) => r.dataset.table));
  assert.equal(tables.length, 11);
  await page.screenshot({ path: path.join(artifacts, 'engines.png'), fullPage: true });
  // An HLO op opens the timeline on its first instruction.
  await page.locator('#by-hlo tr[data-name="dot.12"] button').click();
  await page.waitForSelector('#timeline canvas.overlay');
  await waitForPainted(page);
  await page.waitForSelector('#timeline-picked', { timeout: 10000 });
  const lanes = await page.locator('.lane-label').allTextContents();
  for (const lane of ['Tensor Engine - Row 0', 'TensorMatrix Engine - Row 2', 'DMA Engine 64 - Row 0', 'qSyncIO0 - Row 0']) {
    assert.ok(lanes.some((l) => l.includes(lane)), `${lane}: ${lanes.slice(0, 12).join(' | ')}`);
  }
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('engines: the tables picked as files, and a .zip of the folder, open as the same profile', async () => {
  const want = cliJson('engines', profileDir);
  const page = await open();
  await waitForDemo(page);
  const files = readdirSync(profileDir).map((f) => path.join(profileDir, f));
  await page.setInputFiles('#file-input', files);
  await waitForTab(page, 'device profile (11 tables)');
  await checkEngines(page, want);
  const zip = path.join(artifacts, `device_profile-${process.pid}.zip`);
  execFileSync('python3', ['-c', `
import os, sys, zipfile
src, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:
    for f in sorted(os.listdir(src)):
        z.write(os.path.join(src, f), 'device_profile/' + f)
`, profileDir, zip]);
  await openFile(page, zip);
  await waitForTab(page, path.basename(zip));
  await checkEngines(page, want);
  // Its Perfetto export: the same engines from the lanes alone.
  const pf = 'neuron-provisional/device_profile_model_1.pftrace';
  await openFile(page, pf);
  await checkEngines(page, cliJson('engines', path.join(fixtures, pf)));
  assert.match(await page.locator('#engines-source').textContent(), /Perfetto device profile/);
  await page.locator('.tabs [role=tab]', { hasText: path.basename(zip) }).click();
  await page.click('#show-engines');
  await waitForAnswer(page, '#engines');
  // The zip's roofline is the profile's own (HLO ops, Metadata roofs).
  const roof = cliJson('roofline', profileDir);
  await page.click('#show-roofline');
  await waitForAnswer(page, '#roofline');
  const names = await page.locator('#roofline-plot circle.point').evaluateAll((cs) => cs.map((c) => c.dataset.name));
  assert.deepEqual(names, roof.points.map((p) => p.name));
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('engines: a system profile folder with its device profile opens as one trace, the device lanes at their hardware execution', async () => {
  const dir = path.join(fixtures, 'neuron-provisional/system_device');
  const want = cliJson('engines', dir);
  const page = await open();
  await waitForDemo(page);
  await page.setInputFiles('#folder-input', dir);
  await waitForTab(page, 'system_device (14 tables)');
  await checkEngines(page, want);
  const notes = await page.locator('#engines .note').allTextContents();
  assert.ok(notes.some((n) => /placed at its hardware execution nc_exec_running \(NC 4, model 605291374318702, exec 2\)/.test(n)), notes.join(' | '));
  await page.click('#show-timeline');
  await page.waitForSelector('#timeline canvas.overlay');
  await waitForPainted(page);
  const lanes = await page.locator('.lane-label').allTextContents();
  for (const lane of ['TID:1113579', 'NC:4', 'NC4:0', 'Tensor Engine - Row 0', 'qSyncIO0 - Row 0']) {
    assert.ok(lanes.some((l) => l.includes(lane)), `${lane}: ${lanes.slice(0, 16).join(' | ')}`);
  }
  // Long process names ("i-0f20…/PID:1113579/framework") are cut in the
  // labels column: the plot keeps its width and stays inside the window.
  const right = await page.locator('#timeline canvas.overlay').evaluate((c) => [c.getBoundingClientRect().right, innerWidth]);
  assert.ok(right[0] <= right[1], `plot ends at ${right[0]} px in a ${right[1]} px window`);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('roofline: a GPU trace\'s points are where the CLI puts them, the roofs follow the given peaks, a point opens the timeline', async () => {
  const rel = 'public/kineto_legacy_2021_resnet50.pt.trace.json.gz';
  const want = cliJson('roofline', path.join(fixtures, rel));
  assert.ok(want.points.length >= 5 && want.peaks.length === 2, JSON.stringify(want.peaks));
  const page = await open();
  await waitForDemo(page);
  await openFile(page, rel);
  await page.click('#show-roofline');
  await waitForAnswer(page, '#roofline');
  const drawn = await page.locator('#roofline-plot circle.point').evaluateAll((cs) => cs.map((c) => ({ ...c.dataset })));
  const placed = want.points.filter((p) => p.intensity !== null && p.achieved_flops_per_s > 0);
  assert.equal(drawn.length, placed.length);
  for (const [k, p] of placed.entries()) {
    assert.equal(drawn[k].name, p.name);
    assert.ok(Math.abs(Number(drawn[k].intensity) / p.intensity - 1) < 1e-12, `${p.name} intensity`);
    assert.ok(Math.abs(Number(drawn[k].achieved) / p.achieved_flops_per_s - 1) < 1e-12, `${p.name} achieved`);
  }
  // Log-log: x follows intensity, y (downwards) follows FLOP/s.
  const byX = [...drawn].sort((a, b) => Number(a.x) - Number(b.x)).map((d) => Number(d.intensity));
  assert.deepEqual(byX, [...byX].sort((a, b) => a - b));
  const byY = [...drawn].sort((a, b) => Number(b.y) - Number(a.y)).map((d) => Number(d.achieved));
  assert.deepEqual(byY, [...byY].sort((a, b) => a - b));
  assert.equal(await page.locator('#roofline-plot polyline.roof').count(), 2);
  // Given peaks: new roofs, the same points; the CLI agrees on the bounds.
  const given = cliJson('roofline', path.join(fixtures, rel), '--peak-tflops', '10', '--peak-gbps', '100');
  const asked = Number(await page.locator('#roofline').getAttribute('data-asked'));
  await page.fill('#peak-tflops', '10');
  await page.fill('#peak-gbps', '100');
  await page.click('#apply-peaks');
  await page.waitForFunction((k) => Number(document.querySelector('#roofline').dataset.asked) > k, asked);
  await waitForAnswer(page, '#roofline');
  const bounds = await page.locator('#roofline-table tbody tr').evaluateAll((rs) => rs.map((r) => r.children[8].textContent));
  assert.deepEqual(bounds, given.points.slice(0, 100).map((p) => p.bound ?? '—'));
  await page.screenshot({ path: path.join(artifacts, 'roofline.png'), fullPage: true });
  // The last point drawn is on top of any it overlaps.
  await page.locator('#roofline-plot circle.point').last().click();
  await page.waitForSelector('#timeline canvas.overlay');
  await waitForPainted(page);
  await page.waitForSelector('#timeline-picked', { timeout: 10000 });
  assert.deepEqual(page.errors, []);
  await page.close();
});
