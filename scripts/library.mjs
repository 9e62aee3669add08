// Adds a team's trace library to a built app (dist/): the page then opens
// on a searchable list of those traces (open one, several side by side, or
// several as the ranks of a run), the built-in demo one click away.
//
//   node scripts/library.mjs LIBRARY [DIST]
//
// LIBRARY is either
//   - a folder of traces: every trace file under it is copied to
//     DIST/library/ (subfolders become tags), or
//   - a traces.json: {"traces": [{"name", "url", "tags": [], "description"}]}
//     where a relative `url` names a file beside the traces.json (copied) and
//     an absolute one is fetched from there by the browser (CORS permitting).
//     A folder may hold a traces.json too: its names, tags and descriptions
//     are kept for the files it lists.
//
// Writes DIST/library/traces.json, points index.html at it
// (<meta name="tracelane-library">), and writes the service worker again
// (index.html changed; the library's traces are never cached).
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [input, distArg] = process.argv.slice(2);
if (!input) {
  console.error('usage: node scripts/library.mjs FOLDER_OR_TRACES_JSON [DIST]');
  process.exit(2);
}
const dist = path.resolve(distArg || path.join(root, 'dist'));
if (!existsSync(path.join(dist, 'index.html'))) throw new Error(`${dist} holds no built app (index.html): build it first`);
const out = path.join(dist, 'library');
mkdirSync(out, { recursive: true });

// The names the page opens as traces (tracelane's importers).
const TRACE = /\.(json|json\.gz|pftrace|perfetto-trace|pb|zip|tar|tar\.gz|tgz)$/i;

/** A listed trace whose url is relative: copied under library/, keeping its path. */
function copyIn(from, rel) {
  const to = path.join(out, rel);
  mkdirSync(path.dirname(to), { recursive: true });
  copyFileSync(from, to);
  return { url: `library/${rel.split(path.sep).join('/')}`, bytes: statSync(from).size };
}

function readList(file) {
  const list = JSON.parse(readFileSync(file, 'utf8'));
  const traces = Array.isArray(list) ? list : list.traces;
  if (!Array.isArray(traces)) throw new Error(`${file}: expected {"traces": [...]}`);
  for (const t of traces) {
    if (typeof t.url !== 'string' || !t.url) throw new Error(`${file}: every trace needs a "url" (${JSON.stringify(t)})`);
  }
  return traces;
}

const isAbsolute = (u) => /^[a-z][a-z0-9+.-]*:/i.test(u);
const entries = [];
const stat = statSync(input);
if (stat.isDirectory()) {
  const listed = existsSync(path.join(input, 'traces.json')) ? readList(path.join(input, 'traces.json')) : [];
  const byPath = new Map(listed.filter((t) => !isAbsolute(t.url)).map((t) => [path.normalize(t.url), t]));
  const walk = (dir) => readdirSync(dir).sort().flatMap((n) => {
    const p = path.join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
  for (const file of walk(input)) {
    const rel = path.relative(input, file);
    if (rel === 'traces.json' || !TRACE.test(rel)) continue;
    const meta = byPath.get(path.normalize(rel)) || {};
    const folders = path.dirname(rel) === '.' ? [] : path.dirname(rel).split(path.sep);
    entries.push({
      name: meta.name || path.basename(rel),
      ...copyIn(file, rel),
      tags: meta.tags || folders,
      description: meta.description || '',
    });
  }
  // Traces listed by absolute URL come too.
  for (const t of listed.filter((t) => isAbsolute(t.url))) {
    entries.push({ name: t.name || t.url.split('/').pop(), url: t.url, tags: t.tags || [], description: t.description || '' });
  }
} else {
  const base = path.dirname(input);
  for (const t of readList(input)) {
    const where = isAbsolute(t.url) ? { url: t.url } : copyIn(path.join(base, t.url), path.normalize(t.url));
    entries.push({ name: t.name || t.url.split('/').pop(), ...where, tags: t.tags || [], description: t.description || '' });
  }
}
if (entries.length === 0) throw new Error(`${input}: no traces found (${TRACE})`);
writeFileSync(path.join(out, 'traces.json'), `${JSON.stringify({ version: 1, traces: entries }, null, 1)}\n`);

const indexFile = path.join(dist, 'index.html');
const meta = '<meta name="tracelane-library" content="library/traces.json">';
const html = readFileSync(indexFile, 'utf8').replace(/<meta name="tracelane-library"[^>]*>\n?/, '');
writeFileSync(indexFile, html.replace('</head>', `${meta}\n</head>`));
execFileSync(process.execPath, [path.join(root, 'scripts/service-worker.mjs'), dist], { stdio: 'inherit' });
console.log(`library: ${entries.length} traces in ${path.relative(process.cwd(), out) || out}`);
