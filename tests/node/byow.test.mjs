// "Bring your own widget" (docs/WIDGETS.md): a third-party autocomplete library,
// @tarekraafat/autocomplete.js from npm, driven end to end in Debian's Chromium with
// @suggestd/client as its data layer (examples/byow/index.html): the server's items in the
// server's order with its highlights, the library's own filtering off, and a selection
// reported with a text/plain body (no preflight) that the analytics then count.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Suggestd, StaticServer, browserSkip, launchChromium } from './harness.mjs';

const skip = browserSkip();
let srv, web, browser, sk, list, key;

before(async () => {
  if (skip) return;
  srv = await new Suggestd().start();
  web = await new StaticServer().start();
  let app;
  ({ sk, app } = srv.tenant());
  list = await srv.list(sk, 'Cities', [
    { value: 'Paris', rank: 2100000, aliases: ['Lutece'] },
    { value: 'Parma', rank: 190000 },
    { value: 'Pamplona', rank: 200000 },
    { value: 'Le Pré-Saint-Gervais', rank: 17000 },
  ], { visibility: 'public', queryPolicy: { minQueryChars: 1 } });
  key = await srv.publishableKey(app, list.id, web.origin);
  browser = await launchChromium();
});

after(async () => {
  if (browser) await browser.close();
  if (web) await web.stop();
  if (srv) await srv.stop();
});

test('autoComplete.js shows what the server answered and reports the selection', { skip }, async () => {
  const page = await browser.newPage();
  const selections = [];
  page.on('request', (r) => {
    if (r.url().startsWith(srv.runtime + '/v1/selection'))
      selections.push({ method: r.method(), type: r.headers()['content-type'], body: r.postData() });
  });
  const lib = '/tests/node/node_modules/@tarekraafat/autocomplete.js/dist/autoComplete.min.js';
  await page.goto(`${web.origin}/examples/byow/index.html?runtime=${encodeURIComponent(srv.runtime)}` +
    `&key=${key}&lib=${encodeURIComponent(lib)}`);
  await page.focus('#search');
  // A typo the library's own filter would drop ("parsi" is no substring of any city).
  await page.keyboard.type('parsi', { delay: 30 });
  await page.waitForFunction(() => document.querySelectorAll('ul[role=listbox] li').length > 0, { timeout: 10000 });
  const shown = await page.$$eval('ul[role=listbox] li', (lis) => lis.map((li) => li.textContent));
  const api = await (await fetch(`${srv.runtime}/v1/query?key=${key}&q=parsi`, { headers: { Origin: web.origin } })).json();
  assert.deepEqual(shown, api.items.map((i) => i.displayValue));
  assert.ok(shown.includes('Paris'), shown.join());
  // The server's highlight, drawn as <mark>.
  assert.ok(await page.$('ul[role=listbox] li mark'));
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => /Chosen: /.test(document.getElementById('chosen').textContent));
  assert.equal(await page.$eval('#search', (e) => e.value), shown[0]);
  await page.waitForFunction(() => document.getElementById('chosen').dataset.reported === 'true');
  assert.equal(selections.length, 1);
  assert.equal(selections[0].method, 'POST');
  assert.match(selections[0].type, /^text\/plain/);
  // Accepted and counted by the server (analytics, docs/DESIGN.md §9: shipped within seconds),
  // for the item at position 1 of the answer on screen. (A beacon's body is not visible
  // to the page's request events.)
  const day = new Date().toISOString().slice(0, 10);
  let a;
  for (let i = 0; i < 80; i++) {
    a = await srv.api(sk, 'GET', `/lists/${list.id}/analytics?from=${day}&to=${day}`);
    if (a.status === 200 && a.json.selections === 1) break;
    await new Promise((ok) => setTimeout(ok, 250));
  }
  assert.equal(a.json.selections, 1, a.text);
  assert.deepEqual(a.json.topItems, [{ itemId: api.items[0].itemId, selections: 1, meanPosition: 1 }]);
  await page.screenshot({ path: new URL('../../build/screenshots/byow.png', import.meta.url).pathname });
  await page.close();
});
