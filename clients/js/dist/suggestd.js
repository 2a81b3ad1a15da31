// @suggestd/client — built from src/ by build.mjs; do not edit.
const isHigh = (c) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c) => c >= 0xdc00 && c <= 0xdfff;
export function ranges(text, raw) {
const n = text.length;
const out = [];
if (!Array.isArray(raw)) return out;
for (const r of raw) {
if (!Array.isArray(r) || r.length !== 2 || !Number.isInteger(r[0]) || !Number.isInteger(r[1])) continue;
let s = Math.max(0, Math.min(n, r[0]));
let e = Math.max(0, Math.min(n, r[1]));
if (s >= e) continue;
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
export class SuggestError extends Error {
constructor(code, message, status = 0, requestId = null) {
super(message);
this.name = 'SuggestError';
this.code = code;
this.status = status;
this.requestId = requestId;
}
}
const CACHE_MAX = 200;
export const normalizeQuery = (q) => String(q).trim().toLowerCase();
export function uuid() {
const b = crypto.getRandomValues(new Uint8Array(16));
b[6] = (b[6] & 0x0f) | 0x40;
b[8] = (b[8] & 0x3f) | 0x80;
const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
export class Client {
constructor(o) {
if (!o || !o.runtime || !o.key) throw new TypeError('suggestd: runtime and key are required');
this.runtime = String(o.runtime).replace(/\/+$/, '');
this.key = o.key;
this.locale = o.locale || null;
this.limit = o.limit || null;
this.within = o.within || null;
this.getToken = o.getToken || (o.token ? () => o.token : null);
this.bootstrapEveryMs = o.bootstrapEveryMs ?? 60000;
this.tokenMarginMs = o.tokenMarginMs ?? 300000;
this.fetch = o.fetch || ((...a) => globalThis.fetch(...a));
this.cache = new Map();
this.boot = null; // the last bootstrap body
this.bootAt = 0;
this.booting = null; // the bootstrap in flight
this.revalidateUntil = 0;
this.tok = null; // {value, expiresMs}
this.tokening = null;
}
get private() {
return !!this.getToken;
}
get policy() {
return (this.boot && this.boot.queryPolicy) || { minQueryChars: 1, debounceMs: 150 };
}
async token(force) {
if (!this.getToken) return null;
const t = this.tok;
if (!force && t && (t.expiresMs === 0 || Date.now() < t.expiresMs - this.tokenMarginMs)) return t.value;
if (!this.tokening) {
this.tokening = Promise.resolve(this.getToken())
.then((r) => {
const value = typeof r === 'string' ? r : r && r.accessToken;
if (!value) throw new SuggestError('token_unavailable', 'suggestd: getToken returned no access token');
let expiresMs = 0;
if (r && Number.isFinite(r.expiresAt)) expiresMs = r.expiresAt * 1000;
else if (r && Number.isFinite(r.expiresIn)) expiresMs = Date.now() + r.expiresIn * 1000;
this.tok = { value, expiresMs };
return value;
})
.finally(() => {
this.tokening = null;
});
}
return this.tokening;
}
async get(path, params, signal, cacheMode) {
const u = new URL(this.runtime + path);
for (const [k, v] of Object.entries(params)) if (v != null) u.searchParams.set(k, v);
for (let attempt = 0; ; attempt++) {
const headers = {};
const tok = await this.token(attempt > 0);
if (tok) headers.Authorization = 'Bearer ' + tok;
let res;
try {
res = await this.fetch(u.href, { headers, signal, cache: cacheMode, credentials: 'omit' });
} catch (e) {
if (e && e.name === 'AbortError') throw e;
const origin = globalThis.location ? globalThis.location.origin : 'this page';
throw new SuggestError(
'network_error',
`suggestd: could not reach ${this.runtime}, or it refused the origin ${origin} ` +
`(CORS). Check that the runtime is up and that the publishable key allows ${origin}.`,
);
}
let body = null;
try {
body = await res.json();
} catch {
body = null;
}
if (res.status === 401 && body && body.code === 'invalid_token' && this.getToken && attempt === 0) continue;
if (!res.ok || !body) {
const code = (body && body.code) || 'http_' + res.status;
let msg = (body && body.message) || res.statusText || 'request failed';
if (code === 'origin_not_allowed') {
const origin = globalThis.location ? globalThis.location.origin : 'this page';
msg = `the publishable key refused the origin ${origin}: add it to the key's allowed origins`;
}
throw new SuggestError(code, `suggestd: ${code}: ${msg}`, res.status, body && body.requestId);
}
return body;
}
}
bootstrap(force) {
const fresh = this.boot && Date.now() - this.bootAt < this.bootstrapEveryMs;
if (!force && fresh) return Promise.resolve(this.boot);
if (!this.booting) {
this.booting = this.get('/v1/bootstrap', { key: this.key }, undefined, 'no-cache')
.then((b) => {
if (this.boot && b.activeVersionHash !== this.boot.activeVersionHash) {
this.cache.clear();
this.revalidateUntil = Date.now() + 60000;
}
this.boot = b;
this.bootAt = Date.now();
return b;
})
.finally(() => {
this.booting = null;
});
}
if (this.boot && !force) {
this.booting.catch(() => {});
return Promise.resolve(this.boot);
}
return this.booting;
}
refresh() {
return this.bootstrap(true);
}
async query(q, { signal, within } = {}) {
const w = (within === undefined ? this.within : within) || null;
const boot = await this.bootstrap();
const nq = normalizeQuery(q);
if ([...nq].length < boot.queryPolicy.minQueryChars) return { items: [], code: 'query_too_short' };
const ck = nq + '\u0000' + (this.locale || '') + '\u0000' + (this.limit || '') + '\u0000' + (w || '');
const hit = this.cache.get(ck);
if (hit) {
this.cache.delete(ck); // most recently used last
this.cache.set(ck, hit);
return hit;
}
const mode = Date.now() < this.revalidateUntil ? 'no-cache' : 'default';
const ans = await this.get('/v1/query', { key: this.key, q: nq, locale: this.locale, limit: this.limit, within: w }, signal, mode);
ans.query = nq;
if (ans.code !== 'quota_exceeded') {
this.cache.set(ck, ans);
if (this.cache.size > CACHE_MAX) this.cache.delete(this.cache.keys().next().value);
}
return ans;
}
async select(answer, item, position) {
const body = JSON.stringify({
key: this.key,
selectionId: uuid(),
queryRequestId: answer.requestId,
listId: answer.list && answer.list.id,
itemId: item.itemId,
position,
query: answer.query ?? null,
});
const url = this.runtime + '/v1/selection';
try {
if (!this.private && globalThis.navigator && navigator.sendBeacon) {
if (navigator.sendBeacon(url, new Blob([body], { type: 'text/plain' }))) return true;
}
const headers = { 'Content-Type': this.private ? 'application/json' : 'text/plain' };
const tok = await this.token();
if (tok) headers.Authorization = 'Bearer ' + tok;
const res = await this.fetch(url, { method: 'POST', body, headers, keepalive: true, credentials: 'omit' });
return res.ok;
} catch {
return false;
}
}
}
export const createClient = (o) => new Client(o);
const STYLE = `
.sg-combo{position:relative}
.sg-listbox{position:absolute;left:0;right:0;z-index:var(--sg-z,1000);margin:var(--sg-gap,4px) 0 0;padding:0;list-style:none;
max-height:var(--sg-max-height,min(60vh,22rem));overflow-y:auto;-webkit-overflow-scrolling:touch;
background:var(--sg-bg,#fff);color:var(--sg-fg,#111);border:1px solid var(--sg-border,#c8c8d0);
border-radius:var(--sg-radius,8px);box-shadow:var(--sg-shadow,0 6px 24px rgba(0,0,0,.12));font:var(--sg-font,inherit)}
.sg-listbox[hidden]{display:none}
.sg-option{display:flex;flex-direction:column;justify-content:center;min-height:var(--sg-row,44px);
padding:var(--sg-pad,6px 12px);cursor:pointer;touch-action:manipulation}
.sg-option[aria-selected=true]{background:var(--sg-active-bg,#e8f0fe);color:var(--sg-active-fg,inherit)}
.sg-option mark{background:var(--sg-mark-bg,transparent);color:var(--sg-mark-fg,inherit);font-weight:var(--sg-mark-weight,700)}
.sg-description,.sg-ancestors{font-size:.85em;color:var(--sg-muted,#666)}
.sg-status{font-size:.9em;color:var(--sg-muted,#666);min-height:1.2em}
.sg-status.sg-error{color:var(--sg-error,#b00020)}`;
let seq = 0;
export function autocomplete(input, options) {
const o = options || {};
const client = o.client;
if (!client) throw new TypeError('suggestd: autocomplete needs a client');
const doc = input.ownerDocument;
const msg = Object.assign({ empty: 'No suggestions', count: (n) => (n === 1 ? '1 suggestion' : `${n} suggestions`) }, o.messages);
const base = input.id || 'sg-' + ++seq;
if (!input.id) input.id = base;
if (o.injectStyles !== false && !doc.getElementById('sg-style') && !doc.sgStyleAdopted) {
const View = doc.defaultView;
if (View && View.CSSStyleSheet && 'adoptedStyleSheets' in doc) {
const sheet = new View.CSSStyleSheet();
sheet.replaceSync(STYLE);
doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, sheet];
doc.sgStyleAdopted = true;
} else {
const st = doc.createElement('style');
st.id = 'sg-style';
st.textContent = STYLE;
doc.head.appendChild(st);
}
}
const wrap = doc.createElement('div');
wrap.className = 'sg-combo';
input.parentNode.insertBefore(wrap, input);
wrap.appendChild(input);
const list = doc.createElement('ul');
list.id = base + '-listbox';
list.className = 'sg-listbox';
list.setAttribute('role', 'listbox');
list.hidden = true;
const status = doc.createElement('div');
status.className = 'sg-status';
status.setAttribute('role', 'status');
status.setAttribute('aria-live', 'polite');
wrap.append(list, status);
const attrs = {
role: 'combobox',
'aria-autocomplete': 'list',
'aria-expanded': 'false',
'aria-controls': list.id,
autocomplete: 'off',
autocapitalize: 'none',
spellcheck: 'false',
enterkeyhint: 'go',
};
for (const [k, v] of Object.entries(attrs)) input.setAttribute(k, v);
const label = input.labels && input.labels[0];
if (label) list.setAttribute('aria-labelledby', label.id || (label.id = base + '-label'));
let answer = null; // the answer on screen
let active = -1;
let timer = 0;
let ctrl = null;
let gen = 0; // bumped by every edit: an answer for an older generation is never shown
const setStatus = (text, isError) => {
status.textContent = text;
status.classList.toggle('sg-error', !!isError);
};
function open(on) {
list.hidden = !on;
input.setAttribute('aria-expanded', on ? 'true' : 'false');
if (!on) setActive(-1);
}
function setActive(i) {
const opts = list.children;
if (active >= 0 && opts[active]) opts[active].setAttribute('aria-selected', 'false');
active = i;
if (i >= 0 && opts[i]) {
opts[i].setAttribute('aria-selected', 'true');
input.setAttribute('aria-activedescendant', opts[i].id);
opts[i].scrollIntoView({ block: 'nearest' });
} else {
input.removeAttribute('aria-activedescendant');
}
}
function render(ans) {
answer = ans;
active = -1;
list.textContent = '';
const items = ans.items || [];
items.forEach((it, i) => {
const li = doc.createElement('li');
li.id = `${list.id}-${i}`;
li.className = 'sg-option';
li.setAttribute('role', 'option');
li.setAttribute('aria-selected', 'false');
const main = doc.createElement('span');
main.className = 'sg-display';
renderHighlight(main, it.displayValue, it.highlight);
li.appendChild(main);
if (typeof it.description === 'string' && it.description) {
const d = doc.createElement('span');
d.className = 'sg-description';
d.textContent = it.description;
li.appendChild(d);
}
if (Array.isArray(it.ancestors) && it.ancestors.length) {
const a = doc.createElement('span');
a.className = 'sg-ancestors';
a.textContent = o.ancestorsLabel
? o.ancestorsLabel(it.ancestors)
: it.ancestors.map((x) => x.displayValue).join(' › ');
li.appendChild(a);
}
li.addEventListener('pointerdown', (e) => {
e.preventDefault();
choose(i);
});
list.appendChild(li);
});
open(items.length > 0);
setStatus(items.length ? msg.count(items.length) : ans.code === 'query_too_short' ? '' : msg.empty, false);
input.removeAttribute('aria-activedescendant');
}
function fail(err) {
open(false);
setStatus(err.message, true);
if (o.onError) o.onError(err);
input.dispatchEvent(new CustomEvent('suggestd:error', { detail: err }));
}
function run(g, q) {
if (ctrl) ctrl.abort(); // a stale request is cancelled, never awaited
const c = (ctrl = new AbortController());
const w = typeof o.within === 'function' ? o.within() : o.within;
client.query(q, w === undefined ? { signal: c.signal } : { signal: c.signal, within: w || null }).then(
(ans) => g === gen && render(ans),
(err) => g === gen && err.name !== 'AbortError' && fail(err),
);
}
function onInput() {
const g = ++gen;
clearTimeout(timer);
const q = input.value;
if (!q.trim()) {
if (ctrl) ctrl.abort();
open(false);
setStatus('', false);
return;
}
const wait = client.policy.debounceMs;
timer = setTimeout(() => run(g, q), wait);
}
function choose(i) {
const it = answer && answer.items && answer.items[i];
if (!it) return;
input.value = it.displayValue;
gen++; // whatever is in flight no longer matches the input
clearTimeout(timer);
open(false);
setStatus('', false);
client.select(answer, it, i + 1);
if (o.onSelect) o.onSelect(it, answer, i + 1);
input.dispatchEvent(new CustomEvent('suggestd:select', { detail: { item: it, answer, position: i + 1 } }));
}
function onKey(e) {
const n = list.children.length;
const isOpen = !list.hidden;
if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
if (!n) return;
e.preventDefault();
if (!isOpen) open(true);
const down = e.key === 'ArrowDown';
setActive(active < 0 ? (down ? 0 : n - 1) : (active + (down ? 1 : n - 1)) % n);
} else if (e.key === 'Enter') {
if (isOpen && active >= 0) {
e.preventDefault();
choose(active);
}
} else if (e.key === 'Escape') {
e.preventDefault();
if (isOpen) open(false);
else {
input.value = '';
onInput();
}
}
}
const onBlur = () => open(false);
const onFocus = () => client.bootstrap().catch(fail); // also re-checks a stale policy
input.addEventListener('input', onInput);
input.addEventListener('keydown', onKey);
input.addEventListener('blur', onBlur);
input.addEventListener('focus', onFocus);
return {
get answer() {
return answer;
},
close: () => open(false),
destroy() {
clearTimeout(timer);
if (ctrl) ctrl.abort();
input.removeEventListener('input', onInput);
input.removeEventListener('keydown', onKey);
input.removeEventListener('blur', onBlur);
input.removeEventListener('focus', onFocus);
for (const k of Object.keys(attrs)) input.removeAttribute(k);
input.removeAttribute('aria-activedescendant');
wrap.replaceWith(input);
},
};
}
