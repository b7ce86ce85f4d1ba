// Browser end-to-end tests: the served app in Debian's Chromium driven by playwright-core.
// Needs `bash scripts/build-web.sh` (www/pkg) and the native CLI (cargo build --release).
// Screenshots go to test-artifacts/. Prints "N passed, N failed" at the end.
//   node tests/browser/run.mjs                 every test
//   node tests/browser/run.mjs 'card|history'  the tests whose name contains one of these
//   node tests/browser/run.mjs --long 'WebGPU'  also the long equivalences (T = 1,000, the quick
//                                               preset's verdict on WebGPU, 40 runs)
//   node tests/browser/run.mjs --long-only 'WebGPU'  only those (`npm run check:webgpu`)
// The harness is harness.mjs; the tests are the *.test.mjs files, one concern each, run in
// the order imported here.
import { run } from './harness.mjs';
import './report-view.test.mjs';
import './card.test.mjs';
import './numbers.test.mjs';
import './charts.test.mjs';
import './files.test.mjs';
import './accessibility.test.mjs';
import './history-compare.test.mjs';
import './estimate.test.mjs';
import './controls.test.mjs';
import './url.test.mjs';
import './cpu-run.test.mjs';
import './during-run.test.mjs';
import './security.test.mjs';
import './source-checks.test.mjs';
import './resume.test.mjs';
import './webgpu.test.mjs';
import './workers.test.mjs';
import './study.test.mjs';
import './scale.test.mjs';
import './long.test.mjs';
import './recheck.test.mjs';
import './native-agreement.test.mjs';

const args = process.argv.slice(2);
const long = args.includes('--long-only') ? 'only' : args.includes('--long') ? 'with' : 'without';
const filter = args.find((a) => !a.startsWith('--'));
const unknown = args.filter((a) => a.startsWith('--') && a !== '--long' && a !== '--long-only');
if (unknown.length) {
  console.error(`unknown option ${unknown.join(' ')} (run.mjs [--long | --long-only] [filter])`);
  process.exit(2);
}
process.exit((await run(filter, long)) ? 1 : 0);
