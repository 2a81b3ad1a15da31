// Highlight rendering: turns a displayValue and the `highlight` ranges of a query answer
// ([start, end) pairs of UTF-16 code-unit offsets, docs/DESIGN.md §3.2) into marked segments.
// Ranges from the network are untrusted: non-integers are dropped, ends are clipped to
// the text, a boundary inside a surrogate pair is widened to the whole character, and
// overlapping or touching ranges are merged, so the output always covers the text once.

const isHigh = (c) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c) => c >= 0xdc00 && c <= 0xdfff;

/** Normalised, sorted, merged ranges of `ranges` over `text`. */
export function ranges(text, raw) {
  const n = text.length;
  const out = [];
  if (!Array.isArray(raw)) return out;
  for (const r of raw) {
    if (!Array.isArray(r) || r.length !== 2 || !Number.isInteger(r[0]) || !Number.isInteger(r[1])) continue;
    let s = Math.max(0, Math.min(n, r[0]));
    let e = Math.max(0, Math.min(n, r[1]));
    if (s >= e) continue;
    // Never cut a character in two: a start on a low surrogate moves back to its high
    // half, an end just after a high surrogate moves forward past its low half.
    if (s > 0 && s < n && isLow(text.charCodeAt(s)) && isHigh(text.charCodeAt(s - 1))) s--;
    if (e > 0 && e < n && isLow(text.charCodeAt(e)) && isHigh(text.charCodeAt(e - 1))) e++;
    out.push([s, e]);
  }
  out.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const merged = [];
  for (const r of out) {
    const last = merged[merged.length - 1];
    if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
    else merged.push(r);
  }
  return merged;
}

/** [{text, mark}] covering `text` exactly once, in order; `mark` is true inside a range. */
export function segments(text, raw) {
  const segs = [];
  let at = 0;
  for (const [s, e] of ranges(text, raw)) {
    if (s > at) segs.push({ text: text.slice(at, s), mark: false });
    segs.push({ text: text.slice(s, e), mark: true });
    at = e;
  }
  if (at < text.length || segs.length === 0) segs.push({ text: text.slice(at), mark: false });
  return segs;
}

/** Replaces the children of `el` with the text, each highlighted range in a <mark>. */
export function renderHighlight(el, text, raw) {
  const doc = el.ownerDocument;
  el.textContent = '';
  for (const seg of segments(text, raw)) {
    if (!seg.text) continue;
    if (seg.mark) {
      const m = doc.createElement('mark');
      m.textContent = seg.text;
      el.appendChild(m);
    } else {
      el.appendChild(doc.createTextNode(seg.text));
    }
  }
}
