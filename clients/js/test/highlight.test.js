// The highlight renderer on fixture answers (docs/DESIGN.md §3.2: [start, end) UTF-16 offsets).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ranges, segments } from '../src/index.js';

const marked = (text, h) => segments(text, h).filter((s) => s.mark).map((s) => s.text);
const whole = (text, h) => segments(text, h).map((s) => s.text).join('');

test('tier 0: a prefix at 0', () => {
  const item = { displayValue: 'Paris', highlight: [[0, 3]] };
  assert.deepEqual(segments(item.displayValue, item.highlight), [
    { text: 'Par', mark: true },
    { text: 'is', mark: false },
  ]);
});

test('tier 2: the matched word inside the text', () => {
  const it = { displayValue: 'Sant Julià de Lòria', highlight: [[5, 10]] };
  assert.deepEqual(marked(it.displayValue, it.highlight), ['Julià']);
  assert.equal(whole(it.displayValue, it.highlight), it.displayValue);
});

test('alias match: [] marks nothing and keeps the text', () => {
  assert.deepEqual(segments('Paris', []), [{ text: 'Paris', mark: false }]);
  assert.deepEqual(segments('Paris', undefined), [{ text: 'Paris', mark: false }]);
});

test('surrogate pairs are counted in UTF-16 code units', () => {
  // "𝔘nicode": U+1D518 is two code units, so the first character is [0, 2).
  const text = '\u{1D518}nicode';
  assert.equal(text.length, 8);
  assert.deepEqual(marked(text, [[0, 3]]), ['\u{1D518}n']);
  // An emoji in the middle: "I ❤️ 😀 pizza", highlight "pi" after the emoji.
  const t2 = 'I \u{1F600} pizza';
  const at = t2.indexOf('pizza');
  assert.equal(at, 5);
  assert.deepEqual(marked(t2, [[at, at + 2]]), ['pi']);
});

test('a range that cuts a surrogate pair is widened to the whole character', () => {
  const text = 'a\u{1F600}b';
  assert.deepEqual(marked(text, [[2, 3]]), ['\u{1F600}']);
  assert.deepEqual(marked(text, [[0, 2]]), ['a\u{1F600}']);
  assert.deepEqual(ranges(text, [[2, 2]]), []);
  assert.deepEqual(ranges(text, [[1, 2]]), [[1, 3]]);
});

test('hostile ranges: clipped, merged, sorted, junk ignored', () => {
  assert.deepEqual(ranges('abcdef', [[4, 99], [-5, 1], [1, 2], [3, 3], ['x', 2], [2, 1], null, [1]]), [
    [0, 2],
    [4, 6],
  ]);
  assert.deepEqual(ranges('abc', 'nope'), []);
  assert.equal(whole('abcdef', [[5, 1], [2, 4], [3, 5]]), 'abcdef');
  assert.deepEqual(marked('abcdef', [[2, 4], [3, 5]]), ['cde']);
  assert.deepEqual(ranges('', [[0, 1]]), []);
});
