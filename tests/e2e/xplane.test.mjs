// End-to-end: the traces the rest of the field holds. An XPlane profile
// (JAX / TensorFlow / xprof, *.xplane.pb) opens in the page with its op
// tables in the Analyses view equal to the CLI's (`tracelane ops --format
// json`), which the native tests hold equal to xprof's own; rocprofv3's
// JSON and pftrace open with the CLI's op table; its rocpd database is
// named, with how to convert it.
// Run through scripts/test-all.sh (it builds dist/ first), or: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import {
  cli, cliCsv, exportCsv, fixtures, lines, open, openFile, showExactAnalyses, useBrowser, waitForDemo,
  waitForTab,
} from './helpers.mjs';

useBrowser();

test('xplane: a profile opens; its HLO and framework op tables are the CLI\'s', async () => {
  const rel = 'xplane/gpu_rules.xplane.pb';
  const want = JSON.parse(execFileSync(cli, ['ops', path.join(fixtures, rel), '--format', 'json']).toString());
  const page = await open();
  await waitForDemo(page);
  await openFile(page, rel);
  assert.match(await page.locator('#trace-facts').textContent(), /slices/);
  await showExactAnalyses(page);
  const xo = await page.locator('#xla-ops').evaluate((e) => ({ ...e.dataset }));
  assert.equal(Number(xo.hloRows), want.hlo_ops.length);
  assert.equal(Number(xo.frameworkRows), want.framework_ops.length);
  assert.equal(xo.deviceTotalPs, String(want.device_total_ps));
  assert.equal(xo.deviceIdlePs, String(want.device_idle_ps));
  // The framework op known by its tf_op stat alone, and the host's
  // nested ops, as text cells (names from the file render as text).
  const text = await page.locator('#xla-ops').textContent();
  assert.match(text, /jit\(step\)\/foo/);
  assert.match(text, /model\/MatMul/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('xplane: each HLO op\'s FLOPs and HBM bytes (XLA\'s cost analysis of the embedded modules) are the CLI\'s', async () => {
  const rel = 'xplane/cost.xplane.pb';
  const want = JSON.parse(execFileSync(cli, ['ops', path.join(fixtures, rel), '--format', 'json']).toString());
  const sum = (k) => String(want.hlo_ops.reduce((n, r) => n + (r[k] ?? 0), 0));
  const page = await open();
  await waitForDemo(page);
  await openFile(page, rel);
  await showExactAnalyses(page);
  const xo = await page.locator('#xla-ops').evaluate((e) => ({ ...e.dataset }));
  assert.equal(Number(xo.hloRows), want.hlo_ops.length);
  assert.equal(xo.hloFlops, sum('flops'));
  assert.equal(xo.hloBytes, sum('bytes_accessed'));
  assert.notEqual(xo.hloFlops, '0');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('rocprofv3: its JSON and its pftrace open with the CLI\'s op table; a rocpd database says how to convert it', async () => {
  const page = await open();
  await waitForDemo(page);
  for (const rel of ['rocprof/sys_trace.json', 'rocprof/sys_trace.pftrace']) {
    await openFile(page, rel);
    await page.waitForSelector('#row-count');
    assert.deepEqual(lines(await exportCsv(page)), lines(cliCsv(rel)), rel);
  }
  // A database cannot be read in the page: one line says what to do, and
  // the trace already open stays.
  const tabs = await page.locator('.tabs [role=tab]').count();
  await page.setInputFiles('#file-input', path.join(fixtures, 'rocprof/sys_trace.rocpd.db'));
  await page.waitForFunction(() => /rocpd convert -f pftrace/.test(document.querySelector('#import-error')?.textContent || ''), null, { timeout: 60000 });
  assert.equal(await page.locator('.tabs [role=tab]').count(), tabs);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('xplane: a profile run\'s folder dropped whole opens as one session, its tables the CLI\'s', async () => {
  const runDir = path.join(fixtures, 'xplane/run/plugins/profile/2026_12_06_04_00_00');
  const want = JSON.parse(execFileSync(cli, ['ops', runDir, '--format', 'json']).toString());
  const page = await open();
  await waitForDemo(page);
  await page.setInputFiles('#folder-input', runDir);
  await waitForTab(page, '2026_12_06_04_00_00 (3 files)');
  await showExactAnalyses(page);
  const xo = await page.locator('#xla-ops').evaluate((e) => ({ ...e.dataset }));
  assert.equal(xo.deviceTotalPs, String(want.device_total_ps));
  assert.equal(xo.deviceIdlePs, String(want.device_idle_ps));
  assert.equal(Number(xo.frameworkRows), want.framework_ops.length);
  assert.deepEqual(page.errors, []);
  await page.close();
});
