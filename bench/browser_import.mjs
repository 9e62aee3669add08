// Browser import benchmark: each trace is opened through the real page in
// headless Chromium (file picker → the workers read the file themselves →
// their streaming importers, two of them on a large plain-JSON file → the
// helper's part merged → links → the summary), timed by the page's own measures
// (`tracelane:import`, and its parts `tracelane:parse` — of which the wait
// for the helper's part and the merge are shown — `tracelane:link`,
// `tracelane:views`), next to Node's JSON.parse on the same file (parse only,
// no model) and the native CLI, in the same run. Peak wasm memory is the
// primary worker's wasm memory after the import (wasm memory never
// shrinks); the helper worker that parsed the second half is ended after it.
//
// Run after `trunk build --release --offline --locked --public-url ./` and
// `cargo build --release -p tracelane-cli`:
//   node bench/browser_import.mjs                 # synthetic 100 MB and 400 MB (generated if missing)
//   SIZES="100 400 1000" node bench/browser_import.mjs
//   node bench/browser_import.mjs FILE...
//   DIST=/path/to/another/dist node bench/browser_import.mjs FILE   # an A/B build
//   ANALYSES=0 node bench/browser_import.mjs FILE  # import only (the analyses are timed by default)
import { chromium } from 'playwright-core';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { existsSync, statSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'target/release/tracelane');
const out = path.join(root, 'bench/out');
mkdirSync(out, { recursive: true });

const files = process.argv.slice(2);
// Wait after the page is ready before opening a file (IDLE_MS=0: at once).
const idleMs = Number(process.env.IDLE_MS ?? 2000);
if (files.length === 0) {
  for (const mb of (process.env.SIZES || '100 400').split(/\s+/).filter(Boolean)) {
    const f = path.join(out, `synth_${mb}mb.json`);
    if (!existsSync(f)) execFileSync(cli, ['synth', f, '--mb', mb, '--seed', '1'], { stdio: 'inherit' });
    files.push(f);
  }
}

const port = 18900 + Math.floor(Math.random() * 90);
const server = spawn('python3', ['-m', 'http.server', '--bind', '127.0.0.1', String(port)], { cwd: process.env.DIST || path.join(root, 'dist'), stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 800));
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
const browser = await chromium.launch({ executablePath: chromiumPath, headless: true,
  args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update'] });

console.log(`machine: ${os.cpus().length} cores, ${Math.round(os.totalmem() / 1e9)} GB; ${new Date().toISOString().slice(0, 10)}; ${browser.version()}`);
console.log(['file', 'JSON MB', 'browser s', 'MB/s', 'parse s', '(wait / merge s)', 'link s', 'views s', 'workers', 'wasm MB', 'wasm/file', 'helper wasm MB', 'node s', 'node MB/s', 'browser vs node', 'native s', 'native MB/s', 'analyses s', 'analyses HTA s', 'native analyses s', 'native HTA s', 'insights s'].join(' | '));
try {
  for (const file of files) {
    const fileMb = statSync(file).size / 1e6;
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.waitForFunction(() => document.querySelectorAll('.tabs [role=tab]').length === 5 && !document.querySelector('.status.loading'), null, { timeout: 60000 });
    // A person opens the page, then picks a file: give the workers the
    // moment they have then (they warm up 0.5 s after starting).
    await page.waitForTimeout(idleMs);
    await page.evaluate(() => performance.clearMeasures());
    await page.setInputFiles('#file-input', file);
    const name = path.basename(file);
    const outcome = await page.waitForFunction((n) => {
      const err = document.querySelector('#import-error');
      if (document.querySelector('.file-name')?.textContent === n) return 'ok';
      return err && err.textContent.includes(n) ? err.textContent : false;
    }, name, { timeout: 900000, polling: 200 }).then((h) => h.jsonValue());
    if (outcome !== 'ok') {
      console.log(`${name} | ${fileMb.toFixed(0)} | failed: ${outcome}`);
      await page.close();
      continue;
    }
    const m = await page.evaluate(() => Object.fromEntries(['import', 'parse', 'link', 'views'].map((k) => {
      const e = performance.getEntriesByName(`tracelane:${k}`);
      return [k, e.length ? e[e.length - 1].duration / 1000 : NaN];
    })));
    const wasm = Number(await page.locator('#trace-facts').getAttribute('data-wasm-memory-bytes')) / 1e6;
    const workers = await page.locator('#trace-facts').getAttribute('data-workers');
    const waitS = Number(await page.locator('#trace-facts').getAttribute('data-part-wait-ms')) / 1000;
    const mergeS = Number(await page.locator('#trace-facts').getAttribute('data-merge-ms')) / 1000;
    const helperMb = Number(await page.locator('#trace-facts').getAttribute('data-helper-wasm-memory-bytes')) / 1e6;
    // A trace opens on its Summary, which asks for its insights (every
    // "why is it slow" analysis and the rules over them): wait for that
    // answer first, then the Analyses view asks tracelane's rules, then
    // HTA's; the page measures each answer.
    await page.waitForFunction(() => {
      const s = document.querySelector('#summary');
      return s && s.dataset.asked !== '0' && s.dataset.answered === s.dataset.asked;
    }, null, { timeout: 900000, polling: 200 });
    const insightsS = await page.evaluate(() => {
      const e = performance.getEntriesByName('tracelane:insights');
      return e.length ? e[e.length - 1].duration / 1000 : NaN;
    });
    let analysesS = NaN;
    let analysesHtaS = NaN;
    if (process.env.ANALYSES !== '0') {
      await page.click('#show-analyses');
      await page.waitForFunction(() => {
        const a = document.querySelector('#analyses');
        return a && a.dataset.asked !== '0' && a.dataset.answered === a.dataset.asked;
      }, null, { timeout: 900000, polling: 200 });
      [analysesS, analysesHtaS] = await page.evaluate(() => ['tracelane:why-slow', 'tracelane:why-slow-hta'].map((k) => {
        const e = performance.getEntriesByName(k);
        return e.length ? e[e.length - 1].duration / 1000 : NaN;
      }));
    }
    // Rates are per MB of uncompressed JSON (a .gz file counts what it inflates to).
    const jsonMb = Number(await page.locator('#trace-facts').getAttribute('data-json-bytes')) / 1e6 || fileMb;
    const mb = jsonMb;
    await page.close();
    const gz = file.endsWith('.gz');
    const node = gz ? { status: -1, stderr: 'gzip' } : spawnSync('node', ['--max-old-space-size=16384', path.join(root, 'bench/json_parse.js'), file], { encoding: 'utf8' });
    const nodeS = node.status === 0 ? Number(node.stdout.trim()) : NaN;
    const nodeNote = node.status === 0 ? nodeS.toFixed(2) : gz ? 'n/a (gzip)' : `fails (${(node.stderr.match(/(RangeError|Error)[^\n]*/) || ['error'])[0].slice(0, 70)})`;
    const native = execFileSync(cli, ['bench', file]).toString().trim().split('\n').pop().split(',');
    const nativeS = Number(native[4]);
    console.log([
      name, mb.toFixed(0), m.import.toFixed(2), (mb / m.import).toFixed(0), m.parse.toFixed(2), `${waitS.toFixed(2)} / ${mergeS.toFixed(2)}`, m.link.toFixed(2), m.views.toFixed(2),
      workers, wasm.toFixed(0), (wasm / mb).toFixed(2), helperMb ? helperMb.toFixed(0) : '—', nodeNote, Number.isNaN(nodeS) ? '—' : (mb / nodeS).toFixed(0),
      Number.isNaN(nodeS) ? '—' : `${(nodeS / m.import).toFixed(2)}×`, nativeS.toFixed(2), (mb / nativeS).toFixed(0),
      analysesS.toFixed(2), analysesHtaS.toFixed(2), Number(native[11]).toFixed(2), Number(native[12]).toFixed(2), insightsS.toFixed(2),
    ].join(' | '));
  }
} finally {
  await browser.close();
  server.kill();
}
