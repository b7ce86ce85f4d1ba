// The static server (scripts/serve.mjs): it serves the app's files and nothing else of the
// repository (a symlink out of www/ included), survives a path it cannot decode, refuses
// methods other than GET and HEAD, and sends nosniff and the CSP on every answer. Run as a
// script it rejects a flag without its value and a bad PORT, and prints the address it
// listens on.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CSP, createAppServer } from '../../scripts/serve.mjs';

const SERVE = fileURLToPath(new URL('../../scripts/serve.mjs', import.meta.url));

let server;
let port;
before(async () => {
  server = createAppServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  port = server.address().port;
});
after(() => server.close());

/** One raw request (the path is sent as written, not normalised by a URL parser). */
function ask(method, path, headers = {}, to = { host: '127.0.0.1', port }) {
  return new Promise((resolve, reject) => {
    const req = request({ host: to.host, port: to.port ?? port, method, path, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

function secured(res, what) {
  assert.equal(res.headers['x-content-type-options'], 'nosniff', `${what}: nosniff`);
  assert.equal(res.headers['content-security-policy'], CSP, `${what}: CSP`);
}

test('the page and its files are served with their types, nosniff and the CSP', async () => {
  const page = await ask('GET', '/');
  assert.equal(page.status, 200);
  assert.match(page.headers['content-type'], /^text\/html/);
  assert.equal(page.body, readFileSync(new URL('../../index.html', import.meta.url), 'utf8'));
  secured(page, 'GET /');
  for (const [path, type] of [['/index.html', /^text\/html/], ['/www/app.js', /^text\/javascript/],
    ['/www/style.css', /^text\/css/], ['/www/examples/seed_bench_report.json', /^application\/json/]]) {
    const r = await ask('GET', path);
    assert.equal(r.status, 200, path);
    assert.match(r.headers['content-type'], type, path);
    secured(r, path);
  }
  const head = await ask('HEAD', '/www/app.js');
  assert.equal(head.status, 200);
  assert.equal(head.body, '');
  assert.ok(Number(head.headers['content-length']) > 0);
});

test('the CSP lets the page run its wasm and workers and nothing else', () => {
  const d = Object.fromEntries(CSP.split('; ').map((x) => { const [k, ...v] = x.split(' '); return [k, v]; }));
  assert.deepEqual(d['default-src'], ["'none'"]);
  assert.deepEqual(d['script-src'], ["'self'", "'wasm-unsafe-eval'"]);
  assert.ok(!CSP.includes("'unsafe-eval'") && !CSP.includes("'unsafe-inline'"), CSP);
  assert.deepEqual(d['worker-src'], ["'self'"]);
  assert.deepEqual(d['connect-src'], ["'self'"]);
});

test('a wasm file is served as application/wasm', { skip: !existsSync(new URL('../../www/pkg/rdbench_page_bg.wasm', import.meta.url)) && 'www/pkg is not built' }, async () => {
  const r = await ask('GET', '/www/pkg/rdbench_page_bg.wasm');
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'application/wasm');
});

test('nothing outside the app is served: .git, node_modules, sources, docs, traversal', async () => {
  for (const path of ['/.git/config', '/.git/HEAD', '/node_modules/playwright-core/package.json', '/package.json',
    '/Cargo.toml', '/scripts/serve.mjs', '/docs/SPEC.md', '/crates/core/src/lib.rs', '/tests/fixtures/messages.json',
    '/www/../.git/config', '/www/%2e%2e/.git/config', '/www/..%2f.git/config', '/www/%2e%2e%2fpackage.json',
    '/www/', '/www', '/www/.hidden', '//etc/passwd', '/www//app.js', '/www/app.js%00.png', '/../../etc/passwd']) {
    const r = await ask('GET', path);
    assert.equal(r.status, 404, `${path}: ${r.status}`);
    assert.ok(!r.body.includes('[core]') && !r.body.includes('"name"'), `${path} leaked: ${r.body.slice(0, 80)}`);
    secured(r, path);
  }
});

test('a path that cannot be decoded is a 400, and the server keeps serving', async () => {
  for (const path of ['/%zz', '/www/%E0%A4%A', '/%']) {
    const r = await ask('GET', path);
    assert.equal(r.status, 400, path);
    assert.match(r.body, /not valid percent-encoding/);
    secured(r, path);
  }
  assert.equal((await ask('GET', '/')).status, 200, 'still serving after bad paths');
});

test('methods other than GET and HEAD get 405 with Allow', async () => {
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
    const r = await ask(method, '/index.html');
    assert.equal(r.status, 405, method);
    assert.equal(r.headers.allow, 'GET, HEAD', method);
    assert.ok(!r.body.includes('<html'), `${method} answered with the page`);
    secured(r, method);
  }
});

/** A server on a free port over `root`; resolves to {server, port}. */
async function serving(root) {
  const s = createAppServer({ root });
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  return { server: s, port: s.address().port };
}

test('a path whose real location is outside www/ is a 404: symlinks inside www/ do not lead out', async () => {
  // A served tree beside a secret, with links out of www/ (a file, a folder, the repo root)
  // and one that stays inside it.
  const top = mkdtempSync(join(tmpdir(), 'rdbench-serve-'));
  const root = join(top, 'app');
  mkdirSync(join(root, 'www/sub'), { recursive: true });
  writeFileSync(join(root, 'index.html'), '<!doctype html><title>app</title>');
  writeFileSync(join(root, 'www/app.js'), 'export {};');
  writeFileSync(join(root, 'www/sub/inner.js'), 'export const inner = 1;');
  writeFileSync(join(root, 'secret.txt'), 'SECRET beside www');
  writeFileSync(join(top, 'outside.txt'), 'SECRET outside the root');
  symlinkSync(join(root, 'secret.txt'), join(root, 'www/secret.txt'));
  symlinkSync(join(top, 'outside.txt'), join(root, 'www/outside.js'));
  symlinkSync('../secret.txt', join(root, 'www/relative.js'));
  symlinkSync(root, join(root, 'www/up'));
  symlinkSync(top, join(root, 'www/top'));
  symlinkSync('/etc', join(root, 'www/etc'));
  symlinkSync(join(root, 'www/app.js'), join(root, 'www/alias.js'));
  symlinkSync(join(root, 'www/sub'), join(root, 'www/subdir'));
  // The app's own file linked out: its .br twin pointing outside must not be sent either.
  writeFileSync(join(root, 'www/packed.js'), 'export const packed = 1;');
  symlinkSync(join(top, 'outside.txt'), join(root, 'www/packed.js.br'));
  // The root itself reached through a link: its files are still inside it.
  symlinkSync(root, join(top, 'linked-root'));
  const { server: s, port: p } = await serving(join(top, 'linked-root'));
  try {
    const at = { host: '127.0.0.1', port: p };
    for (const path of ['/www/secret.txt', '/www/outside.js', '/www/relative.js', '/www/up/secret.txt', '/www/up/index.html',
      '/www/top/outside.txt', '/www/top/app/secret.txt', '/www/etc/passwd', '/www/etc/hostname']) {
      const r = await ask('GET', path, {}, at);
      assert.equal(r.status, 404, `${path}: ${r.status}`);
      assert.ok(!r.body.includes('SECRET') && !r.body.includes('root:'), `${path} leaked: ${r.body.slice(0, 80)}`);
      secured(r, path);
    }
    // Links that stay inside www/ are served, as is everything reached through the linked root.
    for (const [path, want] of [['/', 'app'], ['/www/app.js', 'export {}'], ['/www/alias.js', 'export {}'],
      ['/www/sub/inner.js', 'inner'], ['/www/subdir/inner.js', 'inner']]) {
      const r = await ask('GET', path, {}, at);
      assert.equal(r.status, 200, `${path}: ${r.status}`);
      assert.ok(r.body.includes(want), `${path}: ${r.body.slice(0, 80)}`);
    }
    const packed = await ask('GET', '/www/packed.js', { 'accept-encoding': 'br, gzip' }, at);
    assert.equal(packed.status, 200);
    assert.equal(packed.headers['content-encoding'], undefined, 'the .br link out of www/ was sent');
    assert.ok(packed.body.includes('packed') && !packed.body.includes('SECRET'), packed.body);
  } finally {
    s.close();
    rmSync(top, { recursive: true, force: true });
  }
});

/** Run `node scripts/serve.mjs args` with `env` added; resolves to {code, stdout, stderr}
 *  once it exits, or once it printed its first line when `untilLine` (then it is killed). */
function script(args, env = {}, { untilLine = false } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SERVE, ...args], { env: { ...process.env, PORT: undefined, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => { child.kill(); reject(new Error(`serve.mjs ${args.join(' ')} hung: ${stdout}${stderr}`)); }, 10_000);
    child.stdout.on('data', (d) => {
      stdout += d;
      if (untilLine && stdout.includes('\n')) {
        clearTimeout(timer);
        resolve({ child, stdout, stderr });
      }
    });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test('a flag without its value is an error naming the flag, and nothing is served', async () => {
  for (const [args, flag] of [[['--host'], '--host'], [['--port'], '--port'], [['--host', '--port', '1'], '--host'],
    [['--port', '0', '--host'], '--host'], [['--port', '--host', '127.0.0.1'], '--port'], [['--port='], '--port']]) {
    const r = await script(args);
    assert.notEqual(r.code, 0, `${args.join(' ')}: exit ${r.code}`);
    assert.ok(r.stderr.includes(flag) && /needs a value/.test(r.stderr), `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '', `${args.join(' ')} served: ${r.stdout}`);
  }
  // A misspelt flag is not ignored either.
  const typo = await script(['--prot', '9000']);
  assert.notEqual(typo.code, 0);
  assert.match(typo.stderr, /unknown argument "--prot"/);
});

test('an empty or bad PORT is an error naming PORT (an empty one no longer means any port)', async () => {
  for (const value of ['', 'abc', '70000', '-1', ' 8080', '1e3', '0x50', '80.5']) {
    const r = await script([], { PORT: value });
    assert.notEqual(r.code, 0, `PORT=${JSON.stringify(value)}: exit ${r.code}, ${r.stdout}`);
    assert.match(r.stderr, /\bPORT\b/, `PORT=${JSON.stringify(value)}: ${r.stderr}`);
    assert.ok(r.stderr.includes(JSON.stringify(value)), `the value is not named: ${r.stderr}`);
    assert.equal(r.stdout, '', `PORT=${JSON.stringify(value)} served: ${r.stdout}`);
  }
  const flag = await script(['--port', '70000']);
  assert.notEqual(flag.code, 0);
  assert.match(flag.stderr, /--port "70000"/);
});

test('the address printed is the one the server listens on', async () => {
  // Port 0 (from PORT or --port) is a free port: the one picked is printed; a host name is
  // printed as the address it resolved to.
  for (const [args, env] of [[['--host', '127.0.0.1'], { PORT: '0' }], [['--port', '0', '--host', 'localhost'], {}], [['--port=0'], {}]]) {
    const { child, stdout } = await script(args, env, { untilLine: true });
    try {
      const m = stdout.match(/^rdbench app: (http:\/\/(\[[0-9a-f:.]+\]|[0-9.]+):([0-9]+)\/)\n/);
      assert.ok(m, `${args.join(' ')}: printed ${JSON.stringify(stdout)}`);
      assert.notEqual(m[3], '0', 'printed port 0, not the port picked');
      const r = await fetch(m[1]);
      assert.equal(r.status, 200, `${m[1]}: ${r.status}`);
      assert.match(await r.text(), /<title>rdbench/);
    } finally {
      child.kill();
    }
  }
});
