// Frame times of the timeline in headless Chromium: for each trace, import it
// through the page, open the timeline, then zoom in 30 steps (W) and pan 20
// (D), reading the page's `tracelane:frame` measures (request → worker
// layout → transfer → paint). Run after `trunk build --release`:
//   node bench/timeline_browser.mjs FILE...
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const port = 18700 + Math.floor(Math.random() * 200);
const server = spawn('python3', ['-m', 'http.server', '--bind', '127.0.0.1', String(port)], { cwd: path.join(root, 'dist'), stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 800));
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'] });
try {
  for (const file of process.argv.slice(2)) {
    const page = await browser.newPage({ viewport: { width: 1500, height: 900 } });
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.waitForFunction(() => document.querySelectorAll('.tabs [role=tab]').length === 4 && !document.querySelector('.status.loading'), null, { timeout: 60000 });
    await page.setInputFiles('#file-input', file);
    const name = path.basename(file);
    await page.waitForFunction((n) => document.querySelector('.file-name')?.textContent === n, name, { timeout: 600000 });
    const importMs = await page.evaluate(() => { const e = performance.getEntriesByName('tracelane:import'); return e[e.length - 1].duration; });
    await page.click('#show-timeline');
    await page.waitForSelector('#timeline canvas');
    await page.waitForTimeout(500);
    await page.evaluate(() => performance.clearMeasures('tracelane:frame'));
    await page.focus('#timeline');
    const keys = [...Array(30).fill('w'), ...Array(20).fill('d')];
    for (const k of keys) {
      const before = await page.evaluate(() => performance.getEntriesByName('tracelane:frame').length);
      await page.keyboard.press(k);
      await page.waitForFunction((b) => performance.getEntriesByName('tracelane:frame').length > b, before, { timeout: 30000 });
    }
    const frames = (await page.evaluate(() => performance.getEntriesByName('tracelane:frame').map((e) => e.duration))).sort((a, b) => a - b);
    const q = (p) => frames[Math.min(frames.length - 1, Math.round((frames.length - 1) * p))];
    const slices = await page.locator('#trace-facts').textContent();
    console.log(`${name}: import ${(importMs / 1000).toFixed(2)} s; ${frames.length} frames: median ${q(0.5).toFixed(1)} ms, p95 ${q(0.95).toFixed(1)} ms, max ${q(1).toFixed(1)} ms (${slices.match(/[\d,]+ slices/)?.[0]})`);
    await page.close();
  }
} finally {
  await browser.close();
  server.kill();
}
