// Serve the browser app, and only the app: index.html at the root and the files under www/
// (the JS, the CSS, the built www/pkg/, the example report). Correct MIME types
// (application/wasm), the precompressed .br/.gz copies when the browser accepts them, no
// caching surprises, and headers that keep the page to its own files: nosniff and a CSP the
// page satisfies. A path that cannot be decoded is a 400, a method other than GET or HEAD a 405.
// Usage: node scripts/serve.mjs [--port 8080] [--host 127.0.0.1]   (PORT env works too)
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, resolve } from 'node:path';
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

/**
 * The page's Content-Security-Policy: its own scripts, styles, workers and fetches only;
 * 'wasm-unsafe-eval' compiles the engine's and the charts' wasm (no JS eval). Images: the
 * data: favicon and blob: chart exports. Nothing may frame it, and nothing leaves it.
 */
export const CSP = [
  "default-src 'none'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY = { 'x-content-type-options': 'nosniff', 'content-security-policy': CSP, 'referrer-policy': 'no-referrer' };

/**
 * The file a decoded URL path names, if it is one of the app's: `/` (index.html),
 * `/index.html`, or a file under `/www/` whose path has no empty, `.` or `..` segment and no
 * segment starting with a dot. Everything else in the repository (sources, .git,
 * node_modules, docs) is not served.
 */
export function appFile(path) {
  if (path === '/' || path === '/index.html') return join(ROOT, 'index.html');
  const parts = path.split('/').slice(1);
  if (parts[0] !== 'www' || parts.length < 2) return null;
  if (parts.some((p) => p === '' || p.startsWith('.') || p.includes('\\') || p.includes('\0'))) return null;
  return join(ROOT, ...parts);
}

const isFile = (p) => {
  try {
    return statSync(p).isFile();
  } catch {
    return null;
  }
};

function plain(res, status, text, extra = {}) {
  res.writeHead(status, { ...SECURITY, 'content-type': 'text/plain; charset=utf-8', ...extra });
  res.end(`${text}\n`);
}

export function createAppServer() {
  return createServer((req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return plain(res, 405, `method ${req.method} not allowed: this server only serves files (GET, HEAD)`, { allow: 'GET, HEAD' });
    }
    const raw = (req.url ?? '/').split(/[?#]/)[0];
    let path;
    try {
      path = decodeURIComponent(raw);
    } catch {
      return plain(res, 400, `bad request: the path ${JSON.stringify(raw)} is not valid percent-encoding`);
    }
    const file = appFile(path);
    if (!file || !isFile(file)) return plain(res, 404, 'not found');
    const type = TYPES[extname(file)] ?? 'application/octet-stream';
    const accept = String(req.headers['accept-encoding'] ?? '');
    let body = file;
    const headers = { ...SECURITY, 'content-type': type, 'cache-control': 'no-cache', vary: 'accept-encoding' };
    for (const [token, ext] of [['br', '.br'], ['gzip', '.gz']]) {
      if (accept.includes(token) && isFile(file + ext) && statSync(file + ext).mtimeMs >= statSync(file).mtimeMs) {
        body = file + ext;
        headers['content-encoding'] = token;
        break;
      }
    }
    headers['content-length'] = statSync(body).size;
    res.writeHead(200, headers);
    if (req.method === 'HEAD') return res.end();
    createReadStream(body).on('error', () => res.destroy()).pipe(res);
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
