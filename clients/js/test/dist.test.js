// The shipped single-file module: up to date with src/, same exports, within its budget.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { bundle, gzipSize, OUT } from '../build.mjs';
import * as src from '../src/index.js';
import * as dist from '../dist/suggestd.js';

test('dist/suggestd.js is what build.mjs makes from src/', () => {
  assert.equal(readFileSync(OUT, 'utf8'), bundle(), 'run: node clients/js/build.mjs');
});

test('dist exports exactly what src/index.js exports', () => {
  assert.deepEqual(Object.keys(dist).sort(), Object.keys(src).sort());
  assert.deepEqual(dist.segments('Paris', [[0, 3]]), src.segments('Paris', [[0, 3]]));
});

test('the browser bundle stays under 6 kB gzipped', () => {
  const n = gzipSize(readFileSync(OUT, 'utf8'));
  assert.ok(n < 6 * 1024, `${n} bytes gzipped`);
});
