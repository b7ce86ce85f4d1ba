// The processes of a browser the tests launched, read from /proc (Linux): its main process
// (found by the user data dir on its command line), every process below it, and whether they
// have exited. The harness uses them to check that no browser outlives its test.
import { readdirSync, readFileSync } from 'node:fs';

/** The pids in /proc. */
const pids = () => readdirSync('/proc').filter((n) => /^\d+$/.test(n)).map(Number);

/** The parent pid of `pid`, or null once it has gone. */
function parentOf(pid) {
  let stat;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null; // exited while we looked
  }
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/** `pid` and all its descendants. */
export function processTree(pid) {
  const children = new Map();
  for (const p of pids()) {
    const parent = parentOf(p);
    if (parent === null) continue;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(p);
  }
  const out = [];
  const todo = [pid];
  while (todo.length) {
    const p = todo.pop();
    out.push(p);
    todo.push(...(children.get(p) ?? []));
  }
  return out;
}

/** The pid of the Chromium started with user data dir `dir`: the process whose command line
 *  names it and is no child process (those carry --type=). */
export function browserPid(dir) {
  for (const p of pids()) {
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
      if (cmd.includes(`--user-data-dir=${dir}`) && !cmd.some((a) => a.startsWith('--type='))) return p;
    } catch {
      // exited while we looked
    }
  }
  return null;
}

/** Whether `pid` still runs (a zombie has exited: only its parent's wait is missing). */
export function alive(pid) {
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Wait up to `ms` for every pid of `tree` to exit; the ones still alive then. */
export async function waitForExit(tree, ms) {
  const until = Date.now() + ms;
  let left = tree.filter(alive);
  while (left.length && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    left = left.filter(alive);
  }
  return left;
}
