// The browser harness's process checks (tests/browser/processes.mjs) on processes started
// here: a tree of a shell, its children and a grandchild is found whole, a process is found by
// its user data dir on its command line (as a browser is) and a child of the same dir
// (--type=) is not taken for it, and waitForExit names what is still alive and nothing once
// it has gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { alive, browserPid, processTree, waitForExit } from '../browser/processes.mjs';

const killTree = (pid) => {
  for (const p of processTree(pid).reverse()) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // gone already
    }
  }
};

test('a process tree is found whole, and waitForExit names what outlives its time', async () => {
  // A shell with a sleep and a subshell below it, and the subshell's own sleep below that.
  const root = spawn('bash', ['-c', 'sleep 30 & (sleep 30; true) & wait'], { stdio: 'ignore' });
  try {
    let tree = [];
    for (let i = 0; i < 50 && tree.length < 4; i++) {
      await new Promise((r) => setTimeout(r, 50));
      tree = processTree(root.pid);
    }
    assert.equal(tree[0], root.pid);
    assert.equal(tree.length, 4, `the shell, its sleep, the subshell and its sleep: ${tree}`);
    assert.ok(tree.every(alive));
    // The left-over processes are named while they run.
    assert.deepEqual((await waitForExit(tree, 200)).sort(), [...tree].sort());
  } finally {
    killTree(root.pid);
  }
  assert.deepEqual(await waitForExit([root.pid], 5000), []);
  assert.equal(alive(root.pid), false);
});

test('the main process is found by its user data dir, and a pid that never ran is not alive', async () => {
  const dir = `/tmp/rdbench-processes-main-${process.pid}`;
  // `; true` keeps bash from replacing itself with the sleep, so the flags stay on its line.
  const shell = (...flags) => spawn('bash', ['-c', 'sleep 30; true', 'chromium', ...flags], { stdio: 'ignore' });
  const child = shell('--type=gpu-process', `--user-data-dir=${dir}`);
  const main = shell(`--user-data-dir=${dir}`);
  try {
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(browserPid(dir), main.pid);
    assert.equal(browserPid(`${dir}-other`), null);
  } finally {
    killTree(main.pid);
    killTree(child.pid);
  }
  assert.equal(alive(2 ** 22 + 1), false);
});
