// End-to-end: The op table: equal to the CLI's, sorting, filtering, grouping, row details, virtualised rows.
// Run through scripts/test-all.sh (it builds dist/ first), or: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  artifacts, cli, cliCsv, cliRows, exportCsv, fixtures, open, openFile, useBrowser, waitForDemo,
} from './helpers.mjs';

useBrowser();

test('each public fixture gives the same table as the CLI', async () => {
  const page = await open();
  await waitForDemo(page);
  for (const rel of ['public/hta_triton_example.json.gz', 'public/hta_simple_add_a100.json.gz', 'public/hta_amd_mi250_rocm.json.gz',
    'public/hta_cpu_only_rank34.json.gz', 'public/hta_compare_pair/base.json.gz', 'public/hta_nccl_2rank_rank0.json.gz',
    'torch-cpu/mlp_train_cpu.pt.trace.json.gz', 'neuron-provisional/torchneuron_rmsnorm.json',
    'torch-memory/mem_train_cuda.pt.trace.json.gz']) {
    await openFile(page, rel);
    const want = cliRows(rel);
    const shown = await page.locator('#row-count').textContent();
    assert.equal(shown, `${want.length} rows`, rel);
    // The first rows on screen are the CLI's first rows (same default sort).
    const names = await page.locator('.tr .td:first-child').allTextContents();
    assert.deepEqual(names.slice(0, 5), want.slice(0, 5).map((r) => r.name), rel);
    // One exporter: the page's CSV is the CLI's, byte for byte (same default sort).
    assert.equal(await exportCsv(page), cliCsv(rel), rel);
    // PyTorch's memory columns, only where the trace recorded memory.
    const memory = rel.startsWith('torch-memory/') ? 1 : 0;
    assert.equal(await page.locator('.th[data-col="Self device mem"]').count(), memory, rel);
  }
  await page.screenshot({ path: path.join(artifacts, 'nccl-or-last.png'), fullPage: true });
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
  await page.click('#show-table');
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
  await page.waitForSelector('.table[data-group="shape"][data-ready="true"]', { timeout: 10000 });
  assert.ok(await page.locator('.th[data-col="Input shapes"]').isVisible());
  await page.locator('.tr').first().click();
  assert.ok(await page.locator('#row-details').isVisible());
  await page.click('.th[data-col="Calls"]'); // back to most calls first: `--sort calls`
  const [md] = await Promise.all([page.waitForEvent('download'), page.click('#export-md')]);
  const mdFile = path.join(artifacts, 'export.md');
  await md.saveAs(mdFile);
  const mdText = readFileSync(mdFile, 'utf8');
  // The page's Markdown is the CLI's for the same rows (grouped by shape, sorted by calls).
  const cliMd = execFileSync(cli, ['ops', path.join(fixtures, 'torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz'),
    '--by-shape', '--format', 'md', '--sort', 'calls']).toString();
  assert.equal(mdText, cliMd);
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
  await page.click('#show-table');
  assert.equal(await page.locator('#row-count').textContent(), '12000 rows');
  assert.ok(await page.locator('.tr').count() < 80);
  await page.locator('.tbody').evaluate((el) => { el.scrollTop = 28 * 9000; });
  // The rows rendered follow the scroll position (the page says which is first).
  await page.waitForFunction(() => Number(document.querySelector('.tbody')?.dataset.firstRow) > 8000, null, { timeout: 10000 });
  const names = await page.locator('.tr .td:first-child').allTextContents();
  assert.ok(names.length < 80 && names.length > 10, String(names.length));
  await page.close();
});

test('a device self % past 100 % (the ROCm demo\'s ProfilerStep*) is explained as PyTorch\'s rule, the number unchanged', async () => {
  const page = await open();
  await waitForDemo(page);
  await page.locator('.tabs button[role="tab"]', { hasText: 'hta_amd_mi250_rocm.json.gz' }).click();
  await page.waitForFunction(() => document.querySelector('.file-name')?.textContent === 'hta_amd_mi250_rocm.json.gz');
  await page.click('#show-table');
  await page.waitForSelector('#row-count');
  const over = page.locator('.tr .td.over');
  // The annotation's device row; its host row has no device time of its own.
  assert.equal(await over.count(), 1);
  assert.deepEqual(await over.allTextContents(), ['692.00%']);
  assert.match(await over.first().getAttribute('title'), /gpu_user_annotation.*PyTorch's key_averages\(\)/);
  assert.match(await page.locator('#device-pct-note').textContent(), /above 100 %.*The number is PyTorch's own/);
  // A table with no such row has no note.
  await page.locator('.tabs button[role="tab"]').first().click();
  await page.waitForFunction(() => document.querySelector('.file-name')?.textContent === 'rmsnorm_naive_cpu.pt.trace.json.gz');
  assert.equal(await page.locator('#device-pct-note').count(), 0);
});

test('a closed tab is gone, the tab beside it shown, and the worker frees its model', async () => {
  const page = await open();
  await waitForDemo(page);
  await openFile(page, 'public/hta_nccl_2rank_rank0.json.gz');
  const tabs = page.locator('.tabs button[role="tab"]');
  const names = await tabs.allTextContents();
  assert.equal(names.at(-1), 'hta_nccl_2rank_rank0.json.gz');
  await page.locator('.tab-close[aria-label="Close hta_nccl_2rank_rank0.json.gz"]').click();
  await page.waitForFunction(() => document.querySelector('.tabs')?.dataset.closed);
  const d = await page.locator('.tabs').evaluate((e) => ({ ...e.dataset }));
  // The worker's live heap lost the model (its wasm memory stays for the next trace).
  assert.ok(Number(d.heapBefore) - Number(d.heapAfter) > 1_000_000, JSON.stringify(d));
  assert.deepEqual(await tabs.allTextContents(), names.slice(0, -1));
  // The last tab closed: the one before it is shown.
  assert.equal(await page.locator('.file-name').textContent(), names.at(-2));
  // A middle tab closed while shown: the next one takes its place.
  await tabs.nth(1).click();
  await page.locator(`.tab-close[aria-label="Close ${names[1]}"]`).click();
  await page.waitForFunction((n) => document.querySelector('.file-name')?.textContent === n, names[2]);
  assert.deepEqual(await tabs.allTextContents(), [names[0], ...names.slice(2, -1)]);
  assert.deepEqual(page.errors, []);
});
