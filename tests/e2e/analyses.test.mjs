// End-to-end: the Analyses view (where device time goes), against the CLI's
// answers for the same file in both modes.
// Run through scripts/test-all.sh (it builds dist/ first), or: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import {
  artifacts, cli, decodePng, fixtures, open, openFile, useBrowser, waitForDemo, waitForPainted,
} from './helpers.mjs';

useBrowser();

/** Waits until the view has answered its latest question (both modes). */
async function waitForAnalyses(page) {
  await page.waitForFunction(() => {
    const a = document.querySelector('#analyses');
    return a && a.dataset.asked !== '0' && a.dataset.answered === a.dataset.asked;
  }, null, { timeout: 30000 });
}

const analyze = (rel, ...args) => JSON.parse(execFileSync(cli, ['analyze', path.join(fixtures, rel), '--format', 'json', ...args], { maxBuffer: 1 << 28 }).toString());

test('analyses: the NCCL trace shows tracelane\'s and HTA\'s breakdowns as the CLI computes them, and a gap opens on the timeline', async () => {
  const rel = 'public/hta_nccl_2rank_rank0.json.gz';
  const exact = analyze(rel);
  const hta = analyze(rel, '--hta');
  const page = await open();
  await waitForDemo(page);
  await openFile(page, rel);
  await page.click('#show-analyses');
  await waitForAnalyses(page);
  const dev = await page.locator('.device-breakdown').first().evaluate((e) => ({ ...e.dataset }));
  assert.equal(Number(dev.spanNs), exact.devices[0].span_ns);
  assert.equal(Number(dev.idleNs), exact.devices[0].idle_ns);
  assert.equal(Number(dev.computeNs), exact.devices[0].compute_ns);
  // Both modes side by side: HTA's span (its last step dropped) in the second column.
  const spanRow = await page.locator('#both-modes tbody tr').first().locator('td').allTextContents();
  assert.equal(spanRow[1], `${(hta.temporal_breakdown.kernel_span_us / 1000).toFixed(3)} ms`);
  assert.match(await page.locator('.why-differ').textContent(), /HTA leaves out ProfilerStep#\d+ and everything after it/);
  // The detail tables follow the toggle: tracelane's kernel types, then HTA's.
  const types = async () => page.locator('#kernel-types tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.type));
  assert.deepEqual(await types(), exact.kernel_types.map((k) => k.kernel_type));
  await page.check('#hta-mode');
  await page.waitForFunction((n) => document.querySelectorAll('#kernel-types tbody tr').length === n, hta.kernel_types.length);
  assert.deepEqual((await types()).sort(), hta.kernel_types.map((k) => k.kernel_type).sort());
  await page.uncheck('#hta-mode');
  // A step as the scope: a new question, answered.
  const asked = Number(await page.locator('#analyses').getAttribute('data-asked'));
  const step = await page.locator('#analyses-scope option', { hasText: 'ProfilerStep#' }).first().getAttribute('value');
  await page.selectOption('#analyses-scope', step);
  await page.waitForFunction((k) => Number(document.querySelector('#analyses').dataset.asked) > k, asked);
  await waitForAnalyses(page);
  const stepSpan = Number(await page.locator('.device-breakdown').first().getAttribute('data-span-ns'));
  assert.ok(stepSpan > 0 && stepSpan < exact.devices[0].span_ns, `${stepSpan}`);
  // Data movement and warm-up as the CLI reports them.
  const kinds = await page.locator('.dm-kinds tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.kind));
  const stepExact = JSON.parse(execFileSync(cli, ['analyze', path.join(fixtures, rel), '--format', 'json', '--scope', `region:${step.slice(5)}`], { maxBuffer: 1 << 28 }).toString());
  assert.deepEqual(kinds, stepExact.data_movement.by_kind.map((k) => k.kind));
  await page.screenshot({ path: path.join(artifacts, 'analyses.png'), fullPage: true });
  // The longest gap jumps to the timeline (once it has the analyses'
  // counter lanes) and selects the kernel after it.
  await page.waitForSelector('#analyses[data-counter-lanes="true"]', { timeout: 30000 });
  await page.locator('#longest-gaps button').first().click();
  await page.waitForSelector('#timeline canvas.overlay');
  await waitForPainted(page);
  await page.waitForSelector('#timeline-picked', { timeout: 10000 });
  // The analyses' counters are lanes of the timeline now.
  const lanes = await page.locator('.lane-label').allTextContents();
  for (const lane of ['queue length · stream 7', 'copy bandwidth (GB/s)']) {
    assert.ok(lanes.some((l) => l.includes(lane)), lanes.join(' | '));
  }
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('analyses: the TorchNeuron critical path equals the CLI\'s and is drawn on the timeline', async () => {
  const rel = 'neuron-provisional/torchneuron_rmsnorm.json';
  const exact = analyze(rel);
  const page = await open();
  await waitForDemo(page);
  await openFile(page, rel);
  await page.click('#show-analyses');
  await waitForAnalyses(page);
  const cp = await page.locator('#critical-path').evaluate((e) => ({ ...e.dataset }));
  assert.equal(Number(cp.lengthNs), exact.critical_path.length_ns);
  assert.equal(Number(cp.edges), exact.critical_path.edges.length);
  const bounds = await page.locator('#cp-bounds tr').evaluateAll((rows) => rows.map((r) => r.dataset.bound));
  assert.deepEqual(bounds, exact.critical_path.by_bound.filter(([, ns]) => ns !== 0).map(([b]) => b));
  // Drawn on the timeline in its own colour (#e64980), counted over the
  // plot once the scene with the path is painted, and gone once cleared.
  const pathPixels = async () => {
    await waitForPainted(page);
    const box = await page.locator('#timeline canvas.overlay').boundingBox();
    const png = decodePng(await page.screenshot({ clip: { x: box.x, y: box.y, width: box.width, height: Math.min(box.height, 600) } }));
    let n = 0;
    for (let k = 0; k < png.pixels.length; k += png.channels) {
      const [r, g, b] = [png.pixels[k], png.pixels[k + 1], png.pixels[k + 2]];
      if (Math.abs(r - 230) < 14 && Math.abs(g - 73) < 14 && Math.abs(b - 128) < 14) n += 1;
    }
    return n;
  };
  await page.click('#show-path');
  await page.waitForSelector('#clear-path');
  const shown = await pathPixels();
  assert.ok(shown > 50, `path pixels: ${shown}`);
  await page.screenshot({ path: path.join(artifacts, 'critical-path.png'), fullPage: false });
  // Clearing it repaints without.
  await page.click('#clear-path');
  await page.waitForSelector('#clear-path', { state: 'detached' });
  assert.equal(await pathPixels(), 0);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('analyses: a CPU-only trace says it has no device work; a compiled region\'s first call is flagged warm-up', async () => {
  const page = await open();
  await waitForDemo(page);
  await openFile(page, 'torch-cpu/rmsnorm_compiled_cpu.pt.trace.json.gz');
  await page.click('#show-analyses');
  await waitForAnalyses(page);
  assert.equal(await page.locator('.device-breakdown').count(), 0);
  assert.match(await page.locator('#both-modes').textContent(), /no device work/);
  const asked = Number(await page.locator('#analyses').getAttribute('data-asked'));
  await page.selectOption('#analyses-scope', 'name:rmsnorm_compiled');
  await page.waitForFunction((k) => Number(document.querySelector('#analyses').dataset.asked) > k, asked);
  await waitForAnalyses(page);
  const w = await page.locator('#warmup').evaluate((e) => ({ ...e.dataset }));
  assert.equal(Number(w.flagged), 1);
  assert.equal(await page.locator('#warmup .hbar.warm').count(), 1);
  assert.deepEqual(page.errors, []);
  await page.close();
});
