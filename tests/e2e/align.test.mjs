// End-to-end: the comparison view's "align by structure" — the demo's naive
// and fused RMSNorm lined up op by op in the worker, numbers equal to
// `tracelane diff`, the ranked differences and the aligned tree, a node
// selected on both timelines, the link that reopens it, and two unrelated
// traces said to align poorly.
// Run through scripts/test-all.sh (it builds dist/ first), or: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import {
  artifacts, axeViolations, cli, decodePng, env, fixtures, open, timelineView, useBrowser, waitForDemo, waitForPainted,
} from './helpers.mjs';

useBrowser();

const demo = (v) => path.join(fixtures, `torch-cpu/rmsnorm_${v}_cpu.pt.trace.json.gz`);

function cliDiff(args) {
  return JSON.parse(execFileSync(cli, ['diff', ...args, '--format', 'json']).toString());
}

/** Waits for an alignment's answer (or its error) and returns the summary's numbers. */
async function aligned(page) {
  await page.waitForFunction(() => document.querySelector('#align-result') || document.querySelector('#align-error'), null, { timeout: 30000 });
  const err = await page.locator('#align-error').textContent().catch(() => null);
  if (err !== null) throw new Error(`alignment failed: ${err}`);
  return page.locator('#align-summary').evaluate((e) => Object.fromEntries(Object.entries(e.dataset).map(([k, v]) => [k, Number(v)])));
}

const close = (a, b) => Math.abs(a - b) < 1e-6 * Math.max(1, Math.abs(b));

/**
 * Waits until both panes of the split show the node: each pane's
 * selected slice is its side's (`data-slice` of the node's details), each
 * pane has painted its current scene; returns the panes' selected names.
 */
async function splitShows(page) {
  const names = [];
  for (const side of ['A', 'B']) {
    const pane = `#timeline-${side.toLowerCase()}`;
    const slice = await page.locator(`#align-selected .side-${side}`).getAttribute('data-slice');
    if (slice !== null) {
      await page.waitForFunction(([pane, slice]) => document.querySelector(pane)?.dataset.selected === slice, [pane, slice], { timeout: 20000 });
    }
    await waitForPainted(page, pane);
    names.push(await page.locator(`#timeline-picked-${side.toLowerCase()}`).textContent());
  }
  return names;
}

/** How many distinct colours a pane's plot shows (its slices drawn: more than the background). */
async function colours(page, pane) {
  await waitForPainted(page, pane);
  const png = decodePng(await page.locator(`${pane} .plot-layers`).screenshot());
  const seen = new Set();
  for (let k = 0; k < png.pixels.length; k += png.channels) seen.add(png.pixels[k] << 16 | png.pixels[k + 1] << 8 | png.pixels[k + 2]);
  return seen.size;
}

/** Makes the comparison's variants these (file name, region value) pairs, the first the baseline. */
async function setVariants(page, variants) {
  while (await page.locator('.spec-row').count() > 0) await page.locator('.remove-variant').first().click();
  for (const [file, region] of variants) {
    await page.click('#add-variant');
    const row = page.locator('.spec-row').last();
    await row.locator('.spec-trace').selectOption({ label: file });
    await row.locator('.spec-region').selectOption(region);
  }
}

const neuron = path.join(fixtures, 'neuron-provisional/torchneuron_rmsnorm.json');

test('align: the demo\'s naive against fused RMSNorm on TorchNeuron, as `tracelane diff` reports it, the node chosen kept in the link', async () => {
  const page = await open();
  await waitForDemo(page, true);
  await page.click('#compare-align');
  const s = await aligned(page);
  const want = cliDiff([neuron, neuron, '--region', 'rmsnorm_naive', '--region', 'rmsnorm_fused']);
  assert.equal(want.metric, 'device');
  assert.ok(close(s.totalAUs, want.total_us[0]) && close(s.totalBUs, want.total_us[1]), JSON.stringify(s));
  assert.ok(close(s.deltaUs, want.delta_us) && close(s.explainedUs, want.explained_us));
  assert.equal(s.shareA, want.aligned_share[0]);
  // The worker said how far it had come before it answered.
  assert.ok(Number(await page.locator('#align-result').getAttribute('data-progress-heard')) >= 2);
  // The ranked differences first, as the CLI ranks them.
  const ranked = await page.locator('#align-ranked li').evaluateAll((els) => els.map((e) => ({
    id: e.dataset.id, delta: Number(e.dataset.deltaUs), path: e.querySelector('.align-path').textContent,
  })));
  assert.equal(ranked.length, want.nodes.length);
  for (const [k, n] of want.nodes.entries()) {
    assert.equal(ranked[k].path, n.path);
    assert.ok(close(ranked[k].delta, n.delta_us));
    assert.equal(ranked[k].id, n.id === null ? undefined : String(n.id));
  }
  const top = want.nodes[0];
  assert.deepEqual(top.b_ops, ['aten::rms_norm']);
  // The tree: the two regions at its root, both sides' device time; the top node is a row.
  const root = page.locator('#align-tree .align-row').first();
  assert.equal(await root.getAttribute('data-depth'), '0');
  assert.match(await root.textContent(), /rmsnorm_naive ↔ rmsnorm_fused/);
  assert.ok(close(Number(await root.getAttribute('data-a-us')), want.total_us[0]));
  await page.locator('#align-ranked li').first().locator('button.align-node').click();
  const row = page.locator(`#align-tree .align-row[data-id="${top.id}"]`);
  await page.waitForFunction((id) => document.querySelector(`#align-tree .align-row[data-id="${id}"]`)?.getAttribute('aria-selected') === 'true', top.id);
  assert.match(await row.textContent(), /↔ aten::rms_norm/);
  await page.waitForSelector(`#align-selected .align-selected[data-id="${top.id}"]`);
  // Both sides are one trace: each pane is its own timeline, on its own slice.
  const [pickedA, pickedB] = await splitShows(page);
  assert.match(pickedA, /^selected: /);
  assert.match(pickedB, /^selected: aten::rms_norm/);
  assert.notEqual(await page.locator('#timeline-a').getAttribute('data-selected'), await page.locator('#timeline-b').getAttribute('data-selected'));
  await page.waitForFunction((id) => location.hash.includes('align=1') && location.hash.includes(`anode=${id}`), top.id, { timeout: 20000 });
  const link = await page.evaluate(() => location.hash);
  await page.screenshot({ path: path.join(artifacts, 'align.png'), fullPage: true });
  assert.deepEqual(page.errors, []);
  await page.close();

  // The link reopens the alignment with the node chosen, in a fresh context.
  const context = await env.browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const again = await context.newPage();
  const errors = [];
  again.on('pageerror', (e) => errors.push(String(e)));
  await again.goto(env.base + link);
  await aligned(again);
  await again.waitForFunction((id) => document.querySelector(`#align-tree .align-row[data-id="${id}"]`)?.getAttribute('aria-selected') === 'true', top.id, { timeout: 30000 });
  await again.waitForSelector(`#align-selected .align-selected[data-id="${top.id}"]`);
  await splitShows(again);
  assert.deepEqual(errors, []);
  await context.close();
});

test('align: two traces (CPU naive against fused RMSNorm): the node chosen is selected on both timelines', async () => {
  const page = await open();
  await waitForDemo(page, true);
  await page.click('#compare-align');
  await setVariants(page, [
    ['rmsnorm_naive_cpu.pt.trace.json.gz', 'name:rmsnorm_naive'],
    ['rmsnorm_fused_cpu.pt.trace.json.gz', 'name:rmsnorm_fused'],
  ]);
  await page.waitForFunction(() => {
    const dl = document.querySelector('#align-summary dl')?.textContent || '';
    return dl.includes('rmsnorm_naive_cpu.pt.trace.json.gz · rmsnorm_naive') && dl.includes('rmsnorm_fused_cpu.pt.trace.json.gz · rmsnorm_fused');
  }, null, { timeout: 30000 });
  const s = await aligned(page);
  const want = cliDiff([demo('naive'), demo('fused'), '--region', 'rmsnorm_naive', '--region', 'rmsnorm_fused']);
  assert.ok(close(s.deltaUs, want.delta_us), `${s.deltaUs} vs ${want.delta_us}`);
  const top = want.nodes[0];
  await page.locator(`#align-ranked li[data-id="${top.id}"] button.align-node`).click();
  await page.waitForSelector(`#align-selected .align-selected[data-id="${top.id}"]`);
  // The split: A's pane on the node's first op, B's on its one op, both painted.
  const [pickedA, pickedB] = await splitShows(page);
  assert.match(pickedA, /^selected: aten::pow /);
  assert.match(pickedB, /^selected: aten::rms_norm /);
  for (const pane of ['#timeline-a', '#timeline-b']) assert.ok(await colours(page, pane) > 2, `${pane} drew no slices`);
  assert.deepEqual(await axeViolations(page, 'aligned, both timelines'), []);
  // At one scale, linked: a zoom on A moves B by as much around its own node.
  const [a0, b0] = [await timelineView(page, '#timeline-a'), await timelineView(page, '#timeline-b')];
  assert.equal(a0.nsPerPx, b0.nsPerPx);
  await page.locator('#timeline-a canvas.overlay').scrollIntoViewIfNeeded();
  let boxA = await page.locator('#timeline-a canvas.overlay').boundingBox();
  await page.mouse.move(boxA.x + boxA.width / 3, boxA.y + 9);
  await page.mouse.wheel(0, -200);
  await page.waitForFunction((was) => Number(document.querySelector('#timeline-b').dataset.view.split(' ')[1]) !== was, b0.nsPerPx);
  const [a1, b1] = [await timelineView(page, '#timeline-a'), await timelineView(page, '#timeline-b')];
  assert.equal(a1.nsPerPx, b1.nsPerPx);
  assert.ok(a1.nsPerPx < a0.nsPerPx);
  assert.equal(a1.start - a0.start, b1.start - b0.start);
  await waitForPainted(page, '#timeline-a');
  await waitForPainted(page, '#timeline-b');
  // Unlinked: B stays where it is.
  await page.uncheck('#split-linked');
  await page.locator('#timeline-a canvas.overlay').scrollIntoViewIfNeeded();
  boxA = await page.locator('#timeline-a canvas.overlay').boundingBox();
  await page.mouse.move(boxA.x + boxA.width / 3, boxA.y + 9);
  await page.mouse.wheel(0, -200);
  await page.waitForFunction((was) => Number(document.querySelector('#timeline-a').dataset.view.split(' ')[1]) !== was, a1.nsPerPx);
  assert.deepEqual(await timelineView(page, '#timeline-b'), b1);
  await page.screenshot({ path: path.join(artifacts, 'align-split.png'), fullPage: true });
  // A's timeline: the first op of A's side of the node; B's: its one op.
  for (const [side, name, file] of [['A', 'aten::pow', 'naive'], ['B', 'aten::rms_norm', 'fused']]) {
    if (side === 'B') {
      await page.click('#open-compare');
      await page.waitForSelector(`#align-selected .align-selected[data-id="${top.id}"]`, { timeout: 30000 });
    }
    await page.click(`#align-selected .open-${side}`);
    await page.waitForFunction((name) => document.querySelector('#timeline-picked h2')?.textContent === name, name, { timeout: 20000 });
    assert.equal(await page.locator('.file-name').textContent(), `rmsnorm_${file}_cpu.pt.trace.json.gz`);
  }
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('align: the candidate can be changed; two unrelated traces are said to align poorly, not paired op for op', async () => {
  const page = await open();
  await waitForDemo(page, true);
  await page.click('#compare-align');
  await aligned(page);
  // The third variant (compiled) against the baseline.
  await page.selectOption('#align-candidate', '2');
  await page.waitForFunction(() => document.querySelector('#align-summary dl')?.textContent.includes('rmsnorm_compiled'), null, { timeout: 30000 });
  const compiled = await aligned(page);
  const wantCompiled = cliDiff([neuron, neuron, '--region', 'rmsnorm_naive', '--region', 'rmsnorm_compiled']);
  assert.ok(close(compiled.deltaUs, wantCompiled.delta_us));
  // The CPU RMSNorm against the MI250 training step: whole traces.
  await setVariants(page, [['rmsnorm_naive_cpu.pt.trace.json.gz', 'whole'], ['hta_amd_mi250_rocm.json.gz', 'whole']]);
  // The answer for these two (an earlier pair's, while the rows were being
  // set, is replaced: the summary names the pair its numbers are of).
  await page.waitForFunction(() => {
    const dl = document.querySelector('#align-summary dl')?.textContent || '';
    return dl.includes('rmsnorm_naive_cpu.pt.trace.json.gz · whole trace') && dl.includes('hta_amd_mi250_rocm.json.gz · whole trace');
  }, null, { timeout: 30000 });
  await page.waitForSelector('#align-poor', { timeout: 30000 });
  const s = await aligned(page);
  const want = cliDiff([demo('naive'), path.join(fixtures, 'public/hta_amd_mi250_rocm.json.gz')]);
  assert.equal(s.shareA, want.aligned_share[0]);
  assert.equal(s.shareB, want.aligned_share[1]);
  assert.match(await page.locator('#align-poor').textContent(), /these traces align poorly: only 0% of A's and 0% of B's time/);
  // Back to side by side: the cards again.
  await page.click('#compare-side-by-side');
  await page.waitForFunction(() => document.querySelectorAll('#compare-cards .card').length === 2, null, { timeout: 20000 });
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('align: the same model on an H100 and an MI300X (TraceLens\' public traces): the attention kernel first, each side on its own roofline as `tracelane diff --roofline` places it', async () => {
  const page = await open();
  await waitForDemo(page, true);
  const files = ['h100', 'mi300'].map((g) => path.join(fixtures, `public/tracelens_pairs/${g}_gaunernst_bert-small-uncased__1016001.json.gz`));
  // Opened together, the two are the comparison's variants, whole.
  await page.setInputFiles('#file-input', files);
  await page.waitForFunction(() => document.querySelectorAll('.tabs [role=tab]').length === 7 && !document.querySelector('.status.loading')
    && document.querySelectorAll('#compare-cards .card').length === 2, null, { timeout: 60000 });
  await page.click('#compare-align');
  const s = await aligned(page);
  const want = cliDiff([...files, '--roofline']);
  assert.ok(close(s.totalAUs, want.total_us[0]) && close(s.deltaUs, want.delta_us), JSON.stringify(s));
  const top = await page.locator('#align-ranked li').first().locator('.align-path').textContent();
  assert.equal(top, want.nodes[0].path);
  assert.match(top, /aten::_flash_attention_forward$/);
  await page.waitForSelector('#align-roofline[data-placed="1"]', { timeout: 30000 });
  const r = page.locator('#align-roofline');
  assert.equal(Number(await r.getAttribute('data-a-achieved')), want.roofline[0].point.achieved_flops_per_s);
  assert.equal(Number(await r.getAttribute('data-b-achieved')), want.roofline[1].point.achieved_flops_per_s);
  const text = await r.textContent();
  assert.match(text, /NVIDIA H100 80GB HBM3/);
  assert.match(text, /AMD Instinct MI300X VF/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('align: one training step in PyTorch against the same step in JAX (an XPlane file): gradient products with gradient dots, as `tracelane diff` pairs them', async () => {
  const page = await open();
  await waitForDemo(page, true);
  const files = [
    path.join(fixtures, 'torch-diff/norm_mlp_train.pt.trace.json.gz'),
    path.join(fixtures, 'torch-diff/norm_mlp_train.jax.xplane.pb'),
  ];
  await page.setInputFiles('#file-input', files);
  await page.waitForFunction(() => document.querySelectorAll('.tabs [role=tab]').length === 7 && !document.querySelector('.status.loading')
    && document.querySelectorAll('#compare-cards .card').length === 2, null, { timeout: 60000 });
  await page.click('#compare-align');
  const s = await aligned(page);
  const want = cliDiff(files);
  assert.equal(want.metric, 'host');
  assert.ok(close(s.totalAUs, want.total_us[0]) && close(s.deltaUs, want.delta_us), JSON.stringify(s));
  assert.equal(s.shareA, want.aligned_share[0]);
  assert.equal(s.shareB, want.aligned_share[1]);
  const top = await page.locator('#align-ranked li').first().locator('.align-path').textContent();
  assert.equal(top, want.nodes[0].path);
  assert.match(top, /aten::mm ↔ .*transpose\(jvp\(\)\)\/dot_general$/);
  assert.equal(await page.locator('#align-poor').count(), 0);
  assert.deepEqual(page.errors, []);
  await page.close();
});
