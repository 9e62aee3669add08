// End-to-end: the installable app — the service worker serves the app with
// the network cut after the first visit, caches the app's own files and
// never a trace, announces a newer build and takes it on "reload"; the
// manifest declares the installed app's file handlers.
// Run through scripts/test-all.sh (it builds dist/ first), or: node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dist, fixtures, open, openFile, serve, useBrowser, waitForDemo } from './helpers.mjs';

useBrowser();

/** Waits until the service worker serves the page (`<html data-sw>`). */
async function waitForControl(page) {
  await page.waitForFunction(() => document.documentElement.dataset.sw === 'controlled' && navigator.serviceWorker.controller, null, { timeout: 60000 });
}

/** Every URL in the page's caches. */
const cachedUrls = (page) => page.evaluate(async () => {
  const urls = [];
  for (const key of await caches.keys()) {
    for (const r of await (await caches.open(key)).keys()) urls.push(r.url);
  }
  return urls;
});

/** A copy of the build (and `extra` files) served on its own. */
async function servedCopy(extra = []) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tracelane-dist-'));
  cpSync(dist, dir, { recursive: true });
  for (const f of extra) cpSync(path.join(fixtures, f), path.join(dir, path.basename(f)));
  const { server, url } = await serve(dir, 17000);
  return { dir, url, done: () => { server.kill(); rmSync(dir, { recursive: true, force: true }); } };
}

test('offline: after the first visit the app opens, with its demo, and opens traces, with the network cut; no trace of the user\'s is cached', async () => {
  const trace = 'torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz';
  const site = await servedCopy([trace]);
  try {
    // The first visit opens a trace by URL: it comes from the network and
    // is not cached.
    const page = await open(`${site.url}?url=${path.basename(trace)}`);
    await page.waitForFunction((n) => document.querySelector('.file-name')?.textContent === n, path.basename(trace), { timeout: 60000 });
    await waitForControl(page);
    await page.context().setOffline(true);
    await page.goto(site.url);
    await waitForDemo(page);
    await openFile(page, 'torch-cpu/rmsnorm_fused_cpu.pt.trace.json.gz');
    const urls = await cachedUrls(page);
    assert.ok(urls.some((u) => /worker_bg\.wasm$/.test(u)) && urls.some((u) => /ranks_bg\.wasm$/.test(u)), urls.join('\n'));
    // The app's own demo traces are among its files (the demo opens
    // offline); no trace opened by the user is cached.
    assert.equal(urls.filter((u) => /\/demo\/[^/]+$/.test(u)).length, 5, urls.join('\n'));
    assert.deepEqual(urls.filter((u) => /\.(json|gz|pftrace|pb|parquet)$/.test(u) && !/\/demo\/[^/]+$/.test(u)), []);
    await page.context().setOffline(false);
  } finally {
    site.done();
  }
});

test('offline: the manifest makes the app installable and declares it the handler of trace files', async () => {
  const page = await open();
  await waitForDemo(page);
  const href = await page.locator('link[rel="manifest"]').getAttribute('href');
  const manifest = await page.evaluate((h) => fetch(h).then((r) => r.json()), href);
  assert.equal(manifest.display, 'standalone');
  assert.equal(manifest.start_url, './');
  assert.ok(manifest.icons.some((i) => i.sizes === 'any' && i.type === 'image/svg+xml'));
  const accept = Object.values(manifest.file_handlers[0].accept).flat();
  for (const ext of ['.json', '.gz', '.pftrace']) assert.ok(accept.includes(ext), ext);
  assert.equal(manifest.file_handlers[0].action, './');
  // The icon it names is served.
  assert.equal(await page.evaluate(() => fetch('icon.svg').then((r) => r.status)), 200);
});

test('offline: a newer build is announced, and "reload" brings it in and drops the old cache', async () => {
  // A copy of the build whose service worker is rebuilt under the
  // running page.
  const site = await servedCopy();
  const { url } = site;
  const copy = site.dir;
  try {
    const page = await open(url);
    await waitForDemo(page);
    await waitForControl(page);
    const [before] = await page.evaluate(() => caches.keys());
    assert.match(before, /^tracelane-[0-9a-f]{16}$/);
    const sw = path.join(copy, 'sw.js');
    writeFileSync(sw, readFileSync(sw, 'utf8').replace(/const VERSION = '([0-9a-f]+)'/, "const VERSION = '$1-next'"));
    await page.evaluate(() => navigator.serviceWorker.ready.then((r) => r.update()));
    await page.waitForSelector('#update-banner', { timeout: 60000 });
    await Promise.all([page.waitForEvent('load', { timeout: 60000 }), page.click('#update-reload')]);
    // The reload reopens the view the address holds (the demo's op table).
    await page.waitForFunction(() => document.querySelectorAll('.tabs [role=tab]').length === 5 && document.querySelector('#row-count'), null, { timeout: 60000 });
    await page.waitForFunction(() => caches.keys().then((k) => k.length === 1 && k[0].endsWith('-next')), null, { timeout: 60000 });
    assert.equal(await page.locator('#update-banner').count(), 0);
  } finally {
    site.done();
  }
});
