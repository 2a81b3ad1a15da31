// The list page's synonyms editor (docs/DESIGN.md §3.4) in Debian's headless Chromium against the
// real suggestd: a data steward saves sets (field errors shown by path, a concurrent
// change is a conflict), the preview serves them once published; a viewer reads them and
// has no editor, and the server refuses a viewer's PUT. Screenshots go to
// build/screenshots/dashboard-synonyms-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Suggestd, browserSkip, launchChromium } from './harness.mjs';
import { PASSWORD, SHOTS, go, pageFetch, shot, signInAs } from './dashboard-helpers.mjs';

const skip = browserSkip();
let srv, browser, tenant;

before(async () => {
  if (skip) return;
  mkdirSync(SHOTS, { recursive: true });
  srv = await new Suggestd().start();
  tenant = srv.tenant();
  const pwFile = path.join(srv.dir, 'pw.txt');
  writeFileSync(pwFile, PASSWORD + '\n');
  for (const role of ['data_steward', 'viewer'])
    srv.admin('member', 'create', '--workspace', tenant.ws, '--email', `${role}@example.com`,
      '--role', role, '--password-file', pwFile);
  browser = await launchChromium();
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
});

const signIn = (role) => signInAs(browser, srv, `${role}@example.com`);
const msgIs = (page, re) => page.waitForFunction((src) => new RegExp(src).test(document.getElementById('synonyms-msg')?.textContent || ''),
  { timeout: 10000 }, re.source);

async function setText(page, value) {
  await page.$eval('#synonyms-json', (e, v) => { e.value = v; }, value);
}

test('synonyms: a data steward edits them, publishes, and the preview matches through them', { skip }, async () => {
  const l = await srv.list(tenant.sk, 'Synonym cities', [{ value: 'New York City', rank: 5 }, { value: 'Newark', rank: 9 }]);
  const { ctx, page, errors } = await signIn('data_steward');
  await go(page, `#/lists/${l.id}`);
  await page.waitForSelector('#synonyms-save');
  assert.deepEqual(JSON.parse(await page.$eval('#synonyms-json', (e) => e.value)), []);
  assert.equal(await page.$eval('#sec-synonyms', (e) => document.getElementById(e.getAttribute('aria-labelledby'))?.tagName), 'H2');
  // Not JSON: said so, nothing sent.
  await setText(page, '[{');
  await page.click('#synonyms-save');
  await msgIs(page, /not valid JSON/);
  // A phrase that normalises to nothing: the field path is shown, nothing stored.
  await setText(page, JSON.stringify([{ type: 'equivalent', phrases: ['NYC', '--'] }]));
  await page.click('#synonyms-save');
  await msgIs(page, /synonyms\[0\]\.phrases\[1\]/);
  assert.deepEqual((await srv.api(tenant.sk, 'GET', `/lists/${l.id}/synonyms`)).json, { synonyms: [] });
  await shot(page, 'synonyms-error');
  const sets = [{ type: 'equivalent', phrases: ['NYC', 'New York City'] }];
  await setText(page, JSON.stringify(sets));
  await page.click('#synonyms-save');
  await msgIs(page, /Synonyms saved \(1 sets\)/);
  assert.deepEqual((await srv.api(tenant.sk, 'GET', `/lists/${l.id}/synonyms`)).json, { synonyms: sets });
  await shot(page, 'synonyms-saved');
  // Changed meanwhile through the API: the page's save is a conflict, not a loss.
  const other = [{ type: 'oneWay', input: 'big apple', phrases: ['New York City'] }];
  assert.equal((await srv.api(tenant.sk, 'PUT', `/lists/${l.id}/synonyms`, { synonyms: other })).status, 200);
  await setText(page, JSON.stringify([]));
  await page.click('#synonyms-save');
  await msgIs(page, /changed by someone else/);
  assert.deepEqual((await srv.api(tenant.sk, 'GET', `/lists/${l.id}/synonyms`)).json, { synonyms: other });
  // Publish from the page, then the preview finds the city through the one-way synonym.
  await go(page, '#/lists');
  await go(page, `#/lists/${l.id}`);
  await page.waitForSelector('#publish');
  await page.click('#publish');
  await page.waitForFunction(() => /is active/.test(document.getElementById('publish-state')?.textContent || ''), { timeout: 15000 });
  await go(page, '#/lists');
  await go(page, `#/lists/${l.id}`);
  await page.waitForSelector('#preview-q[data-ready]');
  await page.type('#preview-q', 'big ap');
  await page.waitForFunction(() => [...document.querySelectorAll('#preview-area [role=option]')]
    .some((o) => o.textContent === 'New York City'), { timeout: 10000 });
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('synonyms: a viewer reads them without an editor and is refused a PUT', { skip }, async () => {
  const l = await srv.list(tenant.sk, 'Viewer synonyms', [{ value: 'Television' }]);
  const sets = [{ type: 'oneWay', input: 'tv', phrases: ['television'] }];
  assert.equal((await srv.api(tenant.sk, 'PUT', `/lists/${l.id}/synonyms`, { synonyms: sets })).status, 200);
  const { ctx, page } = await signIn('viewer');
  await go(page, `#/lists/${l.id}`);
  await page.waitForSelector('#synonyms-json');
  assert.deepEqual(JSON.parse(await page.$eval('#synonyms-json', (e) => e.value)), sets);
  assert.equal(await page.$eval('#synonyms-json', (e) => e.readOnly), true);
  assert.equal(await page.$('#synonyms-save'), null);
  const read = await pageFetch(page, 'GET', `/lists/${l.id}/synonyms`);
  assert.equal(read.status, 200);
  assert.deepEqual(read.body, { synonyms: sets });
  const refused = await pageFetch(page, 'PUT', `/lists/${l.id}/synonyms`, { synonyms: [] });
  assert.equal(refused.status, 403);
  assert.deepEqual((await srv.api(tenant.sk, 'GET', `/lists/${l.id}/synonyms`)).json, { synonyms: sets });
  await shot(page, 'synonyms-viewer');
  await ctx.close();
});
