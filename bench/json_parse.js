// Baseline for tracelane's import benchmark: Node's JSON.parse on the same
// file (parse only: no model, no linking). Prints the best of 3 in seconds.
const fs = require('fs');
const path = process.argv[2];
const text = fs.readFileSync(path, 'utf8');
let best = Infinity;
for (let i = 0; i < 3; i++) {
  const t0 = process.hrtime.bigint();
  const v = JSON.parse(text);
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  if (!v) throw new Error('empty');
  best = Math.min(best, s);
}
console.log(best.toFixed(3));
