// End-to-end: a team's trace library on a sub-path deployment (as on GitHub
// Pages): built with scripts/library.mjs from a folder and its traces.json,
// searched, a trace opened, two compared, four opened as ranks, links to
// library traces, the demo one click away.
// Run through scripts/test-all.sh (it builds dist/ first), or: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  artifacts, axeViolations, dist, fixtures, open, root, serve, useBrowser,
} from './helpers.mjs';

useBrowser();

test('a sub-path deployment with a library opens on it: search, open one, compare two, open ranks, the demo', async () => {
  // The site: the build under /team/tracelane/, and a library folder with a traces.json.
  const site = path.join(artifacts, 'library-site');
  const sub = path.join(site, 'team', 'tracelane');
  const lib = path.join(artifacts, 'library-input');
  rmSync(site, { recursive: true, force: true });
  rmSync(lib, { recursive: true, force: true });
  cpSync(dist, sub, { recursive: true });
  for (const [from, to] of [
    ['torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz', 'rmsnorm/naive.pt.trace.json.gz'],
    ['torch-cpu/rmsnorm_compiled_cpu.pt.trace.json.gz', 'rmsnorm/compiled.pt.trace.json.gz'],
    ...[0, 1, 2, 3].map((r) => [`torch-gloo/gloo_rank${r}_cpu.pt.trace.json.gz`, `gloo-run/gloo_rank${r}_cpu.pt.trace.json.gz`]),
  ]) {
    mkdirSync(path.dirname(path.join(lib, to)), { recursive: true });
    cpSync(path.join(fixtures, from), path.join(lib, to));
  }
  writeFileSync(path.join(lib, 'README.md'), 'not a trace: passed over');
  writeFileSync(path.join(lib, 'traces.json'), JSON.stringify({
    traces: [{ url: 'rmsnorm/naive.pt.trace.json.gz', name: 'RMSNorm eager', tags: ['cpu', 'rmsnorm'], description: 'six eager ops, PyTorch 2.15' }],
  }));
  execFileSync(process.execPath, [path.join(root, 'scripts/library.mjs'), lib, sub]);
  const listed = JSON.parse(readFileSync(path.join(sub, 'library/traces.json'), 'utf8')).traces;
  assert.equal(listed.length, 6);
  assert.match(readFileSync(path.join(sub, 'index.html'), 'utf8'), /<meta name="tracelane-library" content="library\/traces.json">/);
  // The service worker never caches the library's traces.
  assert.doesNotMatch(readFileSync(path.join(sub, 'sw.js'), 'utf8'), /library\//);

  const { server, url } = await serve(site, 27000);
  const base = `${url}team/tracelane/`;
  try {
    const page = await open(base);
    await page.waitForSelector('#library[data-count="6"]', { timeout: 20000 });
    assert.equal(await page.locator('.tabs [role=tab]').count(), 0, 'the library shows first; the demo waits');
    const eager = page.locator('.library-row[data-name="RMSNorm eager"]');
    assert.match(await eager.textContent(), /cpu.*rmsnorm.*six eager ops, PyTorch 2\.15/);
    // Subfolders are tags; search matches names, tags and descriptions.
    await page.fill('#library-search', 'gloo');
    await page.waitForSelector('#library[data-shown="4"]');
    await page.fill('#library-search', 'rmsnorm');
    await page.waitForSelector('#library[data-shown="2"]');
    await page.screenshot({ path: path.join(artifacts, 'library.png'), fullPage: true });
    assert.deepEqual(await axeViolations(page, 'library'), []);
    // Two picked: compared, the first picked the baseline.
    await eager.locator('.library-pick').check();
    await page.locator('.library-row[data-name="compiled.pt.trace.json.gz"] .library-pick').check();
    assert.equal(await page.locator('#library-open').textContent(), 'Compare 2');
    await page.click('#library-open');
    await page.waitForFunction(() => document.querySelectorAll('#compare-cards .card').length === 2, null, { timeout: 60000 });
    assert.match(await page.locator('#compare-cards .card.baseline').getAttribute('data-label'), /naive/);
    // The link names the library's files by URL: it reopens wherever the library is served.
    await page.waitForFunction(() => (document.documentElement.dataset.link || '').includes('t=u%3Alibrary%2Frmsnorm%2Fnaive.pt.trace.json.gz'), null, { timeout: 10000 });
    // Back to the library; one trace opened by its name.
    await page.click('#open-library');
    await page.fill('#library-search', '');
    await page.locator('.library-row[data-name="gloo_rank1_cpu.pt.trace.json.gz"] .library-name').click();
    await page.waitForFunction(() => document.querySelector('.file-name')?.textContent === 'gloo_rank1_cpu.pt.trace.json.gz', null, { timeout: 60000 });
    // Four picked as the ranks of one run.
    await page.click('#open-library');
    await page.fill('#library-search', 'gloo');
    for (const r of [0, 1, 2, 3]) await page.locator(`.library-row[data-name="gloo_rank${r}_cpu.pt.trace.json.gz"] .library-pick`).check();
    await page.click('#library-ranks');
    await page.waitForFunction(() => {
      const p = document.querySelector('#ranks-panel');
      return p && p.dataset.state === 'ready' && Number(p.dataset.summarised) === 4;
    }, null, { timeout: 120000 });
    // The demo is one click away.
    await page.click('#open-library');
    await page.click('#library-demo');
    await page.waitForFunction(() => document.querySelectorAll('#compare-cards .card').length === 3
      && [...document.querySelectorAll('.tabs [role=tab]')].some((t) => t.textContent === 'torchneuron_rmsnorm.json'), null, { timeout: 60000 });
    // Everything came from the sub-path.
    assert.deepEqual(page.requests.filter((u) => !u.startsWith(base)), []);
    assert.deepEqual(page.errors, []);
    await page.close();
  } finally {
    server.kill();
  }
});
