// The dashboard's later pages in Debian's headless Chromium against the real suggestd:
// the quota form (owners only), the audit log (admins, paged), the account page (password
// change ends the member's other sessions), paged lists, the live preview of a private
// list without a publishable key, session expiry and rate-limited sign-in as the user sees
// them, and no secret in any page or answer after its first showing. Screenshots go to
// build/screenshots/dashboard-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Suggestd, browserSkip, launchChromium } from './harness.mjs';
import { PASSWORD, SHOTS, go, pageFetch, shot, signInAs, text } from './dashboard-helpers.mjs';

const skip = browserSkip();
const ROLES = ['owner', 'admin', 'data_steward', 'viewer'];
let srv, browser, tenant;

/** Members of every role in `ws` of `server`, password PASSWORD. */
function members(server, ws, roles = ROLES, prefix = '') {
  const pwFile = path.join(server.dir, 'pw.txt');
  writeFileSync(pwFile, PASSWORD + '\n');
  for (const role of roles)
    server.admin('member', 'create', '--workspace', ws, '--email', `${prefix}${role}@example.com`,
      '--role', role, '--password-file', pwFile);
}

before(async () => {
  if (skip) return;
  mkdirSync(SHOTS, { recursive: true });
  srv = await new Suggestd().start();
  tenant = srv.tenant();
  members(srv, tenant.ws);
  browser = await launchChromium();
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
});

const signIn = (role, viewport) => signInAs(browser, srv, `${role}@example.com`, viewport);
const statusIs = (page, want) => page.waitForFunction((w) => document.getElementById('status').textContent === w, {}, want);

test('quota: the owner edits it on the application page; an admin sees no form and is refused', { skip }, async () => {
  const { ctx, page, errors } = await signIn('owner');
  await go(page, '#/applications');
  await page.click('button[aria-label="Open web"]');
  await page.waitForSelector('#quota-form');
  assert.ok(await page.$('label[for=quota]'));
  await page.type('#quota', '5000');
  await page.keyboard.press('Enter'); // the keyboard alone submits it
  await page.waitForFunction(() => /5,000 queries/.test(document.getElementById('quota-msg').textContent));
  const apps = await pageFetch(page, 'GET', '/applications');
  assert.equal(apps.body.data.find((a) => a.name === 'web').monthlyQuota, 5000);
  await shot(page, 'application-owner');
  // Empty means unlimited.
  await page.$eval('#quota', (e) => { e.value = ''; });
  await page.click('#quota-form button[type=submit]');
  await page.waitForFunction(() => /unlimited/.test(document.getElementById('quota-msg').textContent));
  assert.deepEqual(errors, []);
  await ctx.close();

  for (const role of ['admin', 'data_steward', 'viewer']) {
    const s = await signIn(role);
    await go(s.page, '#/applications');
    await s.page.click('button[aria-label="Open web"]');
    await s.page.waitForSelector('#app-detail h2');
    assert.equal(await s.page.$('#quota-form'), null, role);
    const r = await pageFetch(s.page, 'PATCH', `/applications/${tenant.app}`, { monthlyQuota: 1 });
    assert.equal(r.status, 403, role);
    assert.equal(r.body.details.reason, 'insufficient_role');
    await s.ctx.close();
  }
});

test('audit log: admins read it a page at a time; viewers and stewards have no link and are refused', { skip }, async () => {
  const { ctx, page, errors } = await signIn('admin');
  // Enough writes for more than one page (25 a page).
  for (let i = 0; i < 30; i++) assert.equal((await pageFetch(page, 'POST', '/applications', { name: `App ${i}` })).status, 201);
  await page.click('#nav-audit a');
  await page.waitForSelector('#audit tbody tr');
  assert.equal(await page.$$eval('#audit tbody tr', (r) => r.length), 25);
  assert.match(await page.$eval('#audit tbody tr', (e) => e.textContent), /application\.create/);
  await shot(page, 'audit');
  const first = await page.$eval('#audit tbody', (e) => e.textContent);
  await page.click('#audit-next');
  await page.waitForFunction((f) => document.querySelector('#audit tbody').textContent !== f, {}, first);
  assert.ok(await page.$('#audit-prev'));
  assert.match(await page.$eval('#audit caption', (e) => e.textContent), /Page 2/);
  await page.click('#audit-prev');
  await page.waitForFunction((f) => document.querySelector('#audit tbody').textContent === f, {}, first);
  // The applications page pages too (31 applications).
  await go(page, '#/applications');
  assert.equal(await page.$$eval('#apps tbody tr', (r) => r.length), 25);
  await page.click('#apps-next');
  await page.waitForFunction(() => document.querySelectorAll('#apps tbody tr').length === 6);
  assert.deepEqual(errors, []);
  await ctx.close();

  for (const role of ['viewer', 'data_steward']) {
    const s = await signIn(role);
    assert.equal(await s.page.$eval('#nav-audit', (e) => e.hidden), true, role);
    await go(s.page, '#/audit');
    await s.page.waitForSelector('#audit .err');
    assert.match(await text(s.page), /role/i);
    await s.ctx.close();
  }
});

test('lists page: paged on the server, keyboard reachable', { skip }, async () => {
  for (let i = 0; i < 27; i++) {
    const r = await srv.api(tenant.sk, 'POST', '/lists', { name: `List ${String(i).padStart(2, '0')}` });
    assert.equal(r.status, 201, r.text);
  }
  const { ctx, page } = await signIn('viewer', { width: 375, height: 800 });
  await go(page, '#/lists');
  assert.equal(await page.$$eval('#lists tbody tr', (r) => r.length), 25);
  await shot(page, 'lists-375');
  await page.focus('#lists-next');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelectorAll('#lists tbody tr').length === 2);
  assert.equal(await page.evaluate(() => document.activeElement.tagName), 'TABLE'); // focus follows
  await ctx.close();
});

test('live preview: a private list, no publishable key, the active version as the runtime answers', { skip }, async () => {
  const l = await srv.list(tenant.sk, 'Private cities', [{ value: 'Paris', rank: 10 }, { value: 'Parma', rank: 5 }, { value: 'Berlin', rank: 9 }]);
  const { ctx, page, errors } = await signIn('viewer');
  await go(page, `#/lists/${l.id}`);
  await page.waitForSelector('#preview-q[data-ready]');
  assert.equal(await page.$('#preview-key'), null);
  // Every section is named by its heading.
  for (const s of ['settings', 'publish', 'preview', 'items', 'selections'])
    assert.equal(await page.$eval(`#sec-${s}`, (e) => document.getElementById(e.getAttribute('aria-labelledby'))?.tagName), 'H2', s);
  await page.type('#preview-q', 'par');
  await page.waitForFunction(() => document.querySelectorAll('#preview-area [role=option]').length === 2);
  const options = await page.$$eval('#preview-area [role=option]', (os) => os.map((o) => o.textContent));
  assert.deepEqual(options, ['Paris', 'Parma']);
  assert.equal(await page.$eval('#preview-area [role=option] mark', (m) => m.textContent), 'Par');
  // The widget's own stylesheet applies under the page's CSP (style-src 'self').
  assert.equal(await page.$eval('#preview-area [role=listbox]', (e) => getComputedStyle(e).position), 'absolute');
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.$eval('#preview-q', (e) => e.getAttribute('aria-activedescendant') !== null), true);
  await shot(page, 'preview-private');
  // The same query on the runtime without a token is refused: the list really is private.
  assert.equal((await srv.api(tenant.sk, 'GET', `/lists/${l.id}`)).json.visibility, 'private');
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('password change on the account page ends the member\'s other sessions', { skip }, async () => {
  const other = await signIn('data_steward');
  const { ctx, page, errors } = await signIn('data_steward');
  await page.click('a[href="#/account"]');
  await page.waitForSelector('#password-form');
  for (const id of ['pw-current', 'pw-new', 'pw-again']) assert.ok(await page.$(`label[for=${id}]`), id);
  // A wrong current password changes nothing and keeps the member signed in.
  await page.type('#pw-current', 'not my password at all');
  await page.type('#pw-new', 'a brand new passphrase');
  await page.type('#pw-again', 'a brand new passphrase');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => /current password is wrong/.test(document.getElementById('password-msg').textContent));
  assert.equal(await page.$eval('#session', (e) => e.hidden), false);
  await page.type('#pw-current', PASSWORD);
  await page.type('#pw-new', 'a brand new passphrase');
  await page.type('#pw-again', 'a brand new passphrase');
  await page.click('#password-form button[type=submit]');
  await page.waitForFunction(() => /Password changed/.test(document.getElementById('password-msg').textContent));
  await shot(page, 'account');
  // This session goes on; the other browser is signed out at its next request.
  await go(page, '#/lists');
  await go(other.page, '#/lists').catch(() => {});
  await other.page.waitForSelector('#signin:not([hidden])');
  assert.match(await other.page.$eval('#error', (e) => e.textContent), /session has ended/);
  assert.deepEqual(errors, []);
  await other.ctx.close();
  await ctx.close();
});

test('no secret in any page or answer after its first showing', { skip }, async () => {
  const { ctx, page, answers } = await signIn('admin');
  await go(page, '#/applications');
  await page.click('button[aria-label="Open web"]');
  await (await page.waitForSelector('#sk-create')).click();
  await page.waitForSelector('#shown-once-value');
  const sk = await page.$eval('#shown-once-value', (e) => e.textContent);
  const pkList = (await srv.api(tenant.sk, 'POST', '/lists', { name: 'Keys list' })).json.id;
  await page.reload(); // the list above joins the publishable key form's choices
  await page.waitForSelector('#view h1');
  await page.click('button[aria-label="Open web"]');
  await page.waitForSelector('#pk-create');
  await page.select('#pk-list', pkList);
  await page.click('#pk-create button[type=submit]');
  await page.waitForFunction(() => document.getElementById('shown-once-value')?.textContent.startsWith('pk_'));
  const pk = await page.$eval('#shown-once-value', (e) => e.textContent);
  await go(page, '#/members');
  await page.type('#member-email', 'temp@example.com');
  await page.click('#member-invite button[type=submit]');
  await page.waitForSelector('#shown-once-value');
  const temp = await page.$eval('#shown-once-value', (e) => e.textContent);
  const secrets = [sk, pk, temp, PASSWORD];
  for (const s of secrets) assert.ok(s.length >= 12);
  answers.length = 0;
  const seen = [];
  await page.reload();
  await page.waitForSelector('#view h1');
  for (const p of ['#/applications', '#/lists', `#/lists/${pkList}`, '#/usage', '#/members', '#/audit', '#/account']) {
    await go(page, p);
    if (p === '#/applications') {
      await page.click('button[aria-label="Open web"]');
      await page.waitForSelector('#keys tbody tr');
    }
    await page.waitForNetworkIdle({ idleTime: 200 });
    seen.push(await page.content(), await text(page));
  }
  seen.push(...answers);
  assert.ok(answers.length >= 10, String(answers.length));
  for (const s of secrets) assert.ok(!seen.some((t) => t.includes(s)), 'a secret came back: ' + s.slice(0, 6));
  await ctx.close();
});

test('session expiry and rate-limited sign-in, as the user sees them', { skip }, async () => {
  // A server of its own with a 2 s idle window and 2 sign-in attempts a minute per email
  // (both are documented flags: --session-idle-seconds, --signin-rate-email).
  const s2 = await new Suggestd().start(['--session-idle-seconds', '2', '--signin-rate-email', '2']);
  try {
    const t2 = s2.tenant();
    members(s2, t2.ws, ['viewer']);
    const { ctx, page } = await signInAs(browser, s2, 'viewer@example.com');
    await go(page, '#/lists');
    await new Promise((r) => setTimeout(r, 3000));
    await page.evaluate(() => { location.hash = '#/usage'; });
    await page.waitForSelector('#signin:not([hidden])');
    assert.match(await page.$eval('#error', (e) => e.textContent), /session has ended/);
    assert.equal(await page.$eval('#nav', (e) => e.hidden), true);
    await shot(page, 'session-expired');
    await ctx.close();
    // Another browser (no device cookie of this member, so it draws on the email's own
    // bucket): with the sign-in above and one wrong password the two attempts are taken;
    // the third is refused before any password check, and the page says how long to wait.
    const ctx2 = await browser.createBrowserContext();
    const p2 = await ctx2.newPage();
    await p2.goto(s2.control + '/dashboard/');
    await p2.waitForSelector('#signin:not([hidden]) #email');
    await signInAttempts(p2);
    await ctx2.close();
  } finally {
    await s2.stop();
  }
});

async function signInAttempts(page) {
  await page.type('#email', 'viewer@example.com');
  await page.type('#password', 'a wrong password here');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => /password is wrong/.test(document.getElementById('error').textContent));
  await page.type('#password', PASSWORD);
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => /Too many sign-in attempts\. Wait \d+ seconds/.test(document.getElementById('error').textContent));
  assert.equal(await page.$eval('#session', (e) => e.hidden), true);
  await shot(page, 'signin-rate-limited');
}

/** Accessibility problems of the page as rendered: form controls without a label, buttons
 * and links without a name, text under WCAG AA contrast against its effective background. */
function a11yProblems(page) {
  return page.evaluate(() => {
    const out = [];
    const visible = (e) => !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length);
    for (const e of document.querySelectorAll('input, select, textarea')) {
      if (!visible(e) || e.type === 'hidden') continue;
      if (!(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.getAttribute('aria-labelledby'))
        out.push('unlabelled control #' + e.id);
    }
    for (const e of document.querySelectorAll('button, a[href]'))
      if (visible(e) && !(e.textContent.trim() || e.getAttribute('aria-label'))) out.push('unnamed ' + e.tagName + ' ' + e.outerHTML.slice(0, 60));
    const rgb = (c) => (c.match(/[\d.]+/g) || []).map(Number);
    const lum = ([r, g, b]) => {
      const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const bg = (e) => {
      for (; e; e = e.parentElement) {
        const c = rgb(getComputedStyle(e).backgroundColor);
        if (c.length >= 3 && (c.length < 4 || c[3] > 0.5)) return c;
      }
      return [255, 255, 255];
    };
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const e = n.parentElement;
      if (!n.textContent.trim() || !visible(e) || e.closest('.skip')) continue;
      const st = getComputedStyle(e);
      const fg = rgb(st.color);
      const [a, b] = [lum(fg), lum(bg(e))].sort((x, y) => y - x);
      const ratio = (a + 0.05) / (b + 0.05);
      const size = parseFloat(st.fontSize), bold = Number(st.fontWeight) >= 700;
      const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
      if (ratio < need) out.push(`contrast ${ratio.toFixed(2)} < ${need}: "${n.textContent.trim().slice(0, 30)}"`);
    }
    return out;
  });
}

test('two visits that overlap render one page, not two pages in one', { skip }, async () => {
  // The page's API answers are held back so that the second visit starts while the first
  // is still waiting: both then finish, and only the later one may be on the screen.
  const { ctx, page } = await signIn('owner');
  await go(page, '#/usage');
  await page.setRequestInterception(true);
  page.on('request', (r) => {
    if (r.isInterceptResolutionHandled()) return;
    if (r.url().includes('/applications')) setTimeout(() => r.continue(), 300);
    else r.continue();
  });
  await page.evaluate(() => {
    location.hash = '#/applications';
    setTimeout(() => window.dispatchEvent(new HashChangeEvent('hashchange')), 50);
  });
  await page.waitForSelector('#app-name');
  await page.waitForNetworkIdle({ idleTime: 500 });
  assert.equal(await page.$$eval('#view h1', (e) => e.length), 1);
  assert.equal(await page.$$eval('[id=app-name]', (e) => e.length), 1);
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Applications');
  assert.deepEqual(await a11yProblems(page), []);
  await ctx.close();
});

test('every page: labelled controls, named buttons, AA contrast, keyboard skip link', { skip }, async () => {
  const l = await srv.list(tenant.sk, 'A11y list', [{ value: 'Paris' }]);
  const { ctx, page } = await signIn('owner');
  const pages = ['#/applications', '#/lists', `#/lists/${l.id}`, '#/usage', '#/members', '#/audit', '#/account'];
  for (const p of pages) {
    await go(page, p);
    if (p === '#/applications') {
      await page.click('button[aria-label="Open web"]');
      await page.waitForSelector('#keys tbody tr, #pk-create');
    }
    if (p.startsWith('#/lists/')) {
      await page.waitForSelector('#preview-q[data-ready]');
      await page.type('#preview-q', 'pa');
      await page.waitForSelector('#preview-area [role=option]');
    }
    await page.waitForNetworkIdle({ idleTime: 200 });
    assert.deepEqual(await a11yProblems(page), [], p);
  }
  // The keyboard: the skip link is the first stop, and Enter on it moves the focus to the
  // content without leaving the page.
  await go(page, '#/usage');
  assert.equal(await page.evaluate(() => document.querySelector('a[href], button, input, select, textarea').className), 'skip');
  await page.focus('.skip');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.activeElement.id === 'main');
  assert.equal(await page.evaluate(() => location.hash), '#/usage');
  assert.equal(await page.$eval('#view h1', (e) => e.textContent), 'Usage');
  await ctx.close();
  const s = await browser.createBrowserContext();
  const p2 = await s.newPage();
  await p2.goto(srv.control + '/dashboard/');
  await p2.waitForSelector('#signin:not([hidden]) #email');
  assert.deepEqual(await a11yProblems(p2), [], 'sign-in');
  await s.close();
});
