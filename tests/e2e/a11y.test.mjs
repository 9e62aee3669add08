// End-to-end: accessibility and the new user's polish — an automated scan
// (axe-core) of each view with no serious or critical violation, light and
// dark; keyboard navigation in the op table; ARIA roles; the dark theme
// reaching the timeline's canvas; empty lanes hidden behind a toggle.
// Run through scripts/test-all.sh (it builds dist/ first), or: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import {
  artifacts, axeViolations, env, fixtures, open, openFile, pixelAt, showTimeline, useBrowser, waitForDemo, waitForPainted,
} from './helpers.mjs';

useBrowser();

const violations = axeViolations;

async function waitForAnswered(page, sel) {
  await page.waitForFunction((sel) => {
    const el = document.querySelector(sel);
    return el && el.dataset.asked && el.dataset.asked === el.dataset.answered;
  }, sel, { timeout: 30000 });
}

async function scanEveryView(page) {
  const found = [];
  await waitForDemo(page, true);
  found.push(...await violations(page, 'comparison (demo)'));
  await page.locator('.tabs [role=tab]', { hasText: 'hta_amd_mi250_rocm.json.gz' }).click();
  await waitForAnswered(page, '#summary');
  found.push(...await violations(page, 'summary'));
  await page.click('#show-table');
  await page.waitForSelector('#row-count');
  found.push(...await violations(page, 'op table'));
  await page.locator('.tr').first().click();
  await page.waitForSelector('#row-details');
  found.push(...await violations(page, 'op table with details'));
  await showTimeline(page);
  found.push(...await violations(page, 'timeline'));
  await page.click('#show-analyses');
  await waitForAnswered(page, '#analyses');
  found.push(...await violations(page, 'analyses'));
  await page.click('#show-roofline');
  await page.waitForSelector('#roofline');
  found.push(...await violations(page, 'roofline'));
  await page.keyboard.press('?');
  await page.waitForSelector('#shortcuts');
  found.push(...await violations(page, 'shortcuts'));
  await page.keyboard.press('Escape');
  await page.click('#copy-link');
  await page.waitForSelector('#copied-link');
  found.push(...await violations(page, 'copied link'));
  // A device profile opens on its engines.
  await openFile(page, 'neuron-provisional/device_profile_model_1.pftrace');
  await waitForAnswered(page, '#engines');
  found.push(...await violations(page, 'engines'));
  // A run of four ranks.
  await page.setInputFiles('#ranks-input', [0, 1, 2, 3].map((r) => path.join(fixtures, `torch-gloo/gloo_rank${r}_cpu.pt.trace.json.gz`)));
  await page.waitForFunction(() => {
    const p = document.querySelector('#ranks-panel');
    return p && p.dataset.state === 'ready' && Number(p.dataset.summarised) === 4;
  }, null, { timeout: 120000 });
  found.push(...await violations(page, 'ranks'));
  return found;
}

test('axe-core finds no serious or critical violation in any view, light or dark', async () => {
  const page = await open();
  const light = await scanEveryView(page);
  await page.screenshot({ path: path.join(artifacts, 'a11y-light.png'), fullPage: true });
  await page.close();
  const dark = await env.browser.newPage({ colorScheme: 'dark', viewport: { width: 1400, height: 1000 } });
  await dark.goto(env.base);
  const darkFound = await scanEveryView(dark);
  await dark.screenshot({ path: path.join(artifacts, 'a11y-dark.png'), fullPage: true });
  await dark.close();
  assert.deepEqual([...light, ...darkFound], []);
});

test('the op table is a table to assistive technology and moves with the keyboard; Enter opens a row\'s details', async () => {
  const page = await open();
  await waitForDemo(page);
  assert.equal(await page.locator('[role=table] [role=row] [role=columnheader]').count() > 5, true);
  assert.ok(await page.locator('.tbody [role=row] [role=cell]').count() > 10);
  assert.equal(await page.locator('.tabs [role=tablist] [role=tab][aria-selected=true]').count(), 1);
  assert.equal(await page.locator('.view-switch [role=tab][aria-selected=true]').getAttribute('id'), 'show-table');
  const rows = Number((await page.locator('#row-count').textContent()).split(' ')[0]);
  await page.locator('.tr[data-index="0"]').focus();
  const focused = () => page.evaluate(() => document.activeElement?.dataset.index);
  for (let k = 1; k <= 3; k++) {
    await page.keyboard.press('ArrowDown');
    await page.waitForFunction((k) => document.activeElement?.dataset.index === String(k), k);
  }
  await page.keyboard.press('ArrowUp');
  await page.waitForFunction(() => document.activeElement?.dataset.index === '2');
  await page.keyboard.press('End');
  await page.waitForFunction((n) => document.activeElement?.dataset.index === String(n - 1), rows);
  await page.keyboard.press('Home');
  await page.waitForFunction(() => document.activeElement?.dataset.index === '0');
  await page.keyboard.press('ArrowDown');
  await page.waitForFunction(() => document.activeElement?.dataset.index === '1');
  const name = await page.locator('.tr[data-index="1"] .td').first().textContent();
  await page.keyboard.press('Enter');
  await page.waitForSelector('#row-details');
  assert.equal(await page.locator('#row-details h2').textContent(), name);
  assert.equal(await focused(), '1');
  // Visible focus: the focused row has an outline.
  assert.notEqual(await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle), 'none');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('empty lanes are hidden behind a toggle (the ROCm trace\'s "Traces" process: one instant, no slice)', async () => {
  const page = await open();
  await waitForDemo(page);
  await page.locator('.tabs [role=tab]', { hasText: 'hta_amd_mi250_rocm.json.gz' }).click();
  await showTimeline(page);
  const toggle = page.locator('label:has(#show-empty)');
  const empty = Number((await toggle.textContent()).match(/^show (\d+) empty lanes?$/)[1]);
  assert.ok(empty >= 1);
  const labels = await page.locator('.lane-label').count();
  const groups = await page.locator('.lane-group').count();
  assert.equal(await page.locator('.lane-group', { hasText: 'Traces' }).count(), 0);
  await page.check('#show-empty');
  await page.waitForFunction((n) => document.querySelectorAll('.lane-label').length === n, labels + empty);
  assert.ok(await page.locator('.lane-group').count() > groups);
  assert.equal(await page.locator('.lane-group', { hasText: 'Traces' }).count(), 1);
  await waitForPainted(page);
  await page.uncheck('#show-empty');
  await page.waitForFunction((n) => document.querySelectorAll('.lane-label').length === n, labels);
  assert.equal(await page.locator('.lane-group').count(), groups);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the dark theme: dark page, and the timeline\'s group headers painted dark by the worker', async () => {
  for (const [scheme, bg, header] of [['light', 'rgb(247, 248, 250)', [241, 243, 246]], ['dark', 'rgb(20, 24, 29)', [35, 42, 51]]]) {
    const page = await env.browser.newPage({ colorScheme: scheme, viewport: { width: 1400, height: 1000 } });
    page.errors = [];
    page.on('pageerror', (e) => page.errors.push(String(e)));
    await page.goto(env.base);
    await waitForDemo(page);
    assert.equal(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), bg, scheme);
    await openFile(page, 'public/hta_triton_example.json.gz');
    await showTimeline(page);
    const box = await page.locator('#timeline canvas.overlay').boundingBox();
    // Row 0 is the first group's header, filled across the plot.
    assert.deepEqual(await pixelAt(page, box.x + box.width - 20, box.y + 9), header, scheme);
    await page.screenshot({ path: path.join(artifacts, `timeline-${scheme}.png`), fullPage: true });
    assert.deepEqual(page.errors, []);
    await page.close();
  }
});
