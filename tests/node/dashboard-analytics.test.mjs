// The dashboard's search analytics page (docs/ANALYTICS.md, docs/DASHBOARD.md) in Debian's
// headless Chromium against the real suggestd: known traffic drawn as SVG charts and
// tables over a date range, a bad range refused with its field, and the query-suggestions
// form's review step (dry run) then publish into another list. A viewer sees the charts
// and no form. Screenshots: build/screenshots/dashboard-analytics*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Suggestd, browserSkip, launchChromium } from './harness.mjs';
import { PASSWORD, SHOTS, go, shot, signInAs } from './dashboard-helpers.mjs';

const skip = browserSkip();
let srv, browser, sk, source, target;
const today = new Date().toISOString().slice(0, 10);
// (query, item value) of each selection report: "par" 3 times ("Par" twice), "lyon" once.
const REPORTS = [['Par', 'Paris'], ['Par', 'Paris'], ['par', 'Parma'], ['Lyon', 'Lyon']];
const QUERIES = ['par', 'par', 'lyon', 'zzz'];

before(async () => {
  if (skip) return;
  mkdirSync(SHOTS, { recursive: true });
  srv = await new Suggestd().start();
  const t = srv.tenant();
  sk = t.sk;
  const pwFile = path.join(srv.dir, 'pw.txt');
  writeFileSync(pwFile, PASSWORD + '\n');
  for (const role of ['data_steward', 'viewer'])
    srv.admin('member', 'create', '--workspace', t.ws, '--email', `${role}@example.com`, '--role', role, '--password-file', pwFile);
  source = await srv.list(sk, 'Cities', ['Paris', 'Parma', 'Lyon'].map((value) => ({ value })), { visibility: 'public' });
  target = (await srv.api(sk, 'POST', '/lists', { name: 'Popular searches' })).json.id;
  const pk = await srv.publishableKey(t.app, source.id);
  // The runtime serves the list within a moment of the publish; a 404 is not counted.
  for (let i = 0; (await fetch(`${srv.runtime}/v1/bootstrap?key=${pk}`)).status !== 200; i++) {
    assert.ok(i < 100, 'the runtime never served the list');
    await new Promise((res) => setTimeout(res, 100));
  }
  for (const q of QUERIES) assert.equal((await fetch(`${srv.runtime}/v1/query?key=${pk}&q=${q}`)).status, 200);
  for (const [query, value] of REPORTS) {
    const r = await fetch(`${srv.runtime}/v1/selection`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ key: pk, selectionId: randomUUID(), queryRequestId: 'req_x', listId: source.id, itemId: source.ids[value], position: 1, query }),
    });
    assert.equal(r.status, 200);
  }
  const deadline = Date.now() + 30000;
  for (;;) {
    const a = (await srv.api(sk, 'GET', `/lists/${source.id}/analytics?from=${today}&to=${today}`)).json;
    if (a.selections === REPORTS.length && a.queries === QUERIES.length) break;
    assert.ok(Date.now() < deadline, 'the traffic never reached the analytics: ' + JSON.stringify(a));
    await new Promise((res) => setTimeout(res, 500));
  }
  browser = await launchChromium();
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
});

const ready = (page) => page.waitForSelector('#analytics[data-ready]');

test('analytics page: charts, totals, top tables and the date range', { skip }, async () => {
  const { ctx, page, errors } = await signInAs(browser, srv, 'data_steward@example.com');
  await go(page, `#/lists/${source.id}`);
  await page.click('#analytics-link');
  await page.waitForFunction((id) => location.hash === `#/lists/${id}/analytics`, {}, source.id);
  await ready(page);
  assert.equal(await page.$eval('#analytics', (e) => e.dataset.ready), '200');
  const totals = await page.$eval('#analytics-totals', (e) => e.innerText);
  assert.match(totals, /Queries\s+4\b/);
  assert.match(totals, /No-result queries\s+1\b/);
  assert.match(totals, /Selections\s+4\b/);
  assert.match(totals, /Click-through\s+100\.00%/);
  // One point per day of the default 30-day range and per series; today's carry the counts.
  const points = await page.$$eval('#chart-activity circle', (cs) => cs.map((c) => [c.dataset.series, c.dataset.day, Number(c.dataset.value)]));
  assert.equal(points.length, 3 * 30);
  const at = (series) => points.find(([s, d]) => s === series && d === today)[2];
  assert.deepEqual([at('queries'), at('noResultQueries'), at('selections')], [4, 1, 4]);
  assert.equal(points.filter(([, d, v]) => d !== today && v !== 0).length, 0);
  assert.equal(await page.$$eval('#chart-activity polyline', (ls) => ls.length), 3);
  assert.equal(await page.$$eval('#chart-ctr circle', (cs) => cs.length), 30);
  assert.match(await page.$eval(`#chart-ctr circle[data-day="${today}"] title`, (e) => e.textContent), /100\.00%/);
  assert.deepEqual(await page.$$eval('#top-queries tbody tr', (rs) => rs.map((r) => r.innerText.split('\t'))),
    [['par', '2', '3'], ['lyon', '1', '1'], ['zzz', '1', '0']]);
  assert.deepEqual(await page.$$eval('#top-no-result tbody tr', (rs) => rs.map((r) => r.innerText.split('\t'))), [['zzz', '1']]);
  assert.equal(await page.$$eval('#top-items tbody tr', (rs) => rs.length), 3);
  await shot(page, 'analytics');

  // A range of today alone, then a range the server refuses (from after to).
  await page.$eval('#analytics-from', (e, d) => { e.value = d; }, today);
  await page.click('#analytics-range button[type=submit]');
  await page.waitForFunction(() => document.querySelectorAll('#chart-activity circle').length === 3);
  await page.$eval('#analytics-from', (e) => { e.value = '2100-01-02'; });
  await page.$eval('#analytics-to', (e) => { e.value = '2100-01-01'; });
  await page.click('#analytics-range button[type=submit]');
  await page.waitForSelector('#analytics-error');
  assert.match(await page.$eval('#analytics-error', (e) => e.textContent), /from: must not be after to/);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('query suggestions form: review (dry run), then publish into the chosen list', { skip }, async () => {
  const { ctx, page, errors } = await signInAs(browser, srv, 'data_steward@example.com');
  await go(page, `#/lists/${source.id}/analytics`);
  await page.waitForSelector('#suggest-form');
  await page.select('#suggest-target', target);
  await page.$eval('#suggest-min', (e) => { e.value = '1'; });
  await page.click('#suggest-form button[type=submit]');
  await page.waitForSelector('#suggest-result[data-done]');
  assert.equal(await page.$eval('#suggest-result', (e) => e.dataset.done), '200');
  assert.deepEqual(await page.$$eval('#suggest-result tbody tr', (rs) => rs.map((r) => r.innerText.split('\t'))),
    [['par', 'Par', '3'], ['lyon', 'Lyon', '1']]);
  // The review changed nothing.
  assert.equal((await srv.api(sk, 'GET', `/lists/${target}/items`)).json.data.length, 0);
  await shot(page, 'analytics-suggestions');
  // Too strict a threshold: the server's 409 is shown, and nothing is offered to publish.
  await page.$eval('#suggest-min', (e) => { e.value = '50'; });
  await page.click('#suggest-form button[type=submit]');
  await page.waitForSelector('#suggest-result[data-done="409"]');
  assert.equal(await page.$('#suggest-publish'), null);
  // Review again, then publish.
  await page.$eval('#suggest-min', (e) => { e.value = '1'; });
  await page.click('#suggest-form button[type=submit]');
  await page.waitForSelector('#suggest-publish');
  page.once('dialog', (d) => d.accept());
  await page.click('#suggest-publish');
  await page.waitForSelector('#suggest-published', { timeout: 20000 });
  assert.match(await page.$eval('#suggest-published', (e) => e.textContent), /version 1 is active with 2 items/);
  const items = (await srv.api(sk, 'GET', `/lists/${target}/items`)).json.data
    .map((it) => [it.value, it.displayValue, it.rank]).sort();
  assert.deepEqual(items, [['lyon', 'Lyon', 1], ['par', 'Par', 3]]);
  await shot(page, 'analytics-published');
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('viewer: the charts, and no suggestions form', { skip }, async () => {
  const { ctx, page } = await signInAs(browser, srv, 'viewer@example.com');
  await go(page, `#/lists/${source.id}/analytics`);
  await ready(page);
  assert.equal(await page.$$eval('#chart-activity polyline', (ls) => ls.length), 3);
  assert.equal(await page.$('#suggest-form'), null);
  await ctx.close();
});
