// End-to-end: Inputs other than Kineto JSON: Neuron system profiles and Perfetto traces.
// Run through scripts/test-all.sh (it builds dist/ first), or: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import {
  artifacts, cli, cliRows, open, openFile, showTimeline, timelineView, useBrowser, waitForDemo,
} from './helpers.mjs';

useBrowser();

test('a Neuron Explorer system_profile.json opens: table with device time, framework/runtime/hardware lanes, its warning', async () => {
  const rel = 'neuron-provisional/system_profile.json';
  const page = await open();
  await waitForDemo(page);
  await openFile(page, rel);
  assert.match(await page.locator('#trace-facts').textContent(), /24 slices/);
  // The same table as the CLI.
  const cli = cliRows(rel);
  // Each execution as long as its device clock's nc_start/nc_stop pair
  // says (the fixture's own duration field disagrees: 620 µs).
  const hw = cli.find((r) => r.name === 'nc_exec_running');
  assert.equal(hw.device_total_us, 1370.976);
  const tableText = await page.locator('.table').textContent();
  assert.match(tableText, /nc_exec_running/);
  // "aten::mul [trace.json]" is PyTorch's aten::mul, its source kept aside.
  assert.match(tableText, /aten::mul/);
  assert.doesNotMatch(tableText, /\[trace\.json\]/);
  assert.match(await page.locator('.diagnostics').textContent(), /example warning: 12 events dropped on NC 1/);
  await showTimeline(page);
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
  // nc_exec_running #1 starts 40 µs after the trace start and lasts 228 µs.
  await page.mouse.click(box.x + (40000 + 100000 - v.start) / v.nsPerPx, box.y + row * 18 + 9);
  await page.waitForSelector('#timeline-chain li', { timeout: 10000 });
  const chain = await page.locator('#timeline-chain li').allTextContents();
  assert.match(chain[0], /^op\s*aten::mul/);
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
  await showTimeline(page);
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
