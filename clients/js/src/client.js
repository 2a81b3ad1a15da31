// The suggestd runtime client: bootstrap, queries with a per-query cache, access tokens
// for private lists, and selection reports. No dependencies; runs in browsers and in
// node >= 18 (global fetch).

/** A typed failure: `code` is the runtime's code, or one of the client's own below. */
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

/** Lower-cases and trims like the runtime asks callers to; the server normalises further. */
export const normalizeQuery = (q) => String(q).trim().toLowerCase();

/** A version 4 UUID from getRandomValues (randomUUID needs a secure context). */
export function uuid() {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export class Client {
  /**
   * @param {object} o  runtime (origin), key (publishable key), and optionally token
   *   (a string) or getToken (async () => string | {accessToken, expiresAt|expiresIn}),
   *   locale, limit (1-10), within (an item id: only its descendants are suggested),
   *   bootstrapEveryMs, tokenMarginMs, fetch.
   */
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

  /** True when the client sends an access token (a private list). */
  get private() {
    return !!this.getToken;
  }

  /** The bootstrap's queryPolicy, or the documented defaults before the first bootstrap. */
  get policy() {
    return (this.boot && this.boot.queryPolicy) || { minQueryChars: 1, debounceMs: 150 };
  }

  // --- access tokens --------------------------------------------------------------------

  async token(force) {
    if (!this.getToken) return null;
    const t = this.tok;
    if (!force && t && (t.expiresMs === 0 || Date.now() < t.expiresMs - this.tokenMarginMs)) return t.value;
    // One refresh at a time, however many requests need it.
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

  // --- HTTP -----------------------------------------------------------------------------

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
        // A browser hides why a cross-origin request failed: an unreachable runtime and a
        // refused Origin (no Access-Control-Allow-Origin) look the same to script.
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
        // The runtime answers a refused Origin with its CORS header, so the page sees this
        // typed error (not a bare network failure): say which origin and what to do.
        if (code === 'origin_not_allowed') {
          const origin = globalThis.location ? globalThis.location.origin : 'this page';
          msg = `the publishable key refused the origin ${origin}: add it to the key's allowed origins`;
        }
        throw new SuggestError(code, `suggestd: ${code}: ${msg}`, res.status, body && body.requestId);
      }
      return body;
    }
  }

  // --- bootstrap ------------------------------------------------------------------------

  /**
   * Fetches the list's policy once; later calls reuse it. With `force`, or when the last
   * one is older than bootstrapEveryMs, it asks again; a changed activeVersionHash (a
   * republish) drops every cached answer.
   */
  bootstrap(force) {
    const fresh = this.boot && Date.now() - this.bootAt < this.bootstrapEveryMs;
    if (!force && fresh) return Promise.resolve(this.boot);
    if (!this.booting) {
      this.booting = this.get('/v1/bootstrap', { key: this.key }, undefined, 'no-cache')
        .then((b) => {
          if (this.boot && b.activeVersionHash !== this.boot.activeVersionHash) {
            this.cache.clear();
            // The browser's HTTP cache may hold answers of the old version for their
            // max-age (60 s): revalidate them for that long.
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
    // A stale policy is still good while the new one is on its way.
    if (this.boot && !force) {
      this.booting.catch(() => {});
      return Promise.resolve(this.boot);
    }
    return this.booting;
  }

  /** Re-bootstraps now (call it on any signal that the list may have been republished). */
  refresh() {
    return this.bootstrap(true);
  }

  // --- queries --------------------------------------------------------------------------

  /**
   * The answer for `q`: `{items, list, requestId, code?}` exactly as the runtime sent it,
   * from the cache when this query was answered before for the current version. A query
   * shorter than minQueryChars answers `{items: [], code: 'query_too_short'}` locally.
   * `within` (an item id, or null for none) overrides the client's for this call: only
   * that item's descendants, at any depth, are suggested.
   */
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

  // --- selection reports ----------------------------------------------------------------

  /**
   * Reports that the user chose `item` (1-based `position`) from `answer`. Public lists use
   * navigator.sendBeacon (survives leaving the page); private lists need the token in an
   * Authorization header, which sendBeacon cannot send, so they use fetch with keepalive.
   * Fire and forget: resolves to true when the report was handed over, false otherwise.
   */
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

/** Shorthand for `new Client(options)`. */
export const createClient = (o) => new Client(o);
