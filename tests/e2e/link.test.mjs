// End-to-end: links that reopen the view (the URL hash): a copied link in a
// fresh browser context, the comparison's variants, back / forward, a link
// to one slice of a dropped trace (the older `?url=` link: import.test.mjs).
// Run through scripts/test-all.sh (it builds dist/ first), or: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import {
  artifacts, env, fixtures, open, selectRange, showTimeline, timelineView, useBrowser, waitForDemo, waitForPainted,
} from './helpers.mjs';

useBrowser();

/** A page in a browser context of its own (no storage, cache or history shared). */
async function openFresh(url) {
  const context = await env.browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(String(e)));
  await page.goto(url);
  return page;
}

/** Waits until the page has written a hash that has every one of `parts`. */
async function waitForLink(page, parts) {
  await page.waitForFunction((parts) => {
    const link = document.documentElement.dataset.link || '';
    return parts.every((p) => link.includes(p)) && link === location.hash;
  }, parts, { timeout: 20000 });
}

async function copyLink(page) {
  await page.click('#copy-link');
  await page.waitForSelector('#copied-link');
  return page.locator('#copy-link').getAttribute('data-link');
}

const rowNames = (page) => page.locator('.tr .td:first-child').allTextContents();

test('a copied link reopens the tab, the table\'s sort, filter and top N, and the timeline\'s window, selection, range and search, in a fresh browser', async () => {
  const page = await open();
  await waitForDemo(page);
  await page.locator('.tabs [role=tab]').nth(1).click();
  await page.waitForFunction(() => document.querySelector('.file-name')?.textContent === 'rmsnorm_fused_cpu.pt.trace.json.gz');
  await page.click('#show-table');
  await page.click('.th[data-col="Calls"]');
  await page.fill('#filter', 'aten');
  await page.selectOption('#top-n', '10');
  const rows = await rowNames(page);
  assert.ok(rows.length > 1 && rows.length <= 10, rows.join(' | '));
  await waitForLink(page, ['tab=1', 'view=table', 'filter=aten', 'top=10', 'sort=-calls']);

  await showTimeline(page);
  // A range: Shift+drag across the middle of the plot.
  await selectRange(page, 0.2, 0.6);
  const rangeText = await page.locator('#ruler-selection').textContent();
  // Search: Enter selects the first match and brings it into view.
  await page.fill('#timeline-search', 'aten::rms_norm');
  await page.press('#timeline-search', 'Enter');
  await page.waitForFunction(() => document.querySelector('#timeline-picked h2')?.textContent === 'aten::rms_norm', null, { timeout: 10000 });
  // Zoom in a little: the window is no longer the whole trace.
  await page.focus('#timeline');
  await page.keyboard.press('w');
  await waitForPainted(page);
  const view = await timelineView(page);
  const picked = await page.locator('#timeline-picked p.muted').first().textContent();
  await waitForLink(page, ['view=timeline', 'win=', 'sel=', 'range=', 'q=aten%3A%3Arms_norm']);
  const link = await copyLink(page);
  assert.match(link, /#v=1&t=d%3Armsnorm_naive_cpu/);
  await page.screenshot({ path: path.join(artifacts, 'link-copied.png'), fullPage: true });

  const fresh = await openFresh(link);
  await fresh.waitForFunction(() => document.querySelector('.file-name')?.textContent === 'rmsnorm_fused_cpu.pt.trace.json.gz'
    && document.querySelectorAll('.tabs [role=tab]').length === 5, null, { timeout: 60000 });
  await fresh.waitForSelector('#timeline canvas.overlay');
  await waitForPainted(fresh);
  const again = await timelineView(fresh);
  assert.equal(again.start, view.start);
  // The window travels in whole nanoseconds: the span is the same to 2 ns.
  assert.ok(Math.abs(again.nsPerPx - view.nsPerPx) * view.width <= 2, `${again.nsPerPx} vs ${view.nsPerPx}`);
  await fresh.waitForFunction(() => document.querySelector('#timeline-picked h2')?.textContent === 'aten::rms_norm', null, { timeout: 10000 });
  assert.equal(await fresh.locator('#timeline-picked p.muted').first().textContent(), picked);
  await fresh.waitForSelector('#range-table .tr', { timeout: 10000 });
  assert.equal(await fresh.locator('#ruler-selection').textContent(), rangeText);
  assert.equal(await fresh.locator('#timeline-search').inputValue(), 'aten::rms_norm');
  // The table as it was left.
  await fresh.click('#show-table');
  await fresh.waitForSelector('.tr');
  assert.deepEqual(await rowNames(fresh), rows);
  assert.equal(await fresh.locator('#filter').inputValue(), 'aten');
  assert.equal(await fresh.locator('#top-n').inputValue(), '10');
  assert.match(await fresh.locator('.th[data-col="Calls"]').textContent(), /▼/);
  assert.deepEqual(fresh.errors, []);
  assert.deepEqual(page.errors, []);
  await fresh.context().close();
  await page.close();
});

test('a link reopens the comparison\'s variants and baseline; back and forward step through the views', async () => {
  const page = await open();
  await waitForDemo(page);
  await waitForLink(page, ['view=table']);
  // The comparison again (the demo's: the TorchNeuron regions), the fused one made the baseline.
  await page.click('#open-compare');
  await page.waitForFunction(() => document.querySelectorAll('#compare-cards .card').length === 3, null, { timeout: 20000 });
  await page.locator('.spec-row').nth(1).locator('.make-baseline').click();
  await page.waitForFunction(() => document.querySelector('#compare-cards .card.baseline')?.dataset.label.includes('fused'), null, { timeout: 10000 });
  const labels = await page.locator('#compare-cards .card').evaluateAll((els) => els.map((e) => e.dataset.label));
  await waitForLink(page, ['view=compare', 'cmp=4%7Eregion%3Armsnorm_fused&cmp=4%7Eregion%3Armsnorm_naive']);
  const link = await copyLink(page);

  const fresh = await openFresh(link);
  await fresh.waitForFunction(() => document.querySelectorAll('#compare-cards .card').length === 3
    && document.querySelectorAll('.tabs [role=tab]').length === 5, null, { timeout: 60000 });
  assert.deepEqual(await fresh.locator('#compare-cards .card').evaluateAll((els) => els.map((e) => e.dataset.label)), labels);
  assert.match(await fresh.locator('#compare-cards .card.baseline').getAttribute('data-label'), /fused/);
  assert.deepEqual(fresh.errors, []);
  await fresh.context().close();

  // Back: the op table the comparison was opened from; forward: the comparison.
  await page.goBack();
  await page.waitForSelector('#row-count');
  assert.equal(await page.locator('#compare-cards').count(), 0);
  await page.goForward();
  await page.waitForFunction(() => document.querySelector('#compare-cards .card.baseline')?.dataset.label.includes('fused'), null, { timeout: 20000 });
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a link to a slice of a dropped trace asks the receiver for the file, then opens on that slice', async () => {
  const file = path.join(fixtures, 'torch-cpu/mlp_train_cpu.pt.trace.json.gz');
  const page = await open();
  await waitForDemo(page);
  await page.setInputFiles('#file-input', file);
  await page.waitForFunction(() => document.querySelector('.file-name')?.textContent === 'mlp_train_cpu.pt.trace.json.gz', null, { timeout: 60000 });
  await showTimeline(page);
  await page.fill('#timeline-search', 'aten::addmm');
  await page.press('#timeline-search', 'Enter');
  await page.waitForFunction(() => document.querySelector('#timeline-picked h2')?.textContent === 'aten::addmm', null, { timeout: 10000 });
  const picked = await page.locator('#timeline-picked p.muted').first().textContent();
  await page.click('#copy-slice-link');
  await page.waitForFunction(() => document.querySelector('#copy-slice-link')?.dataset.link, null, { timeout: 10000 });
  const link = await page.locator('#copy-slice-link').getAttribute('data-link');
  assert.match(link, /t=f%3Amlp_train_cpu\.pt\.trace\.json\.gz/);
  assert.match(link, /view=timeline.*win=.*sel=/);
  // The page's own link says the file cannot travel with it.
  await page.click('#copy-link');
  assert.match(await page.locator('#copied-link-files').textContent(), /mlp_train_cpu\.pt\.trace\.json\.gz came from your disk/);

  const fresh = await openFresh(link);
  await fresh.waitForSelector('#link-needs-files');
  assert.match(await fresh.locator('#link-needs-files').textContent(), /mlp_train_cpu\.pt\.trace\.json\.gz/);
  assert.equal(await fresh.locator('.tabs [role=tab]').count(), 0);
  await fresh.setInputFiles('#file-input', file);
  await fresh.waitForFunction(() => document.querySelector('.file-name')?.textContent === 'mlp_train_cpu.pt.trace.json.gz'
    && document.querySelector('#timeline-picked h2')?.textContent === 'aten::addmm', null, { timeout: 60000 });
  assert.equal(await fresh.locator('#timeline-picked p.muted').first().textContent(), picked);
  // The demo traces the sender had open came back too, in their tabs.
  assert.equal(await fresh.locator('.tabs [role=tab]').count(), 6);
  assert.equal(await fresh.locator('#link-needs-files').count(), 0);
  await fresh.screenshot({ path: path.join(artifacts, 'link-slice.png'), fullPage: true });
  assert.deepEqual(fresh.errors, []);
  await fresh.context().close();
  await page.close();
});
