// Shared by the dashboard's browser suites (dashboard.test.mjs, dashboard-pages.test.mjs):
// signing in through the form, moving between pages, the page's own fetch, screenshots.
import path from 'node:path';
import { ROOT } from './harness.mjs';

export const SHOTS = path.join(ROOT, 'build', 'screenshots');
export const PASSWORD = 'correct horse battery staple';

/** A fresh browser context (its own cookies) signed in as `email` through the form; every
 * /dashboard/api answer's text is collected in `answers`, page errors in `errors`. */
export async function signInAs(browser, srv, email, viewport = { width: 1100, height: 900 }, password = PASSWORD) {
  const ctx = await browser.createBrowserContext();
  const page = await ctx.newPage();
  await page.setViewport(viewport);
  const answers = [];
  page.on('response', async (r) => {
    if (new URL(r.url()).pathname.startsWith('/dashboard/api/')) answers.push(await r.text().catch(() => ''));
  });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  await page.goto(srv.control + '/dashboard/');
  await page.waitForSelector('#signin:not([hidden]) #email');
  await page.type('#email', email);
  await page.type('#password', password);
  await page.click('#signin-form button[type=submit]');
  await page.waitForSelector('#session:not([hidden])');
  await page.waitForSelector('#view h1');
  return { ctx, page, answers, errors };
}

export const text = (page) => page.evaluate(() => document.body.innerText);

/** Goes to a dashboard page and waits until it rendered (its h1 takes the focus). */
export async function go(page, hash) {
  await page.evaluate((h) => { location.hash = h; }, hash);
  await page.waitForFunction((h) => {
    const e = document.querySelector('#view h1');
    return location.hash === h && e && document.activeElement === e;
  }, {}, hash);
}

/** The page's own fetch, with or without the CSRF header it got from /me. */
export function pageFetch(page, method, p, body, withCsrf = true) {
  return page.evaluate(async (m, pth, b, csrf) => {
    const headers = { 'Content-Type': 'application/json' };
    if (csrf) headers['X-CSRF-Token'] = (await (await fetch('/dashboard/api/me')).json()).csrfToken;
    const r = await fetch('/dashboard/api' + pth, { method: m, headers, body: b === undefined ? undefined : JSON.stringify(b) });
    return { status: r.status, body: await r.json().catch(() => null) };
  }, method, p, body, withCsrf);
}

export const shot = (page, name) => page.screenshot({ path: path.join(SHOTS, `dashboard-${name}.png`), fullPage: true });
