// clients/js/index.d.ts compiles and describes the package's use (types/usage.ts), under
// tsc --strict with the DOM library.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

test('index.d.ts type-checks a strict usage file', () => {
  const tsc = path.join(here, 'node_modules', 'typescript', 'bin', 'tsc');
  let out = '';
  try {
    execFileSync(process.execPath, [tsc, '--noEmit', '--strict', '--target', 'es2022', '--module', 'es2022',
      '--moduleResolution', 'bundler', '--lib', 'es2022,dom', path.join(here, 'types', 'usage.ts')], { encoding: 'utf8' });
  } catch (e) {
    out = (e.stdout || '') + (e.stderr || '');
  }
  assert.equal(out, '');
});
