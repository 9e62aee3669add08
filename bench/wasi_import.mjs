// Runs a core example built for WASI under Node, to time the importer as
// wasm outside the browser (same engine family, no page, no workers):
//   rustup target add wasm32-wasip1
//   RUSTFLAGS="-C target-feature=+simd128" cargo build --release -p tracelane-core \
//     --example import_phases --target wasm32-wasip1
//   node --single-threaded-gc bench/wasi_import.mjs \
//     target/wasm32-wasip1/release/examples/import_phases.wasm bench/out/synth_100mb.json
// (--single-threaded-gc: Node 20 crashed in its GC while the wasm memory
// grew by hundreds of MB without it.) Paths must be absolute or relative to
// the current directory; the whole filesystem is visible to the example.
import { WASI } from 'node:wasi';
import fs from 'node:fs';
import path from 'node:path';

const [wasmPath, ...args] = process.argv.slice(2);
const wasi = new WASI({
  version: 'preview1',
  args: ['example', ...args.map((a) => path.resolve(a))],
  preopens: { '/': '/' },
});
const module = await WebAssembly.compile(fs.readFileSync(wasmPath));
wasi.start(await WebAssembly.instantiate(module, wasi.getImportObject()));
