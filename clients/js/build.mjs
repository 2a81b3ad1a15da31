// Builds dist/suggestd.js, the single-file ES module shipped to browsers: the modules of
// src/ concatenated in dependency order, without their relative imports, comments or
// indentation. No dependencies and no real minifier: it drops only whole comment lines
// and comment blocks that start a line, so code is never rewritten.
// `node build.mjs` writes the file and prints its gzip size; `node build.mjs --check`
// fails when the committed file differs from what src/ gives (test/dist.test.js).
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const ORDER = ['highlight.js', 'client.js', 'widget.js'];
export const OUT = path.join(here, 'dist', 'suggestd.js');

export function bundle() {
  const out = ['// @suggestd/client — built from src/ by build.mjs; do not edit.'];
  for (const f of ORDER) {
    let inBlock = false;
    for (const line of readFileSync(path.join(here, 'src', f), 'utf8').split('\n')) {
      const t = line.trim();
      if (inBlock) {
        if (t.includes('*/')) inBlock = false;
        continue;
      }
      if (t.startsWith('/*')) {
        inBlock = !t.includes('*/');
        continue;
      }
      if (!t || t.startsWith('//') || /^import .* from '\.\/[\w.]+';$/.test(t)) continue;
      out.push(t);
    }
  }
  return out.join('\n') + '\n';
}

export const gzipSize = (s) => gzipSync(Buffer.from(s), { level: 9 }).length;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const code = bundle();
  if (process.argv.includes('--check')) {
    if (readFileSync(OUT, 'utf8') !== code) {
      console.error('dist/suggestd.js is out of date: run node clients/js/build.mjs');
      process.exit(1);
    }
  } else {
    mkdirSync(path.dirname(OUT), { recursive: true });
    writeFileSync(OUT, code);
  }
  console.log(`dist/suggestd.js: ${code.length} bytes, ${gzipSize(code)} bytes gzipped`);
}
