// End-to-end: the Summary view — the first view a trace opens on — against
// `tracelane insights --format json` for the same file and scope, and its
// evidence links selecting the events on the timeline.
// Run through scripts/test-all.sh (it builds dist/ first), or: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import {
  artifacts, axeViolations, cli, fixtures, open, openFile, useBrowser, waitForDemo, waitForPainted,
} from './helpers.mjs';

useBrowser();

const insights = (rel, ...args) => JSON.parse(execFileSync(cli, ['insights', path.join(fixtures, rel), '--format', 'json', ...args], { maxBuffer: 1 << 28 }).toString());

/** Waits until the Summary has answered its latest question. */
async function waitForSummary(page) {
  await page.waitForFunction(() => {
    const s = document.querySelector('#summary');
    return s && s.dataset.asked !== '0' && s.dataset.answered === s.dataset.asked && s.dataset.findings !== '';
  }, null, { timeout: 30000 });
}

/** The findings as the page shows them: rule, gain (ns) and title. */
async function shownFindings(page) {
  return page.locator('#findings li.finding').evaluateAll((items) => items.map((li) => ({
    rule: li.dataset.rule,
    gain_ns: Number(li.dataset.gainNs),
    title: li.querySelector('.finding-title').textContent,
  })));
}

function sameAsCli(shown, want) {
  assert.deepEqual(shown, want.findings.map((f) => ({ rule: f.rule, gain_ns: Math.round(f.gain_us * 1000), title: f.title })));
}

test('summary: a trace opens on it, with the CLI\'s findings in the CLI\'s order, and the pageable copies\' evidence selects a copy', async () => {
  const rel = 'public/hta_simple_add_a100.json.gz';
  const page = await open();
  await waitForDemo(page);
  await openFile(page, rel, null);
  assert.equal(await page.locator('#show-summary').getAttribute('aria-selected'), 'true');
  await waitForSummary(page);
  const want = insights(rel);
  sameAsCli(await shownFindings(page), want);
  const figures = await page.locator('#key-figures .figure').evaluateAll((fs) => fs.map((f) => f.dataset.figure));
  assert.deepEqual(figures, ['wall', 'device busy', 'launches', 'critical path']);
  // Every rule's verdict is listed.
  assert.equal(await page.locator('#rule-checks li').count(), want.checks.length);
  // The pageable copies: expand, read the evidence, show it on the timeline.
  const item = page.locator('#findings li.finding[data-rule="pageable_copy"]');
  await item.locator('summary').click();
  const evidence = await item.locator('table.evidence tr').evaluateAll((rows) => Object.fromEntries(rows.map((r) => [r.querySelector('th').textContent, r.querySelector('td').textContent])));
  assert.equal(evidence.copies, '16');
  assert.match(await item.locator('.action').textContent(), /pin_memory/);
  await page.screenshot({ path: path.join(artifacts, 'summary.png'), fullPage: true });
  const found = await axeViolations(page, 'summary');
  assert.deepEqual(found, []);
  await item.locator('button.show-evidence').click();
  await page.waitForSelector('#timeline canvas.overlay');
  await waitForPainted(page);
  await page.waitForSelector('#timeline-picked', { timeout: 10000 });
  assert.equal(await page.locator('#timeline-picked h2').textContent(), 'Memcpy HtoD (Pageable -> Device)');
  // The blocking syncs' evidence selects a sync call.
  await page.click('#show-summary');
  await waitForSummary(page);
  const sync = page.locator('#findings li.finding[data-rule="blocking_sync"]');
  await sync.locator('summary').click();
  await sync.locator('button.show-evidence').click();
  await page.waitForSelector('#timeline-picked', { timeout: 10000 });
  assert.match(await page.locator('#timeline-picked h2').textContent(), /^cuda(Stream|Device)Synchronize$/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('summary: the naive RMSNorm region yields the fusion finding with its six ops; the fused and compiled regions none', async () => {
  const rel = 'neuron-provisional/torchneuron_rmsnorm.json';
  const page = await open();
  await waitForDemo(page);
  await openFile(page, rel, null);
  await waitForSummary(page);
  sameAsCli(await shownFindings(page), insights(rel));
  for (const [region, rules] of [['rmsnorm_naive', ['fusion']], ['rmsnorm_fused', []], ['rmsnorm_compiled', []]]) {
    const asked = await page.locator('#summary').getAttribute('data-asked');
    await page.selectOption('#summary-scope', `name:${region}`);
    await page.waitForFunction((k) => document.querySelector('#summary').dataset.asked !== k, asked);
    await waitForSummary(page);
    const shown = await shownFindings(page);
    assert.deepEqual(shown.map((f) => f.rule), rules, region);
    sameAsCli(shown, insights(rel, '--scope', `region:${region}`));
    if (rules.length === 0) {
      assert.ok(await page.locator('#no-findings').isVisible());
    }
  }
  await page.selectOption('#summary-scope', 'name:rmsnorm_naive');
  await waitForSummary(page);
  const fusion = page.locator('#findings li.finding[data-rule="fusion"]');
  await fusion.locator('summary').click();
  assert.deepEqual(await fusion.locator('.ops code').allTextContents(),
    ['aten::mul', 'aten::mean', 'aten::add', 'aten::rsqrt', 'aten::mul', 'aten::mul']);
  assert.match(await fusion.locator('.action').textContent(), /torch\.nn\.functional\.rms_norm/);
  // The scope is the link's: a new page on the copied hash opens the same summary.
  await page.waitForFunction(() => location.hash.includes('view=summary') && location.hash.includes('rmsnorm_naive'));
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('summary: a Neuron device profile shows MFU / MBU and the Summary Viewer\'s findings', async () => {
  const dir = path.join(fixtures, 'neuron-provisional/device_profile');
  const page = await open();
  await waitForDemo(page);
  await page.setInputFiles('#file-input', readdirSync(dir).map((f) => path.join(dir, f)));
  await page.waitForFunction(() => document.querySelector('.file-name')?.textContent === 'device profile (11 tables)', null, { timeout: 60000 });
  assert.equal(await page.locator('#show-summary').getAttribute('aria-selected'), 'true');
  await waitForSummary(page);
  const want = JSON.parse(execFileSync(cli, ['insights', dir, '--format', 'json']).toString());
  sameAsCli(await shownFindings(page), want);
  assert.deepEqual((await shownFindings(page)).map((f) => f.rule).sort(), ['neuron_spill', 'neuron_transpose', 'neuron_utilization']);
  const mfu = await page.locator('#key-figures .figure[data-figure="MFU / MBU"] .value').textContent();
  assert.equal(mfu, `${want.key.mfu_pct.toFixed(1)} % / ${want.key.mbu_pct.toFixed(1)} %`);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('summary: memory findings — ranked by bytes, apart from the time findings — equal the CLI\'s', async () => {
  const rel = 'edge/memory_findings.json';
  const page = await open();
  await waitForDemo(page);
  await openFile(page, rel, null);
  await waitForSummary(page);
  const want = insights(rel);
  sameAsCli(await shownFindings(page), want);
  const shown = await page.locator('#memory-findings li.finding').evaluateAll((items) => items.map((li) => ({
    rule: li.dataset.rule,
    bytes: Number(li.dataset.bytes),
    title: li.querySelector('.finding-title').textContent,
  })));
  assert.deepEqual(shown, want.memory.map((f) => ({ rule: f.rule, bytes: f.bytes, title: f.title })));
  assert.deepEqual(shown.map((f) => f.rule), ['memory_segment_churn', 'memory_reserved_unused', 'memory_peak_holder']);
  assert.equal(await page.locator('#summary').getAttribute('data-memory-findings'), '3');
  const holder = page.locator('#memory-findings li.finding[data-rule="memory_peak_holder"]');
  await holder.locator('summary').click();
  assert.match(await holder.locator('.action').textContent(), /The peak falls while aten::matmul runs/);
  assert.equal(await holder.locator('.gain').textContent(), '608.00 MB');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('summary: automatic regions equal the CLI\'s, and a step\'s median and slowest open side by side in the comparison', async () => {
  const rel = 'torch-regions/module_steps_cpu.pt.trace.json.gz';
  const want = JSON.parse(execFileSync(cli, ['regions', path.join(fixtures, rel), '--format', 'json']).toString());
  const page = await open();
  await waitForDemo(page);
  await openFile(page, rel, null);
  await page.waitForFunction(() => document.querySelector('#regions')?.dataset.groups, null, { timeout: 30000 });
  const rows = await page.locator('#regions tr.region-group').evaluateAll((rs) => rs.map((r) => ({
    kind: r.dataset.kind, name: r.dataset.name, count: Number(r.dataset.count), outliers: Number(r.dataset.outliers),
  })));
  const kinds = { step: 'step', label: 'label', compiled: 'compiled', between_collectives: 'between collectives', module: 'module' };
  assert.deepEqual(rows, want.groups.map((g) => ({ kind: kinds[g.kind], name: g.name, count: g.occurrences.length, outliers: g.outliers })));
  assert.ok(rows.some((r) => r.kind === 'module' && r.name === 'Linear_3'));
  await page.screenshot({ path: path.join(artifacts, 'summary-regions.png'), fullPage: true });
  // Median vs slowest of the steps: two variants, the median step the baseline.
  const steps = want.groups.find((g) => g.kind === 'step').occurrences.map((o) => o.end_ns - o.start_ns).sort((a, b) => a - b);
  await page.locator('#regions tr.region-group[data-name="ProfilerStep"] button.compare-median-slowest').click();
  await page.waitForFunction(() => document.querySelectorAll('#compare-cards .card').length === 2, null, { timeout: 30000 });
  const walls = await page.locator('#compare-cards .card').evaluateAll((cs) => cs.map((c) => Number(c.dataset.wallMedianNs)));
  assert.deepEqual(walls, [steps[(steps.length - 1) >> 1], steps[steps.length - 1]]);
  // Three layers picked by hand.
  await page.locator('.tabs [role=tab]', { hasText: 'module_steps_cpu' }).click();
  await page.waitForFunction(() => document.querySelector('#regions')?.dataset.groups, null, { timeout: 30000 });
  const group = page.locator('#regions tr.region-group[data-name="Linear_0"]');
  await group.locator('summary').click();
  const picks = group.locator('input.region-pick');
  for (const k of [0, 1, 2]) await picks.nth(k).check();
  await page.click('#compare-picked');
  await page.waitForFunction(() => document.querySelectorAll('#compare-cards .card').length === 3, null, { timeout: 30000 });
  assert.deepEqual(page.errors, []);
  await page.close();
});
