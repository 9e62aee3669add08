// End-to-end: The timeline: lanes, paint (Canvas2D and WebGL2), picking, search, ranges, highlights.
// Run through scripts/test-all.sh (it builds dist/ first), or: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import zlib from 'node:zlib';
import path from 'node:path';
import {
  artifacts, cli, env, fixtures, open, openFile, openTimeline, pixelAt, plotPoint, selectRange, showTimeline, timelineView,
  useBrowser, waitForDemo, waitForPainted,
} from './helpers.mjs';

useBrowser();

test('timeline: lanes, ruler, keys, paint, click a kernel → its launch and op, the chain links', async () => {
  const rel = 'public/hta_triton_example.json.gz';
  const page = await open();
  await waitForDemo(page);
  await openTimeline(page, rel);
  // Headless Chromium's GL is software (SwiftShader): the app picks Canvas2D there.
  assert.equal(await page.locator('#timeline canvas.rects').getAttribute('data-renderer'), 'canvas2d');
  const labels = await page.locator('.lane-label').allTextContents();
  assert.ok(labels.some((l) => l.includes('stream 7')), labels.join(' | '));
  assert.ok(labels.some((l) => /thread 1670242/.test(l)), labels.join(' | '));
  const groups = await page.locator('button.lane-group').allTextContents();
  assert.ok(groups.length >= 2 && groups.some((g) => /device/.test(g)), groups.join(' | '));
  // Hover over the long ProfilerStep annotation: a tooltip names it.
  const stepRow = Number(await page.locator('.lane-label', { hasText: '3100453' }).getAttribute('data-row'));
  const info = JSON.parse(execFileSync(cli, ['info', path.join(fixtures, rel), '--format', 'json']).toString());
  const span = info.last_end_ns - info.first_start_ns;
  let pt = await plotPoint(page, span * 0.6, stepRow);
  await page.mouse.move(pt.x, pt.y);
  await page.waitForSelector('#timeline-tooltip', { timeout: 10000 });
  assert.match(await page.locator('#timeline-tooltip').textContent(), /ProfilerStep#1.*user_annotation.*self/);
  // The slice is painted: the annotation colour (#9c755f) under the pointer's row.
  const colour = await pixelAt(page, pt.x + 40, pt.y);
  assert.ok(Math.abs(colour[0] - 0x9c) < 24 && Math.abs(colour[1] - 0x75) < 24 && Math.abs(colour[2] - 0x5f) < 24, `${colour}`);
  const ticks = await page.locator('#timeline-ruler .tick').allTextContents();
  assert.ok(ticks.length >= 3 && ticks.every((t) => / (ns|µs|ms|s)$/.test(t)), ticks.join(' | '));
  const before = await page.locator('#timeline-range').textContent();
  await page.focus('#timeline');
  await page.keyboard.press('w');
  await page.keyboard.press('d');
  assert.notEqual(await page.locator('#timeline-range').textContent(), before);
  assert.notDeepEqual(await page.locator('#timeline-ruler .tick').allTextContents(), ticks);
  await page.keyboard.press('0');
  assert.equal(await page.locator('#timeline-range').textContent(), before);
  // Click the kernel: where it starts, on the stream's row.
  const events = JSON.parse(execFileSync('gzip', ['-dc', path.join(fixtures, rel)]).toString()).traceEvents;
  const kernel = events.find((e) => e.cat === 'kernel');
  const kernelRel = Math.round(kernel.ts * 1000) - info.first_start_ns;
  const streamRow = Number(await page.locator('.lane-label', { hasText: 'stream 7' }).getAttribute('data-row'));
  pt = await plotPoint(page, kernelRel, streamRow);
  await page.mouse.click(pt.x + 1, pt.y);
  await page.waitForSelector('#timeline-picked h2', { timeout: 10000 });
  assert.equal(await page.locator('#timeline-picked h2').textContent(), 'triton_poi_fused_add_cos_sin_0');
  assert.match(await page.locator('#timeline-picked').textContent(), /Launched by cuLaunchKernel/);
  assert.equal(await page.locator('#timeline-picked .picked-op').textContent(), 'triton_poi_fused_add_cos_sin_0');
  // Its dependency chain: op → launch → kernel, with the launch delay.
  const chain = await page.locator('#timeline-chain li').allTextContents();
  assert.equal(chain.length, 3, chain.join(' | '));
  assert.match(chain[0], /^op/);
  assert.match(chain[1], /^runtime\s*cuLaunchKernel/);
  assert.match(chain[2], /^device.*launch delay .* \(queued /);
  assert.match(await page.locator('#timeline-picked').textContent(), /grid|stream/);
  await page.screenshot({ path: path.join(artifacts, 'timeline.png'), fullPage: true });
  // A chain link selects the launch and brings it into view.
  await page.click('#timeline-chain a:text("cuLaunchKernel")');
  await page.waitForFunction(() => document.querySelector('#timeline-picked h2')?.textContent === 'cuLaunchKernel', null, { timeout: 10000 });
  // F fits the selected slice: the visible span shrinks to about it.
  await page.focus('#timeline');
  await page.keyboard.press('f');
  assert.ok((await timelineView(page)).nsPerPx * (await timelineView(page)).width < span / 10);
  await page.keyboard.press('0');
  assert.deepEqual(page.errors, []);
  await page.close();
});

/** Opens `file` (the HTA example, plain or inside an archive) and checks a
 * kernel's and its op's details show their args (`opArgs` in the op's). */
async function checkDetailsArgs(file, plain, opArgs) {
  const page = await open();
  await waitForDemo(page);
  await page.setInputFiles('#file-input', file);
  const name = path.basename(file);
  await page.waitForFunction((name) => document.querySelector('.file-name')?.textContent === name, name, { timeout: 60000 });
  await showTimeline(page);
  const info = JSON.parse(execFileSync(cli, ['info', plain, '--format', 'json']).toString());
  const events = JSON.parse(readFileSync(plain, 'utf8')).traceEvents;
  const kernel = events.find((e) => e.cat === 'kernel');
  const streamRow = Number(await page.locator('.lane-label', { hasText: 'stream 7' }).getAttribute('data-row'));
  const pt = await plotPoint(page, Math.round(kernel.ts * 1000) - info.first_start_ns, streamRow);
  await page.mouse.click(pt.x + 1, pt.y);
  await page.waitForSelector('#timeline-picked h2', { timeout: 10000 });
  assert.equal(await page.locator('#timeline-picked h2').textContent(), 'triton_poi_fused_add_cos_sin_0');
  const details = await page.locator('#timeline-picked').textContent();
  assert.match(details, /registers per thread/);
  assert.match(details, /warps per SM/);
  // Its op's args too.
  await page.click('#timeline-chain a:text("triton_poi_fused_add_cos_sin_0") >> nth=0');
  await page.waitForFunction((want) => new RegExp(want).test(document.querySelector('#timeline-picked')?.textContent ?? ''), opArgs.source, { timeout: 10000 });
  assert.deepEqual(page.errors, []);
  await page.close();
}

test('plain JSON: the details show args read back from the file (kernel and op)', async () => {
  // The worker keeps no args text for a plain-JSON file: it reads an event's
  // args from the file when the event is selected.
  const plain = path.join(artifacts, 'hta_triton_example.json');
  writeFileSync(plain, zlib.gunzipSync(readFileSync(path.join(fixtures, 'public/hta_triton_example.json.gz'))));
  // All of them, not only the parsed ones.
  await checkDetailsArgs(plain, plain, /Record function id/);
});

test('a .zip of one trace opens as that trace, its details\' args those of the trace inside (not bytes of the zip)', async () => {
  const plain = path.join(artifacts, 'hta_triton_example.json');
  writeFileSync(plain, zlib.gunzipSync(readFileSync(path.join(fixtures, 'public/hta_triton_example.json.gz'))));
  const zip = path.join(artifacts, `one-trace-${process.pid}.zip`);
  execFileSync('python3', ['-c', `
import sys, zipfile
with zipfile.ZipFile(sys.argv[2], 'w', zipfile.ZIP_DEFLATED) as z:
    z.write(sys.argv[1], 'trace/hta_triton_example.json')
`, plain, zip]);
  // The args kept in the model (as for a .json.gz), with their values.
  await checkDetailsArgs(zip, plain, /Input Dims\[\[10,10\],\[10,10\],\[10,10\],\[\]\]Input type/);
});

test('timeline (WebGL2 forced): search steps through matches; Shift+drag selects a range with its op table; groups collapse', async () => {
  const rel = 'public/hta_triton_example.json.gz';
  const page = await open(`${env.base}?renderer=webgl2`);
  await waitForDemo(page);
  await openTimeline(page, rel);
  await page.waitForFunction(() => document.querySelector('#timeline canvas.rects')?.getAttribute('data-renderer') === 'webgl2', null, { timeout: 10000 });
  {
    // WebGL2 paints too: the ProfilerStep annotation's colour on its row.
    const stepRow = Number(await page.locator('.lane-label', { hasText: '3100453' }).getAttribute('data-row'));
    const info = JSON.parse(execFileSync(cli, ['info', path.join(fixtures, rel), '--format', 'json']).toString());
    const pt = await plotPoint(page, (info.last_end_ns - info.first_start_ns) * 0.6, stepRow);
    const colour = await pixelAt(page, pt.x, pt.y);
    assert.ok(Math.abs(colour[0] - 0x9c) < 24 && Math.abs(colour[1] - 0x75) < 24 && Math.abs(colour[2] - 0x5f) < 24, `${colour}`);
  }
  const events = JSON.parse(execFileSync('gzip', ['-dc', path.join(fixtures, rel)]).toString()).traceEvents;
  const matches = events.filter((e) => e.ph === 'X' && /triton_poi/i.test(e.name)).length;
  await page.fill('#timeline-search', 'TRITON_POI');
  // Each wait is for the answer to the last question asked (the count can
  // read the same before it: with two matches, "2 / 2" twice).
  const answered = (text) => page.waitForFunction((text) => {
    const c = document.querySelector('#search-count');
    return c && c.dataset.asked !== '' && c.dataset.asked === c.dataset.answered && c.textContent === text;
  }, text, { timeout: 10000 });
  await page.press('#timeline-search', 'Enter');
  await answered(`1 / ${matches}`);
  await page.press('#timeline-search', 'Enter');
  await answered(`2 / ${matches}`);
  await page.press('#timeline-search', 'Shift+Enter');
  await page.press('#timeline-search', 'Shift+Enter');
  await answered(`${matches} / ${matches}`);
  assert.match(await page.locator('#timeline-picked h2').textContent(), /triton_poi/);
  await page.fill('#timeline-search', '');
  await page.keyboard.press('Escape');
  // Shift+drag across nearly the whole plot (this trace's events sit early on).
  await page.focus('#timeline');
  await page.keyboard.press('0');
  const v = await timelineView(page);
  await selectRange(page, 0.01, 0.97);
  const length = await page.locator('#ruler-selection').textContent();
  assert.match(length, / (ns|µs|ms|s)$/);
  assert.match(await page.locator('#range-table h2').textContent(), /Op table of/);
  const rangeRows = await page.locator('#range-table .tr').allTextContents();
  assert.ok(rangeRows.some((r) => r.includes('cuLaunchKernel')), rangeRows.join(' | '));
  await page.screenshot({ path: path.join(artifacts, 'timeline-range.png'), fullPage: true });
  // F fits the range.
  await page.focus('#timeline');
  await page.keyboard.press('f');
  const fitted = await timelineView(page);
  assert.ok(Math.abs(fitted.nsPerPx - v.nsPerPx * 0.96) / v.nsPerPx < 0.02, `${fitted.nsPerPx} vs ${v.nsPerPx * 0.96}`);
  // Collapse the device group: its stream lanes go; expand: they come back.
  const device = page.locator('button.lane-group', { hasText: 'device' }).first();
  await device.click();
  assert.equal(await page.locator('.lane-label', { hasText: 'stream 7' }).count(), 0);
  assert.equal(await device.getAttribute('aria-expanded'), 'false');
  await device.click();
  assert.equal(await page.locator('.lane-label', { hasText: 'stream 7' }).count(), 1);
  // Colour by name repaints without errors.
  await page.check('#colour-by-name');
  await waitForPainted(page);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('timeline: an op-table row highlights its occurrences; counters and instants get lanes', async () => {
  const page = await open();
  await waitForDemo(page);
  await openFile(page, 'public/hta_triton_example.json.gz');
  await page.locator('.tr', { hasText: 'cuLaunchKernel' }).first().click();
  await page.click('#show-timeline');
  await page.waitForSelector('#timeline canvas.overlay');
  await page.waitForFunction(() => /highlighting “cuLaunchKernel”/.test(document.querySelector('#search-count')?.textContent ?? ''), null, { timeout: 10000 });
  await page.click('#clear-highlight');
  assert.equal(await page.locator('#search-count').textContent(), '');
  // A trace with counters and [memory] instants.
  await openTimeline(page, 'edge/counters.json');
  const counters = await page.locator('.lane-label.counter').allTextContents();
  assert.deepEqual(counters.sort(), ['bandwidth (peak 3.5)', 'memory.allocated (peak 10)', 'memory.reserved (peak 20)'].sort());
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('timeline: a resized window re-lays the plot out at the new width, showing the same span', async () => {
  const page = await open();
  await waitForDemo(page);
  await showTimeline(page);
  const before = await timelineView(page);
  await page.setViewportSize({ width: 900, height: 1000 });
  await page.waitForFunction((w) => Number(document.querySelector('#timeline')?.dataset.view.split(' ')[2]) < w, before.width);
  await waitForPainted(page);
  const after = await timelineView(page);
  assert.ok(after.width < before.width - 400, `${after.width} vs ${before.width}`);
  assert.equal(after.start, before.start);
  assert.ok(Math.abs(after.nsPerPx * after.width - before.nsPerPx * before.width) <= before.nsPerPx, 'the same span of time');
  // The canvases and the ruler take the new width.
  const box = await page.locator('#timeline canvas.rects').boundingBox();
  assert.ok(Math.abs(box.width - after.width) <= 1, `${box.width} vs ${after.width}`);
  assert.ok(Math.abs((await page.locator('#timeline-ruler').boundingBox()).width - after.width) <= 1);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('?: the keyboard shortcuts list opens and closes; a ? typed into the search box stays the box\'s', async () => {
  const page = await open();
  await waitForDemo(page);
  await page.keyboard.press('?');
  await page.waitForSelector('#shortcuts[role="dialog"]');
  assert.match(await page.locator('#shortcuts').textContent(), /Timeline: F.*fit the selected range/);
  await page.keyboard.press('Escape');
  await page.waitForSelector('#shortcuts', { state: 'detached' });
  await page.keyboard.press('?');
  await page.click('#shortcuts-close');
  await page.waitForSelector('#shortcuts', { state: 'detached' });
  await showTimeline(page);
  await page.locator('#timeline-search').press('?');
  assert.equal(await page.inputValue('#timeline-search'), '?');
  assert.equal(await page.locator('#shortcuts').count(), 0);
  assert.deepEqual(page.errors, []);
});
