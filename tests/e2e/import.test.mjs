// End-to-end: Opening files: the demo, bad input, the network promise, ?url=, cancel, two workers, sub-path hosting.
// Run through scripts/test-all.sh (it builds dist/ first), or: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import {
  artifacts, cli, cliRows, dist, env, exportCsv, fixtures, lines, open, openFile, root, serve, tabCount,
  useBrowser, waitForDemo,
} from './helpers.mjs';

useBrowser();

test('first load shows the built-in demo: the TorchNeuron RMSNorm comparison (2,355 → 403 → 376 µs), a hint per view, then its op tables', async () => {
  const page = await open();
  await waitForDemo(page, true);
  assert.ok(await page.locator('#demo-line').isVisible());
  assert.match(await page.locator('#demo-line').textContent(), /reconstructed from the TorchNeuron article's published figures, not a capture/);
  const cards = await page.locator('#compare-cards .card').evaluateAll((els) => els.map((e) => ({ ...e.dataset, text: e.textContent })));
  assert.deepEqual(cards.map((c) => Number(c.deviceNs)), [2355000, 403300, 375500]);
  assert.match(cards[1].text, /device time 2,355 µs → 403 µs/);
  assert.match(cards[2].text, /device time 2,355 µs → 376 µs/);
  assert.equal(await page.locator('#demo-hint').getAttribute('data-view'), 'compare');
  await page.screenshot({ path: path.join(artifacts, 'demo-compare.png'), fullPage: true });
  // Each view says what to look at.
  await page.locator('.tabs [role=tab]', { hasText: 'torchneuron_rmsnorm.json' }).click();
  await page.waitForSelector('#demo-hint[data-view="summary"]');
  assert.match(await page.locator('#demo-hint').textContent(), /What to change first/);
  await page.click('#show-table');
  await page.waitForSelector('#row-count');
  assert.equal(await page.locator('#demo-hint').getAttribute('data-view'), 'table');
  assert.match(await page.locator('#demo-hint').textContent(), /three aten::mul calls take 1,775 of the eager version's 2,355 µs/);
  await page.click('#show-timeline');
  await page.waitForSelector('#demo-hint[data-view="timeline"]');
  await page.locator('.tabs [role=tab]').first().click();
  await page.click('#show-table');
  await page.waitForSelector('#row-count');
  assert.match(await page.locator('#import-headline').textContent(), /events, .* in \d+\.\d\d s/);
  assert.ok(await page.locator('.tr').count() > 3);
  const measures = await page.evaluate(() => performance.getEntriesByName('tracelane:import').length);
  assert.ok(measures >= 1, 'performance.measure tracelane:import');
  await page.screenshot({ path: path.join(artifacts, 'demo.png'), fullPage: true });
  // A trace of one's own: the hints and the demo line go.
  await openFile(page, 'public/hta_triton_example.json.gz');
  assert.equal(await page.locator('#demo-hint').count(), 0);
  assert.equal(await page.locator('#demo-line').count(), 0);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a truncated file shows a warning and the rows that were complete', async () => {
  const page = await open();
  await waitForDemo(page);
  await openFile(page, 'edge/truncated.json');
  assert.ok(await page.locator('.badge.warn').isVisible());
  assert.equal(await page.locator('#row-count').textContent(), '2 rows');
  assert.match(await page.locator('#diagnostics').textContent(), /cut off after 2 complete events/);
  await page.screenshot({ path: path.join(artifacts, 'truncated.png'), fullPage: true });
  await page.close();
});

test('a PNG shows an error and the previous trace stays open', async () => {
  const page = await open();
  await waitForDemo(page);
  const tabs = await tabCount(page);
  const shownBefore = await page.locator('.file-name').textContent();
  await page.setInputFiles('#file-input', path.join(fixtures, 'edge/image.png'));
  await page.waitForSelector('#import-error', { timeout: 30000 });
  assert.match(await page.locator('#import-error').textContent(), /image\.png.*not a trace: the file is a PNG image, not JSON/);
  assert.equal(await tabCount(page), tabs);
  assert.equal(await page.locator('.file-name').textContent(), shownBefore);
  assert.ok(await page.locator('.tr').count() > 0);
  await page.screenshot({ path: path.join(artifacts, 'png-error.png'), fullPage: true });
  await page.close();
});

test('names from a trace render as text, never as HTML', async () => {
  const page = await open();
  await waitForDemo(page);
  await openFile(page, 'edge/xss_name.json');
  assert.equal(await page.locator('.tr .td:first-child').first().textContent(), '<img src=x onerror=alert(1)>');
  assert.equal(await page.locator('.tbody img').count(), 0);
  assert.deepEqual(page.dialogs, []);
  await page.close();
});

test('no network request leaves the page other than its own files', async () => {
  const page = await open();
  await waitForDemo(page);
  await openFile(page, 'public/hta_triton_example.json.gz');
  const foreign = page.requests.filter((u) => !u.startsWith(env.base) && !u.startsWith('data:') && !u.startsWith('blob:'));
  assert.deepEqual(foreign, []);
  await page.close();
});

test('?url= loads a trace the browser fetches itself (the older link: it becomes a versioned hash)', async () => {
  copyFileSync(path.join(fixtures, 'public/hta_triton_example.json.gz'), path.join(dist, 'e2e-url-trace.json.gz'));
  const page = await open(`${env.base}?url=e2e-url-trace.json.gz`);
  await page.waitForFunction(() => document.querySelector('.file-name')?.textContent === 'e2e-url-trace.json.gz', null, { timeout: 30000 });
  assert.equal(await page.locator('#demo-line').count(), 0);
  assert.equal(await page.locator('#row-count').textContent(), `${cliRows('public/hta_triton_example.json.gz').length} rows`);
  const foreign = page.requests.filter((u) => !u.startsWith(env.base));
  assert.deepEqual(foreign, []);
  // The link is kept as the current version's hash (see link.test.mjs).
  await page.waitForFunction(() => document.documentElement.dataset.link === location.hash
    && location.hash.startsWith('#v=1&t=u%3Ae2e-url-trace.json.gz&view=table'), null, { timeout: 10000 });
  await page.close();
});

test('Cancel stops an import and keeps the open trace', async () => {
  const big = path.join(artifacts, 'big_synth.json');
  if (!existsSync(big)) execFileSync(cli, ['synth', big, '--mb', '300']);
  const page = await open();
  await waitForDemo(page);
  const tabs = await tabCount(page);
  await page.setInputFiles('#file-input', big);
  await page.waitForSelector('.status.loading button', { timeout: 10000 });
  await page.click('.status.loading button');
  await page.waitForFunction(() => !document.querySelector('.status.loading'), null, { timeout: 10000 });
  assert.equal(await tabCount(page), tabs);
  assert.ok(await page.locator('.tr').count() > 0);
  // The open trace still has its model in the worker: row details work.
  await page.locator('.tr').first().click();
  await page.waitForSelector('#row-details-lists', { timeout: 10000 });
  // The page still imports afterwards.
  await openFile(page, 'public/hta_triton_example.json.gz');
  assert.equal(await tabCount(page), tabs + 1);
  await page.close();
});

test('a large trace parsed by two workers gives the CLI\'s table', async () => {
  // Above 16 MB the page hands the second half to the helper worker, which
  // sends its part to the primary to be merged; the table must be the
  // sequential import's (the CLI's).
  const big = path.join(artifacts, 'split_synth.json');
  if (!existsSync(big)) execFileSync(cli, ['synth', big, '--mb', '40', '--seed', '5']);
  const page = await open();
  await waitForDemo(page);
  await page.setInputFiles('#file-input', big);
  await page.waitForFunction(() => document.querySelector('.file-name')?.textContent === 'split_synth.json', null, { timeout: 120000 });
  assert.equal(await page.locator('#trace-facts').getAttribute('data-workers'), '2');
  assert.match(await page.locator('#import-headline').textContent(), /two workers/);
  await page.click('#show-table');
  const want = execFileSync(cli, ['ops', big, '--format', 'csv']).toString();
  assert.deepEqual(lines(await exportCsv(page)), lines(want));
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('large files opened together are each parsed by two workers', async () => {
  // The helper is replaced after its part only once no file waits, so the
  // second file of a batch still has one.
  const files = [6, 7].map((seed) => {
    const f = path.join(artifacts, `batch_synth_${seed}.json`);
    if (!existsSync(f)) execFileSync(cli, ['synth', f, '--mb', '24', '--seed', String(seed)]);
    return f;
  });
  const page = await open();
  await waitForDemo(page);
  const tabs = await tabCount(page);
  await page.setInputFiles('#file-input', files);
  await page.waitForFunction((n) => document.querySelectorAll('.tabs [role=tab]').length === n + 2 && !document.querySelector('.status.loading'), tabs, { timeout: 120000 });
  for (const k of [tabs, tabs + 1]) {
    await page.locator('.tabs [role=tab]').nth(k).click();
    await page.waitForSelector('#trace-facts');
    assert.equal(await page.locator('#trace-facts').getAttribute('data-workers'), '2', await page.locator('.file-name').textContent());
  }
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the release build works from a sub-path (GitHub Pages project sites)', async () => {
  const { server, url } = await serve(root, 26000);
  try {
    const sub = `${url}dist/`;
    const page = await open(sub);
    await waitForDemo(page);
    assert.ok(await page.locator('.tr').count() > 3);
    assert.deepEqual(page.requests.filter((u) => !u.startsWith(sub)), []);
    await page.close();
  } finally {
    server.kill();
  }
});

test('a rank of a distributed run says which rank of which run it is', async () => {
  const page = await open();
  await waitForDemo(page);
  await openFile(page, 'torch-gloo/gloo_rank2_cpu.pt.trace.json.gz');
  assert.equal(await page.locator('#distributed').textContent(), 'Distributed run: rank 2 of 4 (gloo); process groups: default_pg [0, 1, 2, 3]');
  assert.deepEqual(page.errors, []);
  await page.close();
});
