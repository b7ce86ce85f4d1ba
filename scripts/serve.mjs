// Serve the repo root for the browser app: correct MIME types (application/wasm), the
// precompressed .br/.gz copies when the browser accepts them, no caching surprises.
// Usage: node scripts/serve.mjs [--port 8080] [--host 127.0.0.1]   (PORT env works too)
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
};

/** Resolve a URL path inside ROOT, or null if it escapes it. */
function localPath(urlPath) {
  let p = decodeURIComponent(urlPath.split('?')[0].split('#')[0]);
  if (p.endsWith('/')) p += 'index.html';
  const full = normalize(join(ROOT, p));
  return full === ROOT || full.startsWith(ROOT + sep) ? full : null;
}

export function createAppServer() {
  return createServer((req, res) => {
    const path = localPath(req.url ?? '/');
    if (!path || !existsSync(path) || !statSync(path).isFile()) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    const type = TYPES[extname(path)] ?? 'application/octet-stream';
    const accept = String(req.headers['accept-encoding'] ?? '');
    let file = path;
    const headers = { 'content-type': type, 'cache-control': 'no-cache', vary: 'accept-encoding' };
    for (const [token, ext] of [['br', '.br'], ['gzip', '.gz']]) {
      if (accept.includes(token) && existsSync(path + ext) && statSync(path + ext).mtimeMs >= statSync(path).mtimeMs) {
        file = path + ext;
        headers['content-encoding'] = token;
        break;
      }
    }
    headers['content-length'] = statSync(file).size;
    res.writeHead(200, headers);
    if (req.method === 'HEAD') return res.end();
    createReadStream(file).pipe(res);
  });
}

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const port = Number(arg('--port', process.env.PORT ?? 8080));
  const host = arg('--host', '127.0.0.1');
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`invalid --port ${arg('--port', process.env.PORT)}: expected 0..65535`);
    process.exit(2);
  }
  const server = createAppServer();
  server.on('error', (e) => {
    const hint = e.code === 'EADDRINUSE' ? ': the port is in use (choose another with --port N or PORT=N)' : '';
    console.error(`cannot serve on ${host}:${port}${hint} (${e.message})`);
    process.exit(1);
  });
  server.listen(port, host, () => console.log(`rdbench app: http://${host}:${server.address().port}/`));
}
