// End-to-end: Neuron inputs as real captures come — a TorchNeuron run's
// folder (trace.json, the runtime's profile, framework_mapping_*.json) as
// one trace equal to the CLI's, its files picked together, a mapping alone
// refused, a sorted-keys Explorer export with its HBM lanes, and what the
// runtime's events say in the Analyses view.
// Run through scripts/test-all.sh (it builds dist/ first), or: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import {
  cliCsv, exportCsv, fixtures, lines, open, openFile, showExactAnalyses, useBrowser, waitForDemo,
  waitForPainted, waitForTab,
} from './helpers.mjs';

useBrowser();

const runDir = path.join(fixtures, 'neuron-wild/torchneuron_run');

test('neuron: a TorchNeuron run folder opens as one trace, its op table the CLI\'s, its reading stated', async () => {
  const page = await open();
  await waitForDemo(page);
  await page.setInputFiles('#folder-input', runDir);
  await waitForTab(page, 'torchneuron_run (4 files)');
  await page.click('#show-table');
  await page.waitForSelector('#row-count');
  assert.deepEqual(lines(await exportCsv(page)), lines(cliCsv('neuron-wild/torchneuron_run')));
  // The diagnostics say how the run was read: the mapping joined its
  // executions, the profile's copies of the ops left to trace.json.
  const readings = await page.locator('#readings li').allTextContents();
  assert.ok(readings.some((r) => /the mapping joined 30 hardware executions/.test(r)), readings.join(' | '));
  assert.ok(readings.some((r) => /framework events the profile copied from trace.json left out/.test(r)), readings.join(' | '));
  // What the runtime's events say, in the Analyses view.
  await showExactAnalyses(page);
  const nr = await page.locator('#neuron-runtime').evaluate((e) => ({ ...e.dataset }));
  assert.equal(nr.executions, '30');
  assert.deepEqual(nr.families.split(' '), ['submit', 'host_blocked']);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('neuron: the run\'s files picked together open as the same one trace; the mapping alone says what it is', async () => {
  const page = await open();
  await waitForDemo(page);
  const files = readdirSync(runDir).map((f) => path.join(runDir, f));
  await page.setInputFiles('#file-input', files);
  await waitForTab(page, 'Neuron run (4 files)');
  await page.click('#show-table');
  await page.waitForSelector('#row-count');
  assert.deepEqual(lines(await exportCsv(page)), lines(cliCsv('neuron-wild/torchneuron_run')));
  const tabs = await page.locator('.tabs [role=tab]').count();
  const mapping = files.find((f) => path.basename(f).startsWith('framework_mapping'));
  await page.setInputFiles('#file-input', mapping);
  await page.waitForFunction(() => document.querySelector('#import-error')?.textContent, null, { timeout: 60000 });
  assert.match(await page.locator('#import-error').textContent(), /TorchNeuron framework mapping.*open it together with them/);
  // Nothing else lost: the run is still open, no tab was added.
  assert.equal(await page.locator('.tabs [role=tab]').count(), tabs);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('neuron: a sorted-keys Explorer export opens with its HBM lanes and its LNC = 2 executions', async () => {
  const page = await open();
  await waitForDemo(page);
  await openFile(page, 'neuron-wild/system_profile.explorer.json');
  assert.deepEqual(lines(await exportCsv(page)), lines(cliCsv('neuron-wild/system_profile.explorer.json')));
  await page.click('#show-timeline');
  await page.waitForSelector('#timeline canvas.overlay');
  await waitForPainted(page);
  const lanes = await page.locator('.lane-label').allTextContents();
  for (const lane of ['tensors bytes', 'dram_spill bytes', 'total bytes', 'NC0:0', 'NC0:1', 'NC0']) {
    assert.ok(lanes.some((l) => l.includes(lane)), `${lane}: ${lanes.join(' | ')}`);
  }
  const readings = await page.locator('#readings li').allTextContents();
  assert.ok(readings.some((r) => /top-level keys in sorted order/.test(r)), readings.join(' | '));
  assert.ok(readings.some((r) => /^LNC = 2: 6 executions/.test(r)), readings.join(' | '));
  assert.deepEqual(page.errors, []);
  await page.close();
});
