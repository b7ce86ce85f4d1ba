// The run history: finished reports (and reports the user chose to keep) stored in the
// browser's IndexedDB, so they survive a reload and can be compared. The report text is
// stored byte for byte; a small summary rides along for the list. Capped in count and bytes:
// the oldest entries go first.
import { bytes as size } from './format.js';

const DB_NAME = 'rdbench';
const STORE = 'reports';
/** At most this many reports and this many bytes of report text are kept. */
export const HISTORY_MAX_REPORTS = 50;
export const HISTORY_MAX_BYTES = 50 * 2 ** 20;

function request(r) {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

function openDb() {
  const r = indexedDB.open(DB_NAME, 1);
  r.onupgradeneeded = () => r.result.createObjectStore(STORE, { keyPath: 'id', autoIncrement: true });
  return request(r);
}

/** The history; every method rejects with a readable error when IndexedDB is unavailable. */
export function createHistory() {
  let db = null;
  const store = async (mode) => {
    db ??= await openDb();
    return db.transaction(STORE, mode).objectStore(STORE);
  };

  /** Every entry without its text, newest first. */
  async function list() {
    const all = await request((await store('readonly')).getAll());
    return all.map(({ text, ...rest }) => rest).sort((a, b) => b.id - a.id);
  }

  async function get(id) {
    return request((await store('readonly')).get(id));
  }

  /** The entry (without its text) that holds exactly `text`, or null. */
  async function find(text) {
    const bytes = new Blob([text]).size;
    const all = await request((await store('readonly')).getAll());
    const hit = all.find((e) => e.bytes === bytes && e.text === text);
    if (!hit) return null;
    const { text: _, ...rest } = hit;
    return rest;
  }

  /** Replace an entry's summary (the list's line), its text untouched. */
  async function setSummary(id, summary) {
    const s = await store('readwrite');
    const e = await request(s.get(id));
    if (e) await request(s.put({ ...e, summary }));
  }

  async function remove(id) {
    await request((await store('readwrite')).delete(id));
  }

  /**
   * Keep a report: `summary` is what the list shows (from the card). The same text is kept
   * once. Returns {id, dropped, twin}: the ids evicted to stay under the caps, and the entry
   * that already held the text (then nothing was added).
   */
  async function add(text, source, summary) {
    const bytes = new Blob([text]).size;
    if (bytes > HISTORY_MAX_BYTES) throw new Error(`the report is ${size(bytes)}, more than the history's ${size(HISTORY_MAX_BYTES)}`);
    const all = await request((await store('readonly')).getAll());
    const twin = all.find((e) => e.bytes === bytes && e.text === text);
    if (twin) return { id: twin.id, dropped: [], twin: { id: twin.id, source: twin.source, savedAt: twin.savedAt } };
    const id = await request((await store('readwrite')).add({ savedAt: new Date().toISOString(), source, bytes, summary, text }));
    // Oldest first out, until both caps hold.
    const kept = [...all.map((e) => ({ id: e.id, bytes: e.bytes })), { id, bytes }].sort((a, b) => a.id - b.id);
    const dropped = [];
    let total = kept.reduce((s, e) => s + e.bytes, 0);
    while (kept.length > HISTORY_MAX_REPORTS || total > HISTORY_MAX_BYTES) {
      const old = kept.shift();
      total -= old.bytes;
      dropped.push(old.id);
      await remove(old.id);
    }
    return { id, dropped };
  }

  return { list, get, find, add, setSummary, remove };
}
