// The sign-in form with one email in several workspaces (docs/DASHBOARD.md, "Members"), in
// Debian's headless Chromium against the real suggestd: a password that opens two
// workspaces shows a choice of exactly those two, and choosing one signs in to it; a
// password of one workspace signs in straight away. Skips like dashboard.test.mjs when no
// Chromium is installed outside CI.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Suggestd, browserSkip, launchChromium } from './harness.mjs';
import { PASSWORD, SHOTS, shot } from './dashboard-helpers.mjs';

const skip = browserSkip();
const OTHER = 'another long password';

let srv, browser;
const ws = {};
const members = {};

before(async () => {
  if (skip) return;
  mkdirSync(SHOTS, { recursive: true });
  srv = await new Suggestd().start();
  const pw = path.join(srv.dir, 'pw.txt'), other = path.join(srv.dir, 'other.txt');
  writeFileSync(pw, PASSWORD + '\n');
  writeFileSync(other, OTHER + '\n');
  for (const [name, role, file] of [['Alpha', 'owner', pw], ['Beta', 'viewer', pw], ['Gamma', 'admin', other]]) {
    ws[name] = srv.admin('workspace', 'create', '--name', name).id;
    members[name] = srv.admin('member', 'create', '--workspace', ws[name], '--email', 'sam@example.com',
      '--role', role, '--password-file', file).id;
  }
  browser = await launchChromium();
});

after(async () => {
  if (browser) await browser.close();
  if (srv) await srv.stop();
});

async function signInForm(password) {
  const ctx = await browser.createBrowserContext();
  const page = await ctx.newPage();
  await page.setViewport({ width: 800, height: 700 });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  await page.goto(srv.control + '/dashboard/');
  await page.waitForSelector('#signin:not([hidden]) #email');
  await page.type('#email', 'sam@example.com');
  await page.type('#password', password);
  await page.keyboard.press('Enter');
  return { ctx, page, errors };
}

const me = (page) => page.evaluate(async () => (await (await fetch('/dashboard/api/me')).json()).member);

test('a password that opens two workspaces offers exactly those two, and the choice signs in', { skip }, async () => {
  const { ctx, page, errors } = await signInForm(PASSWORD);
  await page.waitForSelector('#ws-choice:not([hidden]) button');
  const offered = await page.$$eval('#ws-choice button', (bs) => bs.map((b) => [b.dataset.workspace, b.textContent]));
  assert.deepEqual(offered.map((o) => o[0]).sort(), [ws.Alpha, ws.Beta].sort());
  assert.ok(offered.some((o) => o[1].startsWith('Beta')) && !offered.some((o) => o[1].includes('Gamma')));
  // The signed-in header stays out of sight (its display:flex once overrode hidden).
  assert.equal(await page.$eval('#session', (e) => getComputedStyle(e).display), 'none');
  assert.equal(await page.$eval('#password', (e) => e.value), '');  // not kept in the page
  assert.equal(await page.evaluate(() => document.activeElement.dataset.workspace), offered[0][0]);
  await shot(page, 'signin-workspaces');
  await page.click(`#ws-choice button[data-workspace="${ws.Beta}"]`);
  await page.waitForSelector('#session:not([hidden])');
  assert.equal(await page.$eval('#role', (e) => e.textContent), 'viewer');
  const m = await me(page);
  assert.equal(m.id, members.Beta);
  assert.equal(m.workspaceId, ws.Beta);
  assert.equal(await page.$eval('#ws-choice', (e) => e.hidden), true);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test("one workspace's password signs in without a choice", { skip }, async () => {
  const { ctx, page, errors } = await signInForm(OTHER);
  await page.waitForSelector('#session:not([hidden])');
  assert.equal(await page.$eval('#ws-choice', (e) => e.hidden), true);
  const m = await me(page);
  assert.equal(m.id, members.Gamma);
  assert.equal(await page.$eval('#role', (e) => e.textContent), 'admin');
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('editing the form drops the choice; a wrong password shows the usual error', { skip }, async () => {
  const { ctx, page } = await signInForm(PASSWORD);
  await page.waitForSelector('#ws-choice:not([hidden]) button');
  await page.type('#password', 'x');
  assert.equal(await page.$eval('#ws-choice', (e) => e.hidden), true);
  assert.equal(await page.$$eval('#ws-choice button', (bs) => bs.length), 0);
  await page.click('#password', { clickCount: 3 });
  await page.type('#password', 'not the password at all');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.getElementById('error').textContent.length > 0);
  assert.equal(await page.$eval('#session', (e) => e.hidden), true);
  assert.equal(await page.$eval('#ws-choice', (e) => e.hidden), true);
  await ctx.close();
});
