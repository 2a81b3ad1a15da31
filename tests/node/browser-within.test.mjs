// The example page's filtered box (examples/browser, "Filtered by ancestor") in Debian's
// Chromium, driven headless by puppeteer-core, against the real suggestd: choose a
// country in the first box, then the city box sends `within=<the country's itemId>` and
// suggests only that country's cities, although other countries' cities match the same
// text better. Outside CI the suite skips when no Chromium is installed; under CI=true
// it must run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Suggestd, StaticServer, browserSkip, launchChromium } from './harness.mjs';

const skip = browserSkip();

let srv, web, browser, pubKey;

// "pa" matches cities of all three countries; Italy's rank highest without the filter.
const ITEMS = [
  { value: 'France', rank: 10 },
  { value: 'Italy', rank: 10 },
  { value: 'Spain', rank: 10 },
  { value: 'Paris', rank: 2100000, parent: 'France' },
  { value: 'Pau', rank: 77000, parent: 'France' },
  { value: 'Lyon', rank: 500000, parent: 'France' },
  { value: 'Palermo', rank: 3600000, parent: 'Italy' },
  { value: 'Padova', rank: 3500000, parent: 'Italy' },
  { value: 'Parma', rank: 3400000, parent: 'Italy' },
  { value: 'Pamplona', rank: 200000, parent: 'Spain' },
  { value: 'Palma', rank: 400000, parent: 'Spain' },
];
const FRANCE = ['Paris', 'Pau'];
const SPAIN = ['Palma', 'Pamplona'];

before(async () => {
  if (skip) return;
  srv = await new Suggestd().start();
  web = await new StaticServer().start();
  const { sk, app } = srv.tenant();
  const list = await srv.list(sk, 'Places', ITEMS, { visibility: 'public', queryPolicy: { minQueryChars: 1, debounceMs: 50 } });
  pubKey = await srv.publishableKey(app, list.id, web.origin);
  browser = await launchChromium();
});

after(async () => {
  if (browser) await browser.close();
  if (web) await web.stop();
  if (srv) await srv.stop();
});

/** The options of the listbox an input controls, as displayed. */
const options = (page, sel) =>
  page.evaluate((s) => {
    const lb = document.getElementById(document.querySelector(s).getAttribute('aria-controls'));
    return lb && !lb.hidden ? [...lb.querySelectorAll('.sg-option .sg-display')].map((d) => d.textContent) : [];
  }, sel);

/** Types text into a cleared box and waits for its listbox to show exactly `want`. */
async function typeAndWait(page, sel, text, want) {
  await page.click(sel, { clickCount: 3 });
  await page.keyboard.press('Backspace');
  await page.type(sel, text, { delay: 20 });
  await page
    .waitForFunction(
      (s, w) => {
        const lb = document.getElementById(document.querySelector(s).getAttribute('aria-controls'));
        if (!lb || lb.hidden) return false;
        const got = [...lb.querySelectorAll('.sg-option .sg-display')].map((d) => d.textContent);
        return JSON.stringify(got) === JSON.stringify(w);
      },
      { timeout: 5000 },
      sel,
      want,
    )
    .catch(async () => assert.deepEqual(await options(page, sel), want, `${sel} after typing ${text}`));
}

/** Chooses a country: types its start and presses Enter on the first option. */
async function chooseCountry(page, start, name) {
  await typeAndWait(page, '#country', start, [name]);
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => !document.getElementById('city').disabled);
}

test('the city box suggests only the chosen country\'s cities (within)', { skip }, async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  const sent = [];
  const answers = [];
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (r.url().startsWith(srv.runtime) && u.pathname === '/v1/query') sent.push(u);
  });
  page.on('response', async (r) => {
    const u = new URL(r.url());
    if (r.url().startsWith(srv.runtime) && u.pathname === '/v1/query' && r.status() === 200)
      answers.push({ url: u, body: await r.json().catch(() => null) });
  });
  const qs = new URLSearchParams({ runtime: srv.runtime, key: pubKey });
  await page.goto(`${web.origin}/examples/browser/index.html?${qs}`);
  await page.waitForFunction(() => window.suggestd && window.suggestd.client.boot);
  // Before a country is chosen the city box is disabled.
  assert.equal(await page.$eval('#city', (el) => el.disabled), true);
  // Unfiltered, "pa" is led by Italy's cities.
  await typeAndWait(page, '#search', 'pa', ['Palermo', 'Padova', 'Parma', 'Paris', 'Palma', 'Pamplona', 'Pau']);

  await chooseCountry(page, 'fra', 'France');
  const france = answers.find((a) => a.url.searchParams.get('q') === 'fra').body.items[0];
  assert.equal(france.displayValue, 'France');
  assert.equal(await page.$eval('#city', (el) => el.placeholder), 'A city in France…');
  await typeAndWait(page, '#city', 'pa', FRANCE);
  const cityQueries = sent.filter((u) => u.searchParams.has('within'));
  assert.ok(cityQueries.length >= 1, 'the city box sent within');
  for (const u of cityQueries) assert.equal(u.searchParams.get('within'), france.itemId);
  // Every item the runtime answered the city box lies under France.
  for (const a of answers.filter((x) => x.url.searchParams.has('within')))
    for (const it of a.body.items) assert.deepEqual(it.ancestors.map((x) => x.displayValue), ['France'], it.displayValue);
  // A city of another country is not suggested at all, typed in full.
  await typeAndWait(page, '#city', 'palermo', []);
  // Choosing it sets the output line.
  await typeAndWait(page, '#city', 'par', ['Paris']);
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  assert.equal(await page.$eval('#city-chosen', (el) => el.textContent), 'Chosen: Paris, France');

  // Another country: the same box now filters by Spain.
  await chooseCountry(page, 'spa', 'Spain');
  const spain = answers.find((a) => a.url.searchParams.get('q') === 'spa').body.items[0];
  await typeAndWait(page, '#city', 'pa', SPAIN);
  const last = sent.filter((u) => u.searchParams.has('within')).pop();
  assert.equal(last.searchParams.get('within'), spain.itemId);
  assert.deepEqual(errors, []);
  await page.close();
});
