// Serve the browser app, and only the app: index.html at the root and the files under www/
// (the JS, the CSS, the built www/pkg/, the example report). Correct MIME types
// (application/wasm), the precompressed .br/.gz copies when the browser accepts them, no
// caching surprises, and headers that keep the page to its own files: nosniff and a CSP the
// page satisfies. A path that cannot be decoded is a 400, a method other than GET or HEAD a 405.
// A path whose real location (symlinks followed) is outside www/ is a 404.
// Usage: node scripts/serve.mjs [--port 8080] [--host 127.0.0.1]   (PORT env works too)
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

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
export function appFile(path, root = ROOT) {
  if (path === '/' || path === '/index.html') return join(root, 'index.html');
  const parts = path.split('/').slice(1);
  if (parts[0] !== 'www' || parts.length < 2) return null;
  if (parts.some((p) => p === '' || p.startsWith('.') || p.includes('\\') || p.includes('\0'))) return null;
  return join(root, ...parts);
}

/**
 * The stat of `file` if it is a regular file whose real path (every symlink followed) is
 * where its URL says: `root`'s index.html for index.html, inside `root`'s www/ for a file
 * under www/ (both taken at their real paths too); else null. So a link inside www/ may
 * point elsewhere inside it, never out of it.
 */
async function servable(file, root) {
  try {
    const [real, realRoot, realWww] = await Promise.all([realpath(file), realpath(root), realpath(join(root, 'www'))]);
    const page = file === join(root, 'index.html');
    if (page ? real !== join(realRoot, 'index.html') : !real.startsWith(realWww + sep)) return null;
    const s = await stat(real);
    return s.isFile() ? s : null;
  } catch {
    return null;
  }
}

function plain(res, status, text, extra = {}) {
  res.writeHead(status, { ...SECURITY, 'content-type': 'text/plain; charset=utf-8', ...extra });
  res.end(`${text}\n`);
}

/** The app's server; `root` (the repository by default) holds index.html and www/. */
export function createAppServer({ root = ROOT } = {}) {
  return createServer(async (req, res) => {
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
    const file = appFile(path, root);
    const found = file && await servable(file, root);
    if (!found) return plain(res, 404, 'not found');
    const type = TYPES[extname(file)] ?? 'application/octet-stream';
    const accept = String(req.headers['accept-encoding'] ?? '');
    let body = file;
    let size = found.size;
    const headers = { ...SECURITY, 'content-type': type, 'cache-control': 'no-cache', vary: 'accept-encoding' };
    for (const [token, ext] of [['br', '.br'], ['gzip', '.gz']]) {
      if (!accept.includes(token)) continue;
      const packed = await servable(file + ext, root);
      if (packed && packed.mtimeMs >= found.mtimeMs) {
        body = file + ext;
        size = packed.size;
        headers['content-encoding'] = token;
        break;
      }
    }
    headers['content-length'] = size;
    res.writeHead(200, headers);
    if (req.method === 'HEAD') return res.end();
    createReadStream(body).on('error', () => res.destroy()).pipe(res);
  });
}

/**
 * The address to listen on from the command line and the environment: `--port N` (else
 * PORT, else 8080) and `--host H` (else 127.0.0.1). Throws an Error naming the flag or PORT
 * for a flag without its value, an unknown argument or a port that is not 0..65535 (0: any
 * free port).
 */
export function listenOptions(argv = process.argv.slice(2), env = process.env) {
  const given = {};
  for (let i = 0; i < argv.length; i++) {
    const [name, inline] = argv[i].startsWith('--') && argv[i].includes('=') ? argv[i].split(/=(.*)/s) : [argv[i]];
    if (name !== '--port' && name !== '--host') throw new Error(`unknown argument ${JSON.stringify(argv[i])}: expected --port N or --host H`);
    const value = inline ?? argv[++i];
    // `--host --port 1` must not serve on a host named "--port".
    if (value === undefined || value === '' || value.startsWith('--')) throw new Error(`${name} needs a value`);
    given[name] = value;
  }
  const [portText, from] = '--port' in given ? [given['--port'], '--port']
    : env.PORT !== undefined ? [env.PORT, 'PORT'] : ['8080', null];
  // Digits only: Number('') is 0 (any port), and Number accepts ' 80', '1e3' and '0x50'.
  const port = /^[0-9]{1,5}$/.test(portText) ? Number(portText) : NaN;
  if (!(port <= 65535)) throw new Error(`invalid ${from} ${JSON.stringify(portText)}: expected a port number 0..65535`);
  return { port, host: given['--host'] ?? '127.0.0.1' };
}

/** The URL a listening server answers on, from the address it reports (IPv6 in brackets). */
export function listeningUrl(server) {
  const { address, family, port } = server.address();
  const host = family === 'IPv6' || family === 6 ? `[${address}]` : address;
  return `http://${host}:${port}/`;
}

// Run as a script (a path with spaces is percent-encoded in the module's URL).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  let options;
  try {
    options = listenOptions();
  } catch (e) {
    console.error(`serve: ${e.message}\nusage: node scripts/serve.mjs [--port 8080] [--host 127.0.0.1]   (or PORT=8080)`);
    process.exit(2);
  }
  const { port, host } = options;
  const server = createAppServer();
  server.on('error', (e) => {
    const hint = e.code === 'EADDRINUSE' ? ': the port is in use (choose another with --port N or PORT=N)' : '';
    console.error(`cannot serve on ${host}:${port}${hint} (${e.message})`);
    process.exit(1);
  });
  // What the socket is bound to: the port 0 picked, the address a name resolved to.
  server.listen(port, host, () => console.log(`rdbench app: ${listeningUrl(server)}`));
}
