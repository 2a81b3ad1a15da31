// The browser client and widget (clients/js) in Debian's Chromium, driven headless by
// puppeteer-core, against the real suggestd on one origin while examples/browser is
// served from another. Outside CI the suite skips when no Chromium is installed; under
// CI=true it must run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Suggestd, StaticServer, ROOT, browserSkip, launchChromium } from './harness.mjs';

const skip = browserSkip();
const SHOTS = path.join(ROOT, 'build', 'screenshots');

let srv, web, browser, sk, app, pub, priv, pubKey, privKey, refusedKey, privToken;

const CITIES = [
  { value: 'France', rank: 10 },
  { value: 'Paris', rank: 2100000, aliases: ['Lutece'], parent: 'France' },
  // A description is shown under the name as text, never as markup.
  { value: 'Parma', rank: 190000, description: '<img src=x onerror="window.pwned=1">Emilia & "Italy"' },
  { value: 'Paramaribo', rank: 240000 },
  { value: 'Pamplona', rank: 200000 },
  { value: 'Sant Julià de Lòria', rank: 9000 },
  { value: 'Pärnu', rank: 50000 },
];

before(async () => {
  if (skip) return;
  srv = await new Suggestd().start();
  web = await new StaticServer().start();
  ({ sk, app } = srv.tenant());
  // A 300 ms debounce keeps "five fast keystrokes, at most two queries" true on a busy machine.
  pub = await srv.list(sk, 'Cities', CITIES, { visibility: 'public', queryPolicy: { minQueryChars: 1, debounceMs: 300 } });
  priv = await srv.list(sk, 'Secret projects', [{ value: 'Paragon' }, { value: 'Parsec' }]);
  pubKey = await srv.publishableKey(app, pub.id, web.origin);
  privKey = await srv.publishableKey(app, priv.id);
  refusedKey = await srv.publishableKey(app, pub.id, 'https://shop.example.com');
  const t = await srv.api(sk, 'POST', '/token', { listIds: [priv.id] });
  assert.equal(t.status, 200, t.text);
  privToken = t.json.accessToken;
  browser = await launchChromium();
});

after(async () => {
  if (browser) await browser.close();
  if (web) await web.stop();
  if (srv) await srv.stop();
});

/** Opens the example page with the widget; records the page's runtime traffic. */
async function openPage(params, viewport = { width: 800, height: 600 }) {
  const page = await browser.newPage();
  await page.setViewport(viewport);
  const sent = [];
  const answers = [];
  page.on('request', (r) => {
    if (r.url().startsWith(srv.runtime)) sent.push({ url: new URL(r.url()), method: r.method(), headers: r.headers(), body: r.postData() });
  });
  page.on('response', async (r) => {
    const u = new URL(r.url());
    if (r.url().startsWith(srv.runtime) && u.pathname === '/v1/query' && r.status() === 200) {
      answers.push({ q: u.searchParams.get('q'), body: await r.json().catch(() => null) });
    }
  });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  const qs = new URLSearchParams({ runtime: srv.runtime, ...params });
  await page.goto(`${web.origin}/examples/browser/index.html?${qs}`);
  await page.waitForFunction(() => window.suggestd && window.suggestd.client.boot);
  const queries = () => sent.filter((s) => s.url.pathname === '/v1/query' && s.method === 'GET');
  return { page, sent, answers, queries, errors };
}

const state = (page) =>
  page.evaluate(() => {
    const input = document.getElementById('search');
    const lb = document.getElementById(input.getAttribute('aria-controls'));
    return {
      role: input.getAttribute('role'),
      expanded: input.getAttribute('aria-expanded'),
      autocomplete: input.getAttribute('aria-autocomplete'),
      activedescendant: input.getAttribute('aria-activedescendant'),
      value: input.value,
      listboxRole: lb && lb.getAttribute('role'),
      hidden: lb ? lb.hidden : null,
      status: document.querySelector('.sg-status').textContent,
      chosen: document.getElementById('chosen').textContent,
      options: lb
        ? [...lb.children].map((li) => ({
            id: li.id,
            role: li.getAttribute('role'),
            selected: li.getAttribute('aria-selected'),
            display: li.querySelector('.sg-display').textContent,
            marks: [...li.querySelectorAll('.sg-display mark')].map((m) => m.textContent),
            ancestors: li.querySelector('.sg-ancestors') ? li.querySelector('.sg-ancestors').textContent : null,
            description: li.querySelector('.sg-description') ? li.querySelector('.sg-description').textContent : null,
            elements: li.querySelectorAll('.sg-description *').length,
          }))
        : [],
    };
  });

/** The marks the renderer must draw for a server item: its highlight ranges, merged. */
function expectedMarks(item) {
  if (!Array.isArray(item.highlight)) return [];
  const rs = item.highlight.filter(([s, e]) => s < e).sort((a, b) => a[0] - b[0]);
  const out = [];
  for (const r of rs) {
    const last = out[out.length - 1];
    if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
    else out.push([...r]);
  }
  return out.map(([s, e]) => item.displayValue.slice(s, e));
}

test('typing shows an accessible listbox; five fast keystrokes send at most two queries', { skip }, async () => {
  const { page, queries, answers, errors } = await openPage({ key: pubKey });
  const before = await state(page);
  assert.equal(before.role, 'combobox');
  assert.equal(before.autocomplete, 'list');
  assert.equal(before.expanded, 'false');
  assert.equal(before.listboxRole, 'listbox');
  await page.type('#search', 'paris', { delay: 25 });
  await page.waitForFunction(() => document.getElementById('search').getAttribute('aria-expanded') === 'true');
  await new Promise((r) => setTimeout(r, 400)); // any late query would have gone out by now
  assert.ok(queries().length >= 1 && queries().length <= 2, `queries sent: ${queries().map((q) => q.url.search)}`);
  const s = await state(page);
  const ans = answers.find((a) => a.q === 'paris').body;
  assert.deepEqual(s.options.map((o) => o.display), ans.items.map((i) => i.displayValue));
  assert.equal(s.options[0].display, 'Paris');
  assert.equal(s.options[0].role, 'option');
  assert.equal(s.options[0].ancestors, 'France', 'ancestors are shown when present');
  for (let i = 0; i < ans.items.length; i++) assert.deepEqual(s.options[i].marks, expectedMarks(ans.items[i]));
  mkdirSync(SHOTS, { recursive: true });
  for (let i = 0; i < 3; i++) await page.keyboard.press('Backspace'); // "pa": several items
  await page.waitForFunction(() => document.querySelectorAll('.sg-option').length > 2);
  await page.keyboard.press('ArrowDown');
  await page.screenshot({ path: path.join(SHOTS, 'widget.png') });
  const pa = await state(page);
  const paAns = answers.find((a) => a.q === 'pa').body;
  for (let i = 0; i < paAns.items.length; i++) assert.deepEqual(pa.options[i].marks, expectedMarks(paAns.items[i]));
  // The description, when the answer carries one, under the display value as plain text.
  assert.deepEqual(pa.options.map((o) => o.description), paAns.items.map((i) => i.description ?? null));
  const parma = pa.options.find((o) => o.display === 'Parma');
  assert.equal(parma.description, '<img src=x onerror="window.pwned=1">Emilia & "Italy"');
  assert.equal(parma.elements, 0);
  assert.equal(pa.options.find((o) => o.display === 'Paris').description, null);
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the highlight renderer draws <mark> ranges in the DOM, surrogate pairs intact', { skip }, async () => {
  const { page } = await openPage({ key: pubKey });
  const marks = await page.evaluate(async () => {
    const { renderHighlight } = await import('/clients/js/dist/suggestd.js');
    const el = document.createElement('span');
    // "I 😀 pizza": the emoji is two UTF-16 code units, so "pi" is [5, 7); [2, 3) cuts the
    // emoji in half and must be widened to the whole character.
    renderHighlight(el, 'I \u{1F600} pizza', [[5, 7], [2, 3]]);
    return { html: el.innerHTML, marks: [...el.querySelectorAll('mark')].map((m) => m.textContent) };
  });
  assert.deepEqual(marks.marks, ['\u{1F600}', 'pi']);
  assert.equal(marks.html, 'I <mark>\u{1F600}</mark> <mark>pi</mark>zza');
  await page.close();
});

test('keyboard: arrows move aria-activedescendant, Enter chooses and reports, Escape closes then clears', { skip }, async () => {
  const { page, answers } = await openPage({ key: pubKey });
  await page.type('#search', 'pa', { delay: 10 });
  await page.waitForFunction(() => document.querySelectorAll('.sg-option').length > 2);
  await page.keyboard.press('ArrowDown');
  let s = await state(page);
  assert.equal(s.activedescendant, s.options[0].id);
  assert.equal(s.options[0].selected, 'true');
  await page.keyboard.press('ArrowDown');
  s = await state(page);
  assert.equal(s.activedescendant, s.options[1].id);
  assert.deepEqual(s.options.map((o) => o.selected), s.options.map((_, i) => (i === 1 ? 'true' : 'false')));
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('ArrowUp'); // wraps to the last option
  s = await state(page);
  assert.equal(s.activedescendant, s.options[s.options.length - 1].id);
  await page.keyboard.press('ArrowDown'); // back to the first
  await page.keyboard.press('ArrowDown'); // the second
  await page.keyboard.press('Enter');
  s = await state(page);
  const ans = answers.find((a) => a.q === 'pa').body;
  const chosen = ans.items[1];
  assert.equal(s.value, chosen.displayValue);
  assert.equal(s.expanded, 'false');
  assert.equal(s.hidden, true);
  assert.equal(s.activedescendant, null);
  assert.match(s.chosen, new RegExp(chosen.displayValue));
  // The report went out by sendBeacon and the runtime recorded it.
  const ev = await srv.selection((e) => e.itemId === chosen.itemId && e.queryRequestId === ans.requestId);
  assert.ok(ev, `no selection event for ${chosen.itemId}: ${JSON.stringify(srv.selections())}`);
  assert.equal(ev.position, 2);
  assert.equal(ev.listId, pub.id);
  assert.equal(ev.query, 'pa');

  // Escape closes an open list; a second Escape clears the input.
  await page.click('#search', { clickCount: 3 });
  await page.type('#search', 'pam', { delay: 10 });
  await page.waitForFunction(() => document.getElementById('search').getAttribute('aria-expanded') === 'true');
  await page.keyboard.press('Escape');
  s = await state(page);
  assert.equal(s.expanded, 'false');
  assert.equal(s.value, 'pam');
  await page.keyboard.press('Escape');
  s = await state(page);
  assert.equal(s.value, '');
  await page.close();
});

test('a stale answer is never rendered over a newer one', { skip }, async () => {
  const { page, queries } = await openPage({ key: pubKey });
  // Hold the answer to "par" until "pam" has been answered and rendered.
  await page.setRequestInterception(true);
  let release;
  const held = new Promise((r) => (release = r));
  page.on('request', async (r) => {
    const u = new URL(r.url());
    if (u.pathname === '/v1/query' && u.searchParams.get('q') === 'par') {
      await held;
      r.continue().catch(() => {});
    } else r.continue();
  });
  await page.type('#search', 'par', { delay: 5 });
  await page.waitForFunction(() => true);
  while (!queries().some((q) => q.url.searchParams.get('q') === 'par')) await new Promise((r) => setTimeout(r, 20));
  await page.keyboard.press('Backspace');
  await page.type('#search', 'm', { delay: 5 });
  await page.waitForFunction(() => [...document.querySelectorAll('.sg-display')].some((e) => e.textContent === 'Pamplona'));
  release();
  await new Promise((r) => setTimeout(r, 300));
  const s = await state(page);
  assert.deepEqual(s.options.map((o) => o.display), ['Pamplona']);
  await page.close();
});

test('private list: queries carry the token and the selection goes out with fetch keepalive + Authorization', { skip }, async () => {
  const { page, sent, answers } = await openPage({ key: privKey, token: privToken });
  await page.type('#search', 'para', { delay: 10 });
  // docs/DESIGN.md §3.1: "Paragon" matches exactly, "Parsec" with one edit ("pars"), after it.
  await page.waitForFunction(() => document.querySelectorAll('.sg-option').length === 2);
  assert.deepEqual((await state(page)).options.map((o) => o.display), ['Paragon', 'Parsec']);
  const q = sent.find((r) => r.url.pathname === '/v1/query' && r.method === 'GET');
  assert.equal(q.headers.authorization, `Bearer ${privToken}`);
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  const ans = answers.find((a) => a.q === 'para').body;
  const ev = await srv.selection((e) => e.listId === priv.id && e.queryRequestId === ans.requestId);
  assert.ok(ev, 'the private selection report reached the runtime');
  assert.equal(ev.itemId, ans.items[0].itemId);
  const post = sent.find((r) => r.url.pathname === '/v1/selection' && r.method === 'POST');
  assert.equal(post.headers.authorization, `Bearer ${privToken}`);
  await page.close();
});

test('private list without a token: the typed error is shown', { skip }, async () => {
  const page = await browser.newPage();
  const qs = new URLSearchParams({ runtime: srv.runtime, key: privKey });
  await page.goto(`${web.origin}/examples/browser/index.html?${qs}`);
  await page.waitForFunction(() => /invalid_token/.test(document.querySelector('.sg-status')?.textContent || ''));
  await page.close();
});

test('a key that does not allow this origin: the typed refusal surfaces as a clear error', { skip }, async () => {
  const page = await browser.newPage();
  const qs = new URLSearchParams({ runtime: srv.runtime, key: refusedKey });
  await page.goto(`${web.origin}/examples/browser/index.html?${qs}`);
  await page.waitForFunction(() => /refused the origin/.test(document.querySelector('.sg-status')?.textContent || ''));
  const msg = await page.$eval('.sg-status', (e) => e.textContent);
  assert.match(msg, new RegExp(web.origin.replace(/[.:/]/g, '\\$&')));
  // The runtime's 403 carries Access-Control-Allow-Origin, so the page reads the typed
  // error rather than a network failure.
  assert.match(msg, /origin_not_allowed/);
  assert.equal(await page.$eval('.sg-status', (e) => e.classList.contains('sg-error')), true);
  // The runtime really refused it (not a network failure): the same call from a server says so.
  const r = await fetch(`${srv.runtime}/v1/bootstrap?key=${refusedKey}`, { headers: { Origin: web.origin } });
  assert.equal(r.status, 403);
  assert.equal((await r.json()).code, 'origin_not_allowed');
  await page.close();
});

test('mobile viewport: options are touch-sized and a tap chooses', { skip }, async () => {
  const { page } = await openPage({ key: pubKey }, { width: 375, height: 667, isMobile: true, hasTouch: true });
  await page.type('#search', 'pa', { delay: 10 });
  await page.waitForFunction(() => document.querySelectorAll('.sg-option').length > 2);
  const h = await page.$eval('.sg-option', (e) => e.getBoundingClientRect().height);
  assert.ok(h >= 44, `option height ${h}`);
  await page.screenshot({ path: path.join(SHOTS, 'widget-mobile.png') });
  await page.tap('.sg-option');
  const s = await state(page);
  assert.equal(s.expanded, 'false');
  assert.notEqual(s.value, 'pa');
  await page.close();
});
