// Trunk post-build hook (Trunk.toml): writes the service worker with the
// list of the app's files and a version hashed from their bytes, and copies
// the web app manifest and icon beside it. Runs in Trunk's staging folder,
// after every file of the build is there — or on a built folder given as
// the argument (scripts/library.mjs runs it again once a team's library is
// added: index.html changed, so the app's version does). A library's
// traces (`library/`) are never cached: traces always come from the network.
import { createHash } from 'node:crypto';
import { copyFileSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const staging = process.argv[2] || process.env.TRUNK_STAGING_DIR;
if (!staging) throw new Error('run by Trunk as a post_build hook (TRUNK_STAGING_DIR is not set), or give the built folder');

for (const f of ['manifest.webmanifest', 'icon.svg']) copyFileSync(path.join(root, 'pwa', f), path.join(staging, f));

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}
const files = walk(staging)
  .map((p) => path.relative(staging, p).split(path.sep).join('/'))
  .filter((f) => f !== 'sw.js' && f !== 'index.html' && !f.startsWith('library/'))
  .sort();
const hash = createHash('sha256');
for (const f of ['index.html', ...files]) {
  hash.update(f);
  hash.update(readFileSync(path.join(staging, f)));
}
const version = hash.digest('hex').slice(0, 16);
const sw = readFileSync(path.join(root, 'pwa/sw.js'), 'utf8')
  .replace('__TRACELANE_VERSION__', version)
  .replace('__TRACELANE_FILES__', JSON.stringify(['./', ...files], null, 2));
writeFileSync(path.join(staging, 'sw.js'), sw);
console.log(`service worker ${version}: ${files.length + 1} files`);
