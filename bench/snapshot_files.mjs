// What the snapshot benchmarks share: the snapshot files (given, or
// generated with tools/gen_snapshot.py at the sizes in SIZES, protocol 4:
// memory_viz reads 2-4 only) and memory_viz's own functions, taken out of
// PyTorch's MemoryViz.js (path in MEMORYVIZ) by name.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'bench/out');

/** The files on the command line, else generated snapshots of SIZES (MB) or `sizes`. */
export function snapshotFiles(sizes) {
  mkdirSync(out, { recursive: true });
  const files = process.argv.slice(2);
  if (files.length > 0) return files;
  for (const mb of (process.env.SIZES || sizes).split(/\s+/).filter(Boolean)) {
    const f = path.join(out, `snapshot_${mb}mb.p4.pickle`);
    if (!existsSync(f)) execFileSync('python3', [path.join(root, 'tools/gen_snapshot.py'), f, '--mb', mb, '--protocol', '4'], { stdio: 'inherit' });
    files.push(f);
  }
  return files;
}

/** `function NAME(...) {...}` of MemoryViz.js: from its line to the first `}` at the start of a line. */
function extract(text, name) {
  const start = text.indexOf(`\nfunction ${name}(`);
  if (start < 0) throw new Error(`MemoryViz.js has no function ${name}`);
  const end = text.indexOf('\n}\n', start);
  return text.slice(start, end + 3);
}

/** The source of memory_viz's functions `names` (null without MEMORYVIZ). */
export function memoryVizFunctions(names) {
  if (!process.env.MEMORYVIZ) return null;
  const text = readFileSync(process.env.MEMORYVIZ, 'utf8');
  return names.map((n) => extract(text, n)).join('\n');
}
