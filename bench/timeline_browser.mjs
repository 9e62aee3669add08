// Frame times of the timeline in headless Chromium: for each trace, import it
// through the page, open the timeline, then zoom in 30 steps (W), pan 20 (D),
// zoom out 10 (S) and pan back 10 (A) — paced, then back to back — reading
// the page's `tracelane:frame` measures (view sent by the page → layout and
// paint in the worker, on the canvases it was handed) and their
// `tracelane:layout` / `tracelane:paint` parts. Run after `trunk build --release`:
//   node bench/timeline_browser.mjs FILE...
// `RENDERER=webgl2` or `RENDERER=canvas2d` forces a renderer (`?renderer=`).
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
    await page.goto(`http://127.0.0.1:${port}/${process.env.RENDERER ? `?renderer=${process.env.RENDERER}` : ''}`);
    await page.waitForFunction(() => document.querySelectorAll('.tabs [role=tab]').length === 5 && !document.querySelector('.status.loading'), null, { timeout: 60000 });
    await page.setInputFiles('#file-input', file);
    const name = path.basename(file);
    await page.waitForFunction((n) => document.querySelector('.file-name')?.textContent === n, name, { timeout: 600000 });
    const importMs = await page.evaluate(() => { const e = performance.getEntriesByName('tracelane:import'); return e[e.length - 1].duration; });
    await page.click('#show-timeline');
    await page.waitForSelector('#timeline canvas.overlay');
    await page.waitForFunction(() => performance.getEntriesByName('tracelane:frame').length > 0, null, { timeout: 60000 });
    await page.waitForTimeout(300);
    await page.focus('#timeline');
    // Zoom in 30 steps, pan 20, zoom out 10 and pan back 10 — once with a
    // pause after each key (each frame alone), once back to back (the next
    // key as soon as the frame is painted, so a renderer that falls behind
    // shows it as waiting in the following frames).
    const keys = [...Array(30).fill('w'), ...Array(20).fill('d'), ...Array(10).fill('s'), ...Array(10).fill('a')];
    const slices = (await page.locator('#trace-facts').textContent()).match(/[\d,]+ slices/)?.[0];
    for (const mode of ['paced', 'back-to-back']) {
      await page.keyboard.press('0');
      await page.waitForTimeout(300);
      await page.evaluate(() => performance.clearMeasures());
      for (const k of keys) {
        const before = await page.evaluate(() => performance.getEntriesByName('tracelane:frame').length);
        await page.keyboard.press(k);
        if (mode === 'paced') {
          // Wait without polling the page (polling would compete with the
          // frame for this machine's two cores), then check the frame came.
          await new Promise((r) => setTimeout(r, 120));
        }
        await page.waitForFunction((b) => performance.getEntriesByName('tracelane:frame').length > b, before, { timeout: 30000, polling: mode === 'paced' ? 50 : 5 });
      }
      const entries = (m) => page.evaluate((m) => performance.getEntriesByName(m).map((e) => e.duration), m);
      if (process.env.FRAMES) {
        for (const m of ['tracelane:frame', 'tracelane:layout', 'tracelane:paint']) {
          console.log(mode, m, (await entries(m)).map((d) => d.toFixed(1)).join(' '));
        }
      }
      const stats = (xs) => {
        const v = [...xs].sort((a, b) => a - b);
        const q = (p) => v[Math.min(v.length - 1, Math.round((v.length - 1) * p))];
        return `median ${q(0.5).toFixed(1)} ms, p95 ${q(0.95).toFixed(1)} ms, max ${q(1).toFixed(1)} ms`;
      };
      const frames = await entries('tracelane:frame');
      const paint = await entries('tracelane:paint');
      const work = (await entries('tracelane:layout')).map((l, i) => l + (paint[i] ?? 0));
      const renderer = await page.locator('#timeline canvas.rects').getAttribute('data-renderer');
      console.log(`${name} (${slices}, ${renderer}), ${mode}: ${frames.length} frames: ${stats(frames)}; layout+paint ${stats(work)}; import ${(importMs / 1000).toFixed(2)} s`);
    }
    await page.close();
  }
} finally {
  await browser.close();
  server.kill();
}
