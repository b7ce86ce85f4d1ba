// Precompress the built wasm and JS (gzip and brotli) so the server sends them small
// without compressing 30 MB per request. Skips files whose compressed copies are newer.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const dir = process.argv[2] ?? 'www/pkg';
for (const name of readdirSync(dir)) {
  if (!/\.(wasm|js)$/.test(name)) continue;
  const path = join(dir, name);
  const mtime = statSync(path).mtimeMs;
  const fresh = (ext) => {
    try { return statSync(path + ext).mtimeMs >= mtime; } catch { return false; }
  };
  const data = readFileSync(path);
  if (!fresh('.gz')) writeFileSync(path + '.gz', gzipSync(data, { level: 9 }));
  if (!fresh('.br')) {
    writeFileSync(path + '.br', brotliCompressSync(data, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: data.length },
    }));
  }
  const size = (ext) => statSync(path + ext).size;
  console.log(`${name}: ${data.length} B raw, ${size('.gz')} B gzip, ${size('.br')} B brotli`);
}
