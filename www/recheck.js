// "Re-check N runs": train runs of the report shown again, in a worker of their own, and
// compare each with its record (crates/worker/src/recheck.rs; the CLI's `rdbench validate
// --rerun`). A report's numbers agreeing with each other proves nothing about where they came
// from; a run that gives its record again does. Its own worker leaves a bench free to run
// meanwhile, and Cancel ends it at once (the worker is dropped).
import { $ } from './dom.js';
import { EVENT, request } from './protocol.js';

/** The words for a finished re-check (a 'rechecked' event). */
export function recheckText(m, seed, selection) {
  const n = m.runs.length;
  const runs = `${n} run${n === 1 ? '' : 's'}`;
  const drawn = /^\d+$/.test(selection) ? ` (drawn with seed ${seed}: ${m.runs.join(', ')})` : '';
  const secs = m.elapsed_s < 10 ? m.elapsed_s.toFixed(1) : Math.round(m.elapsed_s);
  const how = m.tolerance === null ? 'bit for bit' : `within a relative ${m.tolerance.toExponential(0)} (${m.note})`;
  const build = m.other_build ? ` Its runs were made by build ${m.other_build}, not this page's: a difference may come from the code.` : '';
  if (!m.differing.length) return { ok: true, text: `Re-ran ${runs}${drawn} in ${secs} s: each gives its record again, ${how}.${build}` };
  return {
    ok: false,
    text: `${m.differing.length} of the ${runs} re-run${drawn} differ from the report (compared ${how}): ${m.differing.join('; ')}.${build}`,
  };
}

/** shown(): the report text shown now, or null. */
export function createRecheck({ shown }) {
  let worker = null;
  let started = 0;

  const set = (text, cls = '') => {
    const p = $('recheck-result');
    p.textContent = text;
    p.className = `recheck-result ${cls}`;
  };

  function busy(on) {
    $('recheck-run').disabled = on;
    $('recheck-count').disabled = on;
    $('recheck-cancel').hidden = !on;
    $('recheck-progress').hidden = !on;
  }

  function end(text, cls) {
    worker?.terminate();
    worker = null;
    busy(false);
    set(text, cls);
  }

  function run() {
    const text = shown();
    if (!text || worker) return;
    const selection = $('recheck-count').value;
    const seed = Math.floor(Math.random() * 1_000_000);
    let total = selection === 'all' ? null : Number(selection);
    let done = 0;
    busy(true);
    $('recheck-progress').value = 0;
    started = performance.now();
    set('Loading the engine…');
    worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
    worker.onerror = (e) => end(`The re-check failed: ${e.message || 'the engine worker did not start'}.`, 'bad');
    worker.onmessage = ({ data: m }) => {
      switch (m?.type) {
        case EVENT.loaded:
          set('Training the runs again…');
          worker.postMessage(request.recheck(text, selection, seed));
          break;
        case EVENT.progress:
          total = m.progress.runs_total;
          $('recheck-progress').value = m.progress.fraction;
          set(`Training the runs again: ${done} of ${total} done (${Math.round(m.progress.fraction * 100)}%).`);
          break;
        case EVENT.runFinished:
          done += 1;
          break;
        case EVENT.rechecked: {
          const r = recheckText(m, seed, selection);
          end(r.text, r.ok ? 'good' : 'bad');
          break;
        }
        case EVENT.stopped:
          end(`The re-check stopped: ${m.message}.`, 'bad');
          break;
        case EVENT.error:
          end(`The re-check failed: ${m.message}.`, 'bad');
          break;
        default:
          break;
      }
    };
  }

  function cancel() {
    if (!worker) return;
    const secs = ((performance.now() - started) / 1000).toFixed(1);
    end(`Re-check cancelled after ${secs} s: nothing was compared.`);
  }

  /** A report was shown: the row offers itself when the report has runs to re-run. */
  function shownChanged(report) {
    if (worker) cancel();
    const runs = report?.runs?.length ?? 0;
    $('recheck').hidden = runs === 0;
    set('');
    if (runs) {
      const all = $('recheck-count').querySelector('option[value=all]');
      all.textContent = `all ${runs} runs`;
    }
    label();
  }

  function label() {
    const v = $('recheck-count').value;
    $('recheck-run').textContent = v === 'all' ? 'Re-check all runs' : `Re-check ${v} run${v === '1' ? '' : 's'}`;
  }

  $('recheck-run').addEventListener('click', run);
  $('recheck-cancel').addEventListener('click', cancel);
  $('recheck-count').addEventListener('change', label);
  return { shownChanged, get running() { return Boolean(worker); } };
}
