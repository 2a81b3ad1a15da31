// docs/openapi.yaml cannot drift: it must be a valid OpenAPI 3.1 document (checked by
// @seriousme/openapi-schema-validator), and every live answer — from a walk through every
// operation against the real server here, and from the whole API suite when it recorded
// its answers (SUGGESTD_RECORD, set by `make test`) — must be documented for its route and
// status, with a body valid against the documented schema (ajv, JSON Schema 2020-12) and
// the documented required headers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Suggestd, ROOT } from './harness.mjs';

const DOC_PATH = path.join(ROOT, 'docs', 'openapi.yaml');
const RECORD = process.env.SUGGESTD_RECORD || path.join(ROOT, 'build', 'api-responses.ndjson');
const doc = parse(readFileSync(DOC_PATH, 'utf8'));
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

// --- the document as a JSON Schema registry ----------------------------------------------
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(doc, 'openapi');
const deref = (o) => {
  while (o && o.$ref) o = o.$ref.slice(2).split('/').reduce((a, k) => a[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  return o;
};
const pointer = (...parts) => 'openapi#/' + parts.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

// Templates → regexes; a literal path wins over a templated one.
const routes = Object.keys(doc.paths)
  .map((t) => ({ t, re: new RegExp('^' + t.replace(/\{[^}]+\}/g, '[^/]+') + '$'), literal: !t.includes('{') }))
  .sort((a, b) => b.literal - a.literal);

const seen = new Set(); // "METHOD template status" observed and valid

/** Checks one live answer against the document; returns a problem string or null. */
function check(rec) {
  const p = rec.path.split('?')[0];
  const route = routes.find((r) => r.re.test(p));
  if (!route) return null; // an undocumented path: the suites test its 404 themselves
  const item = doc.paths[route.t];
  const method = rec.method.toLowerCase();
  const op = item[method];
  const headers = Object.fromEntries(Object.entries(rec.headers || {}).map(([k, v]) => [k.toLowerCase(), v]));
  if (!op) {
    if (method === 'head') return null;
    if (rec.status !== 405 || !headers.allow) return `${rec.method} ${route.t}: undocumented method answered ${rec.status}`;
    return null;
  }
  const code = String(rec.status);
  const key = op.responses[code] ? code : op.responses.default ? 'default' : null;
  if (!key) return `${rec.method} ${route.t}: status ${code} is not documented`;
  const resp = deref(op.responses[key]);
  for (const [name, h] of Object.entries(resp.headers || {})) {
    if (deref(h).required && headers[name.toLowerCase()] === undefined) return `${rec.method} ${route.t} ${code}: header ${name} missing`;
  }
  const content = resp.content;
  if (resp['x-body-unchecked']) {
    seen.add(`${rec.method} ${route.t} ${code}`);
    return null;
  }
  if (!content) {
    if (rec.body) return `${rec.method} ${route.t} ${code}: a body where none is documented`;
    seen.add(`${rec.method} ${route.t} ${code}`);
    return null;
  }
  const ctype = (headers['content-type'] || '').split(';')[0].trim();
  if (!content[ctype]) return `${rec.method} ${route.t} ${code}: content-type ${ctype || '(none)'} is not documented (${Object.keys(content)})`;
  if (ctype === 'application/json') {
    let body;
    try {
      body = JSON.parse(rec.body);
    } catch {
      return `${rec.method} ${route.t} ${code}: body is not JSON`;
    }
    // Point at the schema where it is written, so $refs resolve inside the document.
    const respPtr = op.responses[key].$ref
      ? 'openapi#' + op.responses[key].$ref.slice(1)
      : pointer('paths', route.t, method, 'responses', key);
    const validate = ajv.getSchema(respPtr + '/content/application~1json/schema');
    if (!validate(body)) {
      return `${rec.method} ${rec.path.slice(0, 120)} ${code}: ${ajv.errorsText(validate.errors)} in ${rec.body.slice(0, 300)}`;
    }
  }
  seen.add(`${rec.method} ${route.t} ${code}`);
  return null;
}

test('docs/openapi.yaml is a valid OpenAPI 3.1 document', async () => {
  assert.equal(doc.openapi.startsWith('3.1'), true);
  const v = new Validator();
  const res = await v.validate(doc);
  assert.equal(res.valid, true, JSON.stringify(res.errors, null, 2));
  // Every documented JSON schema compiles.
  for (const [t, item] of Object.entries(doc.paths)) {
    for (const m of METHODS) {
      if (!item[m]) continue;
      for (const [code, r] of Object.entries(item[m].responses)) {
        const c = deref(r).content;
        if (c && c['application/json']) assert.ok(deref(c['application/json'].schema), `${m} ${t} ${code}`);
      }
    }
  }
});

// --- a walk through every operation against the real server -------------------------------
let srv;
const records = [];
before(async () => {
  srv = await new Suggestd().start();
});
after(async () => {
  if (srv) await srv.stop();
});

async function call(base, method, p, { body, headers = {}, raw } = {}) {
  const init = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers['Content-Type'] = 'application/json';
  }
  if (raw !== undefined) init.body = raw;
  const r = await fetch(base + p, init);
  const text = await r.text();
  const rec = { method, path: p, status: r.status, headers: Object.fromEntries(r.headers), body: text };
  records.push(rec);
  return { ...rec, json: () => JSON.parse(text) };
}

test('a walk through every operation answers as documented', async () => {
  const { app, sk } = srv.tenant();
  const auth = { Authorization: `Bearer ${sk}` };
  const C = (m, p, o = {}) => call(srv.control, m, '/api/v1' + p, { ...o, headers: { ...auth, ...(o.headers || {}) } });
  const R = (m, p, o) => call(srv.runtime, m, p, o);

  let l = await C('POST', '/lists', { body: { name: 'Cities', description: 'Towns' }, headers: { 'Idempotency-Key': 'k1' } });
  assert.equal(l.status, 201);
  const list = l.json().id;
  await C('POST', '/lists', { body: { name: 'Cities', description: 'Towns' }, headers: { 'Idempotency-Key': 'k1' } });
  await C('POST', '/lists', { body: { name: 'Other' }, headers: { 'Idempotency-Key': 'k1' } }); // 422
  await C('GET', '/lists?limit=1');
  await C('GET', '/lists?limit=0'); // 400
  await C('GET', `/lists/${list}`);
  await C('GET', '/lists/lst_nope'); // 404
  const etag = (await C('PATCH', `/lists/${list}`, { body: { visibility: 'public', queryPolicy: { minQueryChars: 1, debounceMs: 100 } } })).headers.etag;
  await C('PATCH', `/lists/${list}`, { body: { displayOrder: 1 }, headers: { 'If-Match': '"stale"' } }); // 412
  await C('PATCH', `/lists/${list}`, { body: { name: 'Cities' }, headers: { 'If-Match': etag } });
  const fr = await C('POST', `/lists/${list}/items`, { body: { value: 'France', displayValue: 'France', locales: {} } });
  const paris = await C('POST', `/lists/${list}/items`, { body: { value: 'Paris', rank: 5, aliases: ['Lutece'], parentId: fr.json().id } });
  await C('POST', `/lists/${list}/items`, { body: { value: 'Paris' } }); // 409 duplicate
  await C('POST', `/lists/${list}/items`, { body: { valu: 'x' } }); // 400
  const pid = paris.json().id;
  await C('GET', `/lists/${list}/items?limit=1`);
  await C('GET', `/lists/${list}/items/${pid}`);
  await C('GET', `/lists/${list}/items/itm_nope`); // 404 invalid_item
  await C('PATCH', `/lists/${list}/items/${pid}`, { body: { displayValue: 'Paris' } });
  await C('DELETE', `/lists/${list}/items/${fr.json().id}`); // 409 has children
  const tmp = await C('POST', `/lists/${list}/items`, { body: { value: 'Tmp' } });
  await C('DELETE', `/lists/${list}/items/${tmp.json().id}`); // 204
  await call(srv.control, 'POST', `/api/v1/lists/${list}/items/import?mode=append`, {
    headers: { ...auth, 'Content-Type': 'application/x-ndjson' },
    raw: '{"value":"Parma","rank":3}\n{"value":"Lyon","parentValue":"France"}\n',
  });
  await call(srv.control, 'POST', `/api/v1/lists/${list}/items/import`, { headers: { ...auth, 'Content-Type': 'text/csv' }, raw: 'x' }); // 415
  await C('GET', `/lists/${list}/items/export`);
  const v = await C('POST', `/lists/${list}/versions`);
  assert.equal(v.json().state, 'active', v.body);
  await C('GET', `/lists/${list}/versions`);
  await C('GET', `/lists/${list}/versions/${v.json().versionNumber}`);
  await C('GET', `/lists/${list}/versions/999`); // 400
  await C('POST', `/lists/${list}/versions/${v.json().versionNumber}/activate`); // 200, already active
  await C('POST', `/lists/${list}/versions/999/activate`); // 400
  const priv = (await C('POST', '/lists', { body: { name: 'Private' } })).json().id;
  await C('POST', `/lists/${priv}/items`, { body: { value: 'Paragon' } });
  await C('POST', `/lists/${priv}/versions`);
  await C('POST', '/token', { body: { listIds: [priv] } });
  await C('POST', '/token', { body: { listIds: [] } }); // 400
  await C('POST', '/token', { body: { listIds: ['lst_nope'] } }); // 404
  await call(srv.control, 'GET', '/api/v1/lists', { headers: { Authorization: 'Bearer sk_wrong_key_0000000' } }); // 401
  await call(srv.control, 'GET', '/docs/errors');
  await call(srv.control, 'GET', '/healthz');
  await call(srv.control, 'DELETE', '/api/v1/lists', { headers: auth }); // 405

  const pk = await srv.publishableKey(app, list);
  const ppk = await srv.publishableKey(app, priv);
  const okey = await srv.publishableKey(app, list, 'https://shop.example.com');
  const q = await R('GET', `/v1/query?key=${pk}&q=par`);
  assert.equal(q.status, 200);
  const ans = q.json();
  await R('GET', `/v1/query?key=${pk}&q=par`, { headers: { 'If-None-Match': q.headers.etag } }); // 304
  await R('GET', `/v1/query?key=${pk}&q=p&locale=fr&limit=3`);
  await R('GET', `/v1/query?key=${pk}`); // 400 missing q
  await R('GET', `/v1/query?key=${pk}&q=${'x'.repeat(300)}`); // 400 query_too_long
  await R('GET', `/v1/query?key=pk_nope&q=pa`); // 401
  await R('GET', `/v1/query?key=${ppk}&q=pa`); // 401 invalid_token
  await R('GET', `/v1/query?key=${okey}&q=pa`, { headers: { Origin: 'https://evil.example.com' } }); // 403
  await R('GET', `/v1/bootstrap?key=${pk}`);
  await R('GET', `/v1/bootstrap?key=pk_nope`);
  await R('OPTIONS', '/v1/query', { headers: { Origin: 'https://a.example', 'Access-Control-Request-Method': 'GET' } });
  await R('OPTIONS', '/v1/bootstrap', { headers: { Origin: 'https://a.example', 'Access-Control-Request-Method': 'GET' } });
  await R('OPTIONS', '/v1/selection', { headers: { Origin: 'https://a.example', 'Access-Control-Request-Method': 'POST' } });
  const sel = {
    key: pk,
    selectionId: '9d2c5a8e-4b1f-4f7a-8e3d-2c1b0a9f8e7d',
    queryRequestId: ans.requestId,
    listId: ans.list.id,
    itemId: ans.items[0].itemId,
    position: 1,
    query: 'par',
  };
  assert.equal((await R('POST', '/v1/selection', { body: sel })).status, 200);
  await R('POST', '/v1/selection', { body: { ...sel, position: 0 } }); // 400
  await R('POST', '/v1/selection', { raw: 'x'.repeat(5000), headers: { 'Content-Type': 'text/plain' } }); // 413
  await R('GET', '/v1/selection'); // 405
  await R('GET', '/healthz');

  // Search analytics and query suggestions, once the selection above has been shipped.
  const day = new Date().toISOString().slice(0, 10);
  const deadline = Date.now() + 30000;
  while ((await C('GET', `/lists/${list}/analytics?from=${day}&to=${day}`)).json().selections < 1) {
    assert.ok(Date.now() < deadline, 'the selection never reached the analytics');
    await new Promise((res) => setTimeout(res, 500));
  }
  await C('GET', `/lists/${list}/analytics?from=${day}&to=2000-01-01`); // 400
  const popular = (await C('POST', '/lists', { body: { name: 'Popular' } })).json().id;
  const qs = (body, headers) => C('POST', `/lists/${list}/query-suggestions`, { body: { targetListId: popular, ...body }, headers });
  assert.equal((await qs({ minSelections: 1, dryRun: true })).status, 200);
  assert.equal((await qs({ minSelections: 1 }, { 'Idempotency-Key': 'qs1' })).status, 200);
  await qs({ minSelections: 1 }, { 'Idempotency-Key': 'qs1' }); // replayed
  await qs({ minSelections: 1000 }); // 409 no_qualifying_queries
  await qs({ days: 0 }); // 400
  await qs({ targetListId: 'lst_nope' }); // 404

  const problems = records.map(check).filter(Boolean);
  assert.deepEqual(problems, []);
  // Every operation was exercised with a success status.
  for (const [t, item] of Object.entries(doc.paths)) {
    for (const m of METHODS) {
      if (!item[m]) continue;
      const ok = Object.keys(item[m].responses).filter((c) => /^2/.test(c));
      assert.ok(ok.some((c) => seen.has(`${m.toUpperCase()} ${t} ${c}`)), `${m.toUpperCase()} ${t} never answered ${ok}`);
    }
  }
});

test('every live answer recorded by the API suite is documented', { skip: !existsSync(RECORD) && process.env.CI !== 'true' && `no ${RECORD} (run make api with SUGGESTD_RECORD)` }, () => {
  const lines = readFileSync(RECORD, 'utf8').split('\n').filter(Boolean);
  assert.ok(lines.length > 100, `only ${lines.length} recorded answers`);
  const problems = [];
  for (const l of lines) {
    const p = check(JSON.parse(l));
    if (p && problems.length < 20) problems.push(p);
  }
  assert.deepEqual(problems, []);
});
