// tracelane's service worker: the app opens with no network after the
// first visit. It caches the app's own files only — the list below, written
// at build time by scripts/service-worker.mjs from what Trunk produced —
// never a trace: a trace opened from a file never touches the network, and
// one fetched with ?url= goes to the network every time, uncached.
//
// A new build has a new VERSION, so the browser installs it beside the
// running one; it waits until the page asks it to take over (the page's
// "a new version is available — reload"), then the old cache is dropped.

const VERSION = '__TRACELANE_VERSION__';
const FILES = __TRACELANE_FILES__;
const CACHE = `tracelane-${VERSION}`;

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches.open(CACHE).then((cache) => cache.addAll(FILES.map((f) => new Request(f, { cache: 'reload' })))),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) {
      if (key.startsWith('tracelane-') && key !== CACHE) await caches.delete(key);
    }
    await self.clients.claim();
  })());
});

self.addEventListener('message', (event) => {
  if (event.data === 'tracelane:activate') self.skipWaiting();
});

const scope = new URL(self.registration.scope);
const appFiles = new Set(FILES.map((f) => new URL(f, scope).href));

self.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET') return;
  const url = new URL(req.url);
  // The page itself, whatever its query (`?url=…`) or hash: index.html.
  if (req.mode === 'navigate' && url.origin === scope.origin
      && (url.pathname === scope.pathname || url.pathname === `${scope.pathname}index.html`)) {
    event.respondWith(caches.open(CACHE).then((c) => c.match('./')).then((hit) => hit || fetch(req)));
    return;
  }
  url.search = '';
  url.hash = '';
  if (!appFiles.has(url.href)) return; // not the app's: the network, uncached
  event.respondWith(caches.open(CACHE).then((c) => c.match(url.href)).then((hit) => hit || fetch(req)));
});
