// The static server (scripts/serve.mjs): it serves the app's files and nothing else of the
// repository, survives a path it cannot decode, refuses methods other than GET and HEAD, and
// sends nosniff and the CSP on every answer.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { CSP, createAppServer } from '../../scripts/serve.mjs';

let server;
let port;
before(async () => {
  server = createAppServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  port = server.address().port;
});
after(() => server.close());

/** One raw request (the path is sent as written, not normalised by a URL parser). */
function ask(method, path, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
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
