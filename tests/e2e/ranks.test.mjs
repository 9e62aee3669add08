// End-to-end: a distributed run opened as ranks — the pool of workers
// summarises each rank, the Ranks view names the same stragglers and the
// same collectives by skew as `tracelane ranks` for the same files.
// Run through scripts/test-all.sh (it builds dist/ first), or: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { artifacts, cli, fixtures, open, root, useBrowser, waitForDemo, waitForPainted } from './helpers.mjs';

useBrowser();

const ranksJson = (dir) => JSON.parse(execFileSync(cli, ['ranks', dir, '--format', 'json'], { maxBuffer: 1 << 28 }).toString());

/** Waits until every file is in and the report of `n` ranks is shown. */
async function waitForRanks(page, n) {
  await page.waitForFunction((n) => {
    const p = document.querySelector('#ranks-panel');
    return p && p.dataset.state === 'ready' && Number(p.dataset.summarised) === n;
  }, n, { timeout: 120000 });
}

async function checkAgainstCli(page, want) {
  const stragglers = await page.locator('#stragglers tbody tr').evaluateAll((rs) => rs.map((r) => ({ ...r.dataset })));
  assert.deepEqual(
    stragglers.map((s) => [Number(s.step), Number(s.rank), Number(s.blameNs)]),
    want.stragglers.map((s) => [s.step, s.rank, Math.round(s.blame_us * 1000)]),
  );
  const coll = await page.locator('#rank-collectives tbody tr').evaluateAll((rs) => rs.map((r) => ({ ...r.dataset })));
  const top = want.collectives.slice(0, coll.length);
  assert.equal(coll.length, Math.min(50, want.collectives.length));
  assert.deepEqual(
    coll.map((c) => [c.group, Number(c.seq), Number(c.lastRank), Number(c.skewNs)]),
    top.map((c) => [c.group, c.seq, c.last_rank, Math.round(c.skew_us * 1000)]),
  );
  // The run's findings (a persistent straggler), as the CLI gives them.
  const found = await page.locator('#rank-findings tbody tr').evaluateAll((rs) => rs.map((r) => [r.dataset.key, Number(r.dataset.gainNs)]));
  assert.deepEqual(found, want.findings.map((f) => [f.key, Math.round(f.gain_us * 1000)]));
  // The heat map: a cell per rank and step, the straggler's outlined.
  const cells = await page.locator('#heat-map td[data-step]').count();
  const steps = want.ranks.reduce((n, r) => n + r.steps.length, 0);
  assert.equal(cells, steps);
  for (const s of want.stragglers) {
    assert.equal(await page.locator(`#heat-map td.straggler[data-step="${s.step}"][data-rank="${s.rank}"]`).count(), 1);
  }
  // Wall times as the CLI computes them.
  for (const r of want.ranks) {
    for (const s of r.steps) {
      const ns = await page.locator(`#heat-map td[data-rank="${r.rank}"][data-step="${s.step}"]`).getAttribute('data-ns');
      assert.equal(Number(ns), Math.round(s.wall_us * 1000));
    }
  }
}

test('ranks: a generated NCCL run picked as files names the injected straggler, as the CLI does', async () => {
  const dir = path.join(fixtures, 'synth-ranks');
  const want = ranksJson(dir);
  const files = readdirSync(dir).filter((f) => f.endsWith('.json.gz')).map((f) => path.join(dir, f));
  const page = await open();
  await waitForDemo(page);
  // The ranks workers' module is fetched when a run is opened, not before.
  const ranksWasm = () => page.requests.filter((u) => /ranks_bg\.wasm$/.test(u)).length;
  assert.equal(ranksWasm(), 0, 'the ranks module is not part of the first download');
  await page.setInputFiles('#ranks-input', files);
  await waitForRanks(page, 4);
  assert.ok(ranksWasm() >= 1);
  await checkAgainstCli(page, want);
  // Another measure on the heat map: compute, the straggler's the largest.
  await page.locator('input[name="heat"][data-choice="compute"]').check();
  assert.equal(await page.locator('#heat-map').isVisible(), false);
  const compute = await page.locator('#heat-map-compute td[data-step="0"]').evaluateAll((cs) => cs.map((c) => [Number(c.dataset.rank), Number(c.dataset.ns)]));
  assert.equal(compute.reduce((a, b) => (b[1] > a[1] ? b : a))[0], 2);
  assert.ok(want.stragglers.every((s) => s.rank === 2));
  assert.deepEqual(want.findings.map((f) => f.key), ['straggler_rank:2']);
  assert.equal(await page.locator('#rank-bars tbody tr').count(), 4);
  await page.screenshot({ path: path.join(artifacts, 'ranks.png'), fullPage: true });
  // The demo traces stay open beside the run.
  await page.locator('.tabs button[role="tab"]').first().click();
  await page.waitForSelector('.file-name');
  await page.locator('#open-ranks').click();
  await waitForRanks(page, 4);
});

test('ranks: a real gloo run picked as a folder (its oracle files passed over) gives the CLI\'s report', async () => {
  const dir = path.join(fixtures, 'torch-gloo');
  const want = ranksJson(dir);
  const page = await open();
  await waitForDemo(page);
  await page.setInputFiles('#ranks-folder-input', dir);
  await waitForRanks(page, 4);
  await checkAgainstCli(page, want);
  assert.deepEqual(want.stragglers.map((s) => s.rank), [2, 2, 2]);
  assert.match(await page.locator('#ranks-panel').textContent(), /Passed over 8 files of the folder or archive that are not traces: gloo_rank0_cpu\.key_averages\.json/);
});

test('ranks: a .tar.gz and a .zip of rank traces open as the run they hold, as the CLI reads them', async () => {
  const out = mkdtempSync(path.join(os.tmpdir(), 'tracelane-set-'));
  try {
    const tgz = path.join(out, 'synth-run.tar.gz');
    execFileSync('tar', ['czf', tgz, '-C', fixtures, 'synth-ranks']);
    const zip = path.join(out, 'gloo-run.zip');
    execFileSync('python3', ['-c', 'import shutil,sys; shutil.make_archive(sys.argv[1], "zip", sys.argv[2], "torch-gloo")', zip.replace(/\.zip$/, ''), fixtures]);
    const page = await open();
    await waitForDemo(page);
    await page.setInputFiles('#ranks-input', tgz);
    await waitForRanks(page, 4);
    await checkAgainstCli(page, ranksJson(tgz));
    assert.deepEqual(ranksJson(tgz), ranksJson(path.join(fixtures, 'synth-ranks')));
    // Its README is passed over, and said.
    assert.match(await page.locator('#ranks-panel').textContent(), /Passed over 1 file of the folder or archive that are not traces: synth-ranks\/README\.md/);
    // The .zip dropped on the Ranks view replaces the run; its report is in
    // once the panel is ready and names the gloo set's oracle files.
    const bytes = [...readFileSync(zip)];
    const dt = await page.evaluateHandle((bytes) => {
      const d = new DataTransfer();
      d.items.add(new File([new Uint8Array(bytes)], 'gloo-run.zip'));
      return d;
    }, bytes);
    await page.dispatchEvent('.page', 'drop', { dataTransfer: dt });
    await page.waitForFunction(() => {
      const p = document.querySelector('#ranks-panel');
      return p?.dataset.state === 'ready' && p.textContent.includes('gloo_rank0_cpu.key_averages.json');
    }, null, { timeout: 120000 });
    assert.equal(await page.locator('#ranks-panel').getAttribute('data-summarised'), '4');
    await checkAgainstCli(page, ranksJson(zip));
    assert.equal(await page.locator('.file-name').count(), 0, 'the drop went to the Ranks view, not the trace tabs');
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test('ranks: a collective clicked opens its ranks\' timelines stacked, on the collective; clicked again, the same trace', async () => {
  const dir = path.join(fixtures, 'synth-ranks');
  const page = await open();
  await waitForDemo(page);
  await page.setInputFiles('#ranks-folder-input', dir);
  await waitForRanks(page, 4);
  const before = await page.locator('.tabs button[role="tab"]').count();
  const row = page.locator('#rank-collectives tbody tr').first();
  const data = await row.evaluate((r) => ({ ...r.dataset }));
  assert.equal(data.ranks, '0,1,2,3');
  await row.click();
  const name = 'synth-ranks · ranks 0, 1, 2, 3';
  await page.waitForFunction((name) => document.querySelector('.file-name')?.textContent === name
    && document.querySelector('#timeline')?.dataset.view, name, { timeout: 120000 });
  // Each rank's lanes, labelled with it, host lanes then device lanes.
  const groups = await page.locator('.lane-group').evaluateAll((bs) => bs.map((b) => b.title));
  for (const r of [0, 1, 2, 3]) {
    assert.ok(groups.some((g) => g.startsWith(`rank ${r} · `) && g.includes(' · device')), groups.join(' | '));
  }
  const firstDevice = groups.findIndex((g) => g.includes(' · device'));
  assert.ok(groups.slice(0, firstDevice).every((g) => !g.includes(' · device')));
  // The view fits the collective (first arrival → last end) with a quarter
  // of it either side.
  const [, nsPerPx, width] = (await page.locator('#timeline').getAttribute('data-view')).split(' ').map(Number);
  const span = Number(data.toNs) - Number(data.fromNs);
  assert.ok(Math.abs(nsPerPx * width - 1.5 * span) <= 0.01 * span + nsPerPx, `${nsPerPx * width} vs ${1.5 * span}`);
  assert.equal(await page.locator('.tabs button[role="tab"]').count(), before + 1);
  await waitForPainted(page);
  await page.screenshot({ path: path.join(artifacts, 'ranks-stacked.png'), fullPage: true });
  // Another collective of the same ranks: the same trace, on that one.
  await page.locator('#open-ranks').click();
  await waitForRanks(page, 4);
  const other = page.locator('#rank-collectives tbody tr').nth(1);
  const data2 = await other.evaluate((r) => ({ ...r.dataset }));
  const view1 = await page.evaluate(() => document.querySelector('#timeline')?.dataset.view ?? null);
  assert.equal(view1, null);
  await other.click();
  await page.waitForFunction(() => document.querySelector('#timeline')?.dataset.view, null, { timeout: 120000 });
  const [, nsPerPx2, width2] = (await page.locator('#timeline').getAttribute('data-view')).split(' ').map(Number);
  const span2 = Number(data2.toNs) - Number(data2.fromNs);
  assert.ok(Math.abs(nsPerPx2 * width2 - 1.5 * span2) <= 0.01 * span2 + nsPerPx2);
  assert.equal(await page.locator('.tabs button[role="tab"]').count(), before + 1);
  assert.deepEqual(page.errors, []);
});

test('ranks: a file that is not a trace fails on its own; the other ranks are reported', async () => {
  const dir = path.join(fixtures, 'synth-ranks');
  const files = ['rank0.pt.trace.json.gz', 'rank1.pt.trace.json.gz'].map((f) => path.join(dir, f));
  files.push(path.join(fixtures, 'edge/not_a_trace.json'));
  const page = await open();
  await waitForDemo(page);
  await page.setInputFiles('#ranks-input', files);
  await waitForRanks(page, 2);
  assert.match(await page.locator('#ranks-panel').textContent(), /Could not import not_a_trace\.json: not a trace/);
  assert.equal(await page.locator('#rank-bars tbody tr').count(), 2);
});

test('ranks: the Parquet download is the CLI export\'s layout, and DuckDB answers from it as tracelane ranks does', async () => {
  const py = path.join(root, 'target/duckdb-venv/bin/python');
  assert.ok(existsSync(py), 'DuckDB\'s venv is missing: run scripts/check-duckdb.sh first (scripts/test-all.sh does)');
  const dir = path.join(fixtures, 'synth-ranks');
  const page = await open();
  await waitForDemo(page);
  await page.setInputFiles('#ranks-folder-input', dir);
  await waitForRanks(page, 4);
  const [download] = await Promise.all([
    page.waitForEvent('download', { timeout: 120000 }),
    page.locator('#ranks-download-parquet').click(),
  ]);
  assert.equal(download.suggestedFilename(), 'synth-ranks.parquet.tar');
  const out = mkdtempSync(path.join(os.tmpdir(), 'tracelane-parquet-'));
  const tar = path.join(out, 'export.tar');
  await download.saveAs(tar);
  execFileSync('tar', ['-xf', tar, '-C', out]);
  const files = execFileSync('find', [path.join(out, 'synth-ranks'), '-name', '*.parquet']).toString().trim().split('\n')
    .map((f) => path.relative(path.join(out, 'synth-ranks'), f)).sort();
  const want = [];
  for (const t of ['breakdown', 'collectives', 'device_events', 'op_table', 'slices', 'steps']) {
    for (let r = 0; r < 4; r++) want.push(`${t}/rank=${r}/part-0.parquet`);
  }
  assert.deepEqual(files, want.sort());
  await page.waitForFunction(() => document.querySelector('#ranks-panel').dataset.export === 'done');
  const answer = JSON.parse(execFileSync(py, [path.join(root, 'tools/duckdb_ranks_check.py'), cli, path.join(out, 'synth-ranks'), dir]).toString());
  assert.deepEqual([answer.stragglers_equal, answer.top_collectives_equal], [true, true]);
  rmSync(out, { recursive: true, force: true });
});
