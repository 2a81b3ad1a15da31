// clients/js's Client against the real suggestd (no browser): bootstrap once, the query
// cache and its reset on a republish, minQueryChars, token refresh, selection reports.
// `counting` wraps the real fetch only to count the requests that really went out.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Suggestd } from './harness.mjs';
import { createClient, SuggestError } from '../../clients/js/src/index.js';

let srv, sk, app, pub, priv, pubKey, privKey;

before(async () => {
  srv = await new Suggestd().start();
  ({ sk, app } = srv.tenant());
  pub = await srv.list(sk, 'Cities', [{ value: 'Paris', rank: 3 }, { value: 'Parma', rank: 2 }], { visibility: 'public' });
  priv = await srv.list(sk, 'Private', [{ value: 'Paragon' }]);
  pubKey = await srv.publishableKey(app, pub.id);
  privKey = await srv.publishableKey(app, priv.id);
});

after(async () => {
  if (srv) await srv.stop();
});

function counting() {
  const calls = [];
  const f = (url, init) => {
    calls.push({ url: new URL(url), init });
    return fetch(url, init);
  };
  f.calls = calls;
  f.count = (p) => calls.filter((c) => c.url.pathname === p).length;
  return f;
}

test('bootstrap once; identical queries are answered from the cache', async () => {
  const f = counting();
  const c = createClient({ runtime: srv.runtime + '/', key: pubKey, fetch: f });
  const a = await c.query('Par');
  const b = await c.query(' par ');
  assert.deepEqual(a.items.map((i) => i.displayValue), ['Paris', 'Parma']);
  assert.equal(a, b);
  assert.equal(f.count('/v1/bootstrap'), 1);
  assert.equal(f.count('/v1/query'), 1);
  assert.equal(a.list.id, pub.id);
  assert.equal(c.policy.debounceMs, 150);
});

test('a republish (new activeVersionHash) drops the cache on the next bootstrap', async () => {
  const f = counting();
  const c = createClient({ runtime: srv.runtime, key: pubKey, fetch: f, bootstrapEveryMs: 0 });
  const before = await c.query('pa');
  assert.equal(before.items.length, 2);
  const hash = c.boot.activeVersionHash;
  const r = await srv.api(sk, 'POST', `/lists/${pub.id}/items`, { value: 'Parla', rank: 9 });
  assert.equal(r.status, 201, r.text);
  const v = await srv.api(sk, 'POST', `/lists/${pub.id}/versions`);
  assert.equal(v.json.state, 'active');
  // The runtime sees the new version within a second.
  let after;
  for (let i = 0; i < 40; i++) {
    await c.refresh();
    if (c.boot.activeVersionHash !== hash) break;
    await new Promise((res) => setTimeout(res, 100));
  }
  assert.notEqual(c.boot.activeVersionHash, hash);
  after = await c.query('pa');
  assert.deepEqual(after.items.map((i) => i.displayValue), ['Parla', 'Paris', 'Parma']);
  assert.equal(f.count('/v1/query'), 2);
});

test('within: the option and the per-call override filter by ancestor, each its own cache entry', async () => {
  const { id, ids } = await srv.list(sk, 'Places', [
    { value: 'France' }, { value: 'Spain' },
    { value: 'Paris', parent: 'France', rank: 3 }, { value: 'Pau', parent: 'France', rank: 2 },
    { value: 'Palma', parent: 'Spain', rank: 9 },
  ], { visibility: 'public' });
  const key = await srv.publishableKey(app, id);
  const f = counting();
  const c = createClient({ runtime: srv.runtime, key, fetch: f, within: ids.France });
  const shown = (a) => a.items.map((i) => i.displayValue);
  assert.deepEqual(shown(await c.query('pa')), ['Paris', 'Pau']);
  assert.equal(f.calls.at(-1).url.searchParams.get('within'), ids.France);
  assert.deepEqual(shown(await c.query('pa', { within: ids.Spain })), ['Palma']);
  assert.deepEqual(shown(await c.query('pa', { within: null })), ['Palma', 'Paris', 'Pau']);
  assert.equal(f.calls.at(-1).url.searchParams.has('within'), false);
  const before = f.count('/v1/query');
  assert.deepEqual(shown(await c.query('pa')), ['Paris', 'Pau']); // cached per within
  assert.equal(f.count('/v1/query'), before);
  await assert.rejects(c.query('pa', { within: 'nope' }), (e) => e instanceof SuggestError && e.status === 400);
});

test('a query shorter than minQueryChars never goes out', async () => {
  const p = await srv.api(sk, 'PATCH', `/lists/${pub.id}`, { queryPolicy: { minQueryChars: 3, debounceMs: 50 } });
  assert.equal(p.status, 200, p.text);
  await new Promise((res) => setTimeout(res, 1200));
  const f = counting();
  const c = createClient({ runtime: srv.runtime, key: pubKey, fetch: f });
  const a = await c.query('pa');
  assert.equal(a.code, 'query_too_short');
  assert.deepEqual(a.items, []);
  assert.equal(f.count('/v1/query'), 0);
  assert.equal(c.policy.minQueryChars, 3);
  assert.equal(c.policy.debounceMs, 50);
  await srv.api(sk, 'PATCH', `/lists/${pub.id}`, { queryPolicy: { minQueryChars: 1, debounceMs: 150 } });
});

test('private list: the token hook is called again before expiry and after a 401', async () => {
  const mint = async () => (await srv.api(sk, 'POST', '/token', { listIds: [priv.id] })).json;
  let calls = 0;
  const f = counting();
  // First hand out a token for another list (the runtime answers 401 invalid_token), then real ones.
  const other = (await srv.api(sk, 'POST', '/token', { listIds: [pub.id] })).json;
  const c = createClient({
    runtime: srv.runtime,
    key: privKey,
    fetch: f,
    getToken: async () => (++calls === 1 ? other : mint()),
  });
  const a = await c.query('para');
  assert.deepEqual(a.items.map((i) => i.displayValue), ['Paragon']);
  assert.equal(calls, 2, 'one retry with a fresh token after invalid_token');
  const auth = f.calls.filter((x) => x.url.pathname === '/v1/query').map((x) => x.init.headers.Authorization);
  assert.equal(auth.length, 1);
  // A token inside the refresh margin of its expiry is replaced before use.
  c.tokenMarginMs = 3600 * 1000 + 60000;
  await c.query('parag');
  assert.equal(calls, 3);
  // Selection on a private list: fetch keepalive with the token; the runtime records it.
  assert.equal(await c.select(a, a.items[0], 1), true);
  const ev = await srv.selection((e) => e.queryRequestId === a.requestId);
  assert.ok(ev);
  assert.equal(ev.itemId, a.items[0].itemId);
  const sel = f.calls.find((x) => x.url.pathname === '/v1/selection');
  assert.equal(sel.init.keepalive, true);
  assert.match(sel.init.headers.Authorization, /^Bearer /);
});

test('typed errors: an unknown key is a SuggestError with the runtime code', async () => {
  const c = createClient({ runtime: srv.runtime, key: 'pk_nope' });
  await assert.rejects(c.query('pa'), (e) => e instanceof SuggestError && e.code === 'invalid_key' && e.status === 401);
  const down = createClient({ runtime: 'http://127.0.0.1:1', key: pubKey });
  await assert.rejects(down.query('pa'), (e) => e.code === 'network_error' && /could not reach/.test(e.message));
});
