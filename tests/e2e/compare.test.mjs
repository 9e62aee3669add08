// End-to-end: The comparison view.
// Run through scripts/test-all.sh (it builds dist/ first), or: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import {
  artifacts, cli, cliRows, fixtures, open, openFile, root, useBrowser, waitForDemo,
} from './helpers.mjs';

useBrowser();

test('compare: dropping the three RMSNorm traces opens them side by side, numbers equal to `tracelane compare`', async () => {
  const page = await open();
  await waitForDemo(page);
  const files = ['naive', 'fused', 'compiled'].map((v) => path.join(fixtures, `torch-cpu/rmsnorm_${v}_cpu.pt.trace.json.gz`));
  // Opened together, they open in the comparison view (on these three, not the demo's copies).
  await page.setInputFiles('#file-input', files);
  await page.waitForFunction(() => document.querySelectorAll('.tabs [role=tab]').length === 8, null, { timeout: 30000 });
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
  // The busy time split as the Analyses view splits it: all compute here
  // (NeuronCore windows), the 2 µs gaps between the eager windows idle.
  const split = await page.locator('#compare-cards .card .busy-split').evaluateAll((els) => els.map((e) => Number(e.dataset.computeNs)));
  assert.deepEqual(split, [2355000, 403300, 375500]);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('opening a file while the comparison shows switches to that file', async () => {
  const page = await open();
  await waitForDemo(page);
  await page.click('#open-compare');
  await page.waitForSelector('#compare');
  await openFile(page, 'public/hta_triton_example.json.gz');
  await page.waitForSelector('#compare', { state: 'detached' });
  assert.equal(await page.locator('#open-compare').getAttribute('aria-pressed'), 'false');
  assert.equal(await page.locator('.tabs [role=tab][aria-selected=true]').count(), 1);
  assert.equal(await page.locator('#row-count').textContent(), `${cliRows('public/hta_triton_example.json.gz').length} rows`);
  assert.deepEqual(page.errors, []);
  await page.close();
});
