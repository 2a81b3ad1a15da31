'use strict';
// The suggestd dashboard: a small single-page app over /dashboard/api/ (docs/DASHBOARD.md).
// No framework and no innerHTML: every node is built with h(), so no value from the
// server can become markup. Controls a role may not use are not rendered (data-cap); the
// server refuses them anyway.
const $ = (id) => document.getElementById(id);
let me = null;

function h(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const k of kids.flat()) if (k !== null && k !== undefined && k !== false) e.append(k);
  return e;
}
const can = (cap) => !!(me && me.capabilities && me.capabilities[cap]);
const when = (cap, node) => (can(cap) ? node : null);
const fmtTime = (t) => (t ? new Date(t).toISOString().replace('T', ' ').slice(0, 19) + ' UTC' : '—');
const say = (msg) => { $('status').textContent = msg; };

async function api(method, path, body, extra) {
  const headers = Object.assign({}, extra || {});
  if (body !== undefined && !headers['Content-Type']) headers['Content-Type'] = 'application/json';
  if (me && method !== 'GET') headers['X-CSRF-Token'] = me.csrfToken;
  const r = await fetch('/dashboard/api' + path, {
    method, headers, credentials: 'same-origin',
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const out = { status: r.status, etag: r.headers.get('ETag'), retryAfter: r.headers.get('Retry-After'),
    body: await r.json().catch(() => ({})) };
  // Only an ended session signs the page out (a wrong current password is a 401 too).
  if (r.status === 401 && out.body.code === 'invalid_session' && path !== '/session') {
    me = null;
    showSignin('Your session has ended (signed out, or idle too long). Sign in again.');
  }
  return out;
}
const errText = (r) => (r.body && r.body.message ? r.body.message : 'Request failed (' + r.status + ').');

function field(id, label, input) {
  input.id = id;
  return [h('label', { for: id, text: label }), input];
}
function table(cols, rows, caption) {
  return h('div', { class: 'table-wrap' }, h('table', {},
    caption ? h('caption', { class: 'muted', text: caption }) : null,
    h('thead', {}, h('tr', {}, cols.map((c) => h('th', { scope: 'col', text: c })))),
    h('tbody', {}, rows)));
}
function tr(...cells) { return h('tr', {}, cells.map((c) => h('td', {}, c))); }
function select(options, value) {
  return h('select', {}, options.map((o) => h('option', { value: o, selected: o === value, text: o })));
}

// ---- session -------------------------------------------------------------------------
function showSignin(why) {
  hideWorkspaceChoice();
  $('error').textContent = why || '';
  $('signin').hidden = false;
  $('nav').hidden = true;
  $('session').hidden = true;
  $('view').replaceChildren();
  $('email').focus();
}
function signedIn(body) {
  me = body;
  $('signin').hidden = true;
  $('nav').hidden = false;
  $('session').hidden = false;
  $('who').textContent = me.member.email;
  $('role').textContent = me.member.role;
  $('nav-audit').hidden = !can('readAudit');
  route();
}

// One email may be a member of several workspaces, each with its own password. When the
// password opens more than one, the server answers 409 workspace_required with the
// workspaces it opened; the member picks one and the page signs in again with its id.
// The password stays only in this closure until then, never in the page.
function hideWorkspaceChoice() {
  $('ws-choice').hidden = true;
  $('ws-choice').replaceChildren();
}
function showWorkspaceChoice(email, password, workspaces) {
  const box = $('ws-choice');
  box.replaceChildren(
    h('h2', { id: 'ws-choice-h', text: 'Choose a workspace' }),
    h('p', { class: 'muted', text: 'This email and password open several workspaces.' }),
    h('ul', { class: 'ws-list' }, workspaces.map((w) => h('li', {},
      h('button', { type: 'button', 'data-workspace': w.workspaceId,
        onclick: () => signIn(email, password, w.workspaceId) },
      (w.name || w.workspaceId) + ' (' + w.workspaceId + ')')))));
  box.hidden = false;
  const first = box.querySelector('button');
  if (first) first.focus();
}
async function signIn(email, password, workspaceId) {
  $('error').textContent = '';
  const body = { email, password };
  if (workspaceId) body.workspaceId = workspaceId;
  const r = await api('POST', '/session', body);
  if (r.status === 409 && r.body.details && r.body.details.reason === 'workspace_required' &&
      !workspaceId) {
    showWorkspaceChoice(email, password, r.body.details.workspaces || []);
    return;
  }
  hideWorkspaceChoice();
  if (r.status === 200) signedIn(r.body);
  else if (r.status === 429)
    $('error').textContent = 'Too many sign-in attempts. Wait ' + (r.retryAfter || 'a few') +
      ' seconds, then try again.';
  else $('error').textContent = r.body.message || 'Sign-in failed.';
}

// ---- router --------------------------------------------------------------------------
// Each visit renders into an element of its own. A page waits for the server before it
// adds its forms, so two visits can overlap (signing in renders the default page while the
// address changes to another): the earlier one then finishes in its detached element,
// never beside the later one, where its controls would double every id.
let routeSeq = 0;
async function route() {
  if (!me || (location.hash && !location.hash.startsWith('#/'))) return; // not a page address
  const parts = (location.hash || '#/applications').slice(2).split('/');
  for (const a of document.querySelectorAll('#nav a'))
    if (a.getAttribute('href') === '#/' + parts[0]) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  const seq = ++routeSeq;
  const view = h('div', { class: 'page' });
  $('view').replaceChildren(view);
  say('');
  const list = parts[2] === 'analytics' ? () => pageAnalytics(parts[1], view) : () => pageList(parts[1], view);
  const pages = { applications: pageApplications, lists: parts[1] ? list : pageLists,
    usage: pageUsage, members: pageMembers, audit: pageAudit, account: pageAccount };
  await (pages[parts[0]] || pageApplications)(view);
  if (seq !== routeSeq) return null;
  const h1 = view.querySelector('h1');
  if (h1) { h1.tabIndex = -1; h1.focus(); }
  return view;
}

// ---- applications and keys -----------------------------------------------------------
async function pageApplications(view) {
  view.append(h('h1', { text: 'Applications' }));
  const detail = h('div', { id: 'app-detail' });
  const rows = h('div', { id: 'apps', 'data-what': 'applications' });
  view.append(rows);
  const ok = await pagedTable(rows, 'apps', (c) => '/applications?limit=' + PAGE + (c ? '&cursor=' + encodeURIComponent(c) : ''),
    ['Name', 'Id', 'Status', 'Monthly quota', 'Created', ''], (a) => tr(a.name, h('code', { text: a.id }), a.status,
      quotaText(a.monthlyQuota), fmtTime(a.createdAt),
      h('button', { class: 'small secondary', type: 'button', 'aria-label': 'Open ' + a.name,
        onclick: () => appDetail(detail, a) }, 'Open')), 'No applications yet.');
  if (!ok) return;
  if (can('manageKeys')) {
    const name = h('input', { required: true, maxlength: 200 });
    view.append(h('form', { id: 'app-create', onsubmit: async (e) => {
      e.preventDefault();
      const c = await api('POST', '/applications', { name: name.value });
      if (c.status !== 201) return say(errText(c));
      await route();
      say('Application ' + c.body.name + ' created.');
    } }, h('h2', { text: 'Create an application' }), field('app-name', 'Name', name),
    h('button', { type: 'submit' }, 'Create application')));
  }
  view.append(detail);
}

async function appDetail(box, app) {
  box.replaceChildren(h('h2', { text: 'Application ' + app.name }),
    h('p', {}, 'Id ', h('code', { text: app.id }), ', status ' + app.status + ', monthly quota ' +
      quotaText(app.monthlyQuota) + '.'));
  if (can('setQuotas')) box.append(quotaForm(app));
  if (can('manageKeys') && app.status === 'active')
    box.append(h('button', { class: 'danger', type: 'button', id: 'app-disable', onclick: async () => {
      if (!confirm('Disable ' + app.name + '? Its keys stop working.')) return;
      const r = await api('POST', '/applications/' + app.id + '/disable');
      await route();
      say(r.status === 200 ? 'Application disabled.' : errText(r));
    } }, 'Disable application'));
  if (!can('manageKeys')) return box.append(h('p', { class: 'muted', text: 'Keys are managed by admins.' }));
  const keys = h('section', { id: 'keys', 'aria-labelledby': 'keys-h' });
  box.append(keys);
  await renderKeys(keys, app);
  box.querySelector('h2').scrollIntoView();
}

async function renderKeys(keys, app, revealed) {
  const [sks, pks, lists] = await Promise.all([
    api('GET', '/applications/' + app.id + '/secret-keys'),
    api('GET', '/applications/' + app.id + '/publishable-keys'),
    api('GET', '/lists?limit=100')]);
  const listName = {};
  for (const l of lists.body.data || []) listName[l.id] = l.name;
  const again = (shown) => renderKeys(keys, app, shown);
  keys.replaceChildren(h('h3', { id: 'keys-h', text: 'Secret keys' }));
  if (revealed) keys.append(revealed);
  keys.append(table(['Id', 'Created', 'Last used', 'Status', ''], (sks.body.data || []).map((k) =>
    tr(h('code', { text: k.id }), fmtTime(k.createdAt), fmtTime(k.lastUsedAt),
      k.status + (k.revokedAt ? ' ' + fmtTime(k.revokedAt) : ''),
      revoke(k, '/secret-keys/', 'Secret key', again)))));
  if (app.status === 'active')
    keys.append(h('button', { type: 'button', id: 'sk-create', onclick: async () => {
      const r = await api('POST', '/applications/' + app.id + '/secret-keys');
      if (r.status !== 201) return say(errText(r));
      again(shownOnce('Secret key ' + r.body.id, r.body.secretKey));
    } }, 'Issue a secret key'));
  keys.append(h('h3', { text: 'Publishable keys' }));
  keys.append(table(['Id', 'List', 'Allowed origins', 'Status', 'Created', ''], (pks.body.data || []).map((k) =>
    tr(h('code', { text: k.id }), listName[k.listId] || k.listId,
      k.origins && k.origins.length ? k.origins.join(', ') : 'any origin', k.status, fmtTime(k.createdAt),
      revoke(k, '/publishable-keys/', 'Publishable key', again)))));
  if (app.status !== 'active') return;
  const list = h('select', { required: true }, (lists.body.data || []).map((l) => h('option', { value: l.id, text: l.name })));
  const origins = h('textarea', { rows: 2, placeholder: 'https://shop.example\nhttps://*.example.com',
    'aria-describedby': 'pk-origins-help' });
  keys.append(h('form', { id: 'pk-create', onsubmit: async (e) => {
    e.preventDefault();
    const o = origins.value.split(/[\s,]+/).filter(Boolean);
    const r = await api('POST', '/applications/' + app.id + '/publishable-keys', { listId: list.value, origins: o });
    if (r.status !== 201) return say(errText(r));
    again(shownOnce('Publishable key ' + r.body.id, r.body.publishableKey));
  } }, h('h3', { text: 'Issue a publishable key' }), field('pk-list', 'List', list),
  field('pk-origins', 'Allowed origins (one a line; empty: any origin)', origins),
  h('p', { id: 'pk-origins-help', class: 'muted', text: 'Browsers on other origins are refused by the runtime.' }),
  h('button', { type: 'submit' }, 'Issue publishable key')));
}

function revoke(k, base, what, again) {
  if (k.status !== 'active') return '';
  return h('button', { class: 'small danger', type: 'button', 'aria-label': 'Revoke ' + k.id, onclick: async () => {
    const r = await api('POST', base + k.id + '/revoke');
    await again();
    say(r.status === 200 ? what + ' revoked.' : errText(r));
  } }, 'Revoke');
}

// A credential shown exactly once: the server never returns it again, and the page keeps
// it only in this node, gone on the next render.
function shownOnce(what, secret) {
  const box = h('div', { class: 'secret', id: 'shown-once', role: 'alert' },
    h('strong', { text: what + ' — copy it now, it will not be shown again.' }),
    h('code', { id: 'shown-once-value', text: secret }),
    h('button', { type: 'button', class: 'small secondary', onclick: () => box.remove() }, 'I have copied it'));
  return box;
}

const quotaText = (q) => (q === null || q === undefined ? 'unlimited' : q.toLocaleString('en') + ' queries');

// The monthly quota is billing: owners only (the server refuses everyone else).
function quotaForm(app) {
  const q = h('input', { type: 'number', min: 0, step: 1, inputmode: 'numeric',
    value: app.monthlyQuota === null ? '' : app.monthlyQuota, 'aria-describedby': 'quota-help' });
  const msg = h('p', { id: 'quota-msg', role: 'status' });
  return h('form', { id: 'quota-form', onsubmit: async (e) => {
    e.preventDefault();
    const v = q.value.trim() === '' ? null : Number(q.value);
    const r = await api('PATCH', '/applications/' + app.id, { monthlyQuota: v });
    if (r.status !== 200) { msg.className = 'err'; msg.textContent = errText(r); return; }
    app.monthlyQuota = r.body.monthlyQuota;
    msg.className = '';
    msg.textContent = 'Monthly quota of ' + app.name + ': ' + quotaText(app.monthlyQuota) + '.';
  } }, h('h3', { text: 'Monthly quota' }), field('quota', 'Queries per calendar month (UTC)', q),
  h('p', { id: 'quota-help', class: 'muted', text: 'Empty: unlimited. Queries over the quota answer quota_exceeded until the month ends.' }),
  h('button', { type: 'submit' }, 'Save quota'), msg);
}

// A server-side paged table: `url(cursor)` answers {data, nextCursor}; `row(record)` builds
// a row. Only one page is ever in the page, however many records there are; Previous goes
// back through the cursors seen. Returns false (with the error shown) when the read failed.
const PAGE = 25;
async function pagedTable(box, name, url, cols, row, empty, trail) {
  trail = trail || [null];
  const r = await api('GET', url(trail[trail.length - 1]));
  if (r.status !== 200) {
    box.replaceChildren(h('p', { class: 'err', text: errText(r) }));
    return false;
  }
  const n = trail.length;
  const again = (t) => pagedTable(box, name, url, cols, row, empty, t).then(() => box.querySelector('table')?.focus());
  const t = table(cols, r.body.data.map(row), r.body.data.length ? 'Page ' + n : empty);
  t.querySelector('table').tabIndex = -1;
  box.replaceChildren(t, h('nav', { class: 'row pager', 'aria-label': 'Pages of ' + (box.dataset.what || name) },
    n > 1 ? h('button', { type: 'button', class: 'small secondary', id: name + '-prev', onclick: () => again(trail.slice(0, -1)) }, 'Previous page') : null,
    r.body.nextCursor ? h('button', { type: 'button', class: 'small secondary', id: name + '-next',
      onclick: () => again(trail.concat([r.body.nextCursor])) }, 'Next page') : null));
  return true;
}

// ---- lists ---------------------------------------------------------------------------
async function pageLists(view) {
  view.append(h('h1', { text: 'Lists' }));
  const rows = h('div', { id: 'lists', 'data-what': 'lists' });
  view.append(rows);
  const ok = await pagedTable(rows, 'lists', (c) => '/lists?limit=' + PAGE + (c ? '&cursor=' + encodeURIComponent(c) : ''),
    ['Name', 'Id', 'Visibility', 'Status', 'Active version'], (l) =>
      tr(h('a', { href: '#/lists/' + l.id, text: l.name }), h('code', { text: l.id }), l.visibility, l.status,
        l.activeVersionNumber === null ? 'none' : 'v' + l.activeVersionNumber), 'No lists yet.');
  if (!ok) return;
  if (can('writeLists')) {
    const name = h('input', { required: true, maxlength: 200 });
    view.append(h('form', { id: 'list-create', onsubmit: async (e) => {
      e.preventDefault();
      const c = await api('POST', '/lists', { name: name.value },
        { 'Idempotency-Key': crypto.randomUUID() });
      if (c.status !== 201) return say(errText(c));
      location.hash = '#/lists/' + c.body.id;
    } }, h('h2', { text: 'Create a list' }), field('list-name', 'Name', name),
    h('p', { class: 'muted', text: 'A new list is private; its settings form changes that.' }), h('button', { type: 'submit' }, 'Create list')));
  }
}

async function pageList(id, view) {
  view = view || $('view');
  const r = await api('GET', '/lists/' + id);
  if (r.status !== 200) return view.append(h('h1', { text: 'List' }), h('p', { class: 'err', text: errText(r) }));
  const l = r.body;
  view.append(h('p', {}, h('a', { href: '#/lists', text: '← All lists' })), h('h1', { text: l.name }),
    h('p', { class: 'muted' }, 'Id ', h('code', { text: l.id }), '. Active version: ' +
      (l.activeVersionNumber === null ? 'none' : 'v' + l.activeVersionNumber) + '.'),
    h('p', {}, h('a', { id: 'analytics-link', href: '#/lists/' + l.id + '/analytics', text: 'Search analytics and query suggestions →' })));
  const sections = ['settings', 'publish', 'preview', 'items', 'import', 'selections', 'synonyms'].map((s) => h('section', { id: 'sec-' + s }));
  view.append(...sections);
  settingsForm(sections[0], l, r.etag);
  previewArea(sections[2], l);
  await Promise.all([publishArea(sections[1], l), itemsArea(sections[3], l), selectionsArea(sections[5], l),
    synonymsArea(sections[6], l)]);
  importArea(sections[4], l);
  // Each section is named by its heading, so a screen reader's landmarks list reads
  // "Settings", "Items", … instead of six unnamed regions.
  for (const sec of sections) {
    const hd = sec.querySelector('h2');
    if (!hd) continue;
    hd.id = sec.id + '-h';
    sec.setAttribute('aria-labelledby', hd.id);
  }
}

function settingsForm(box, l, etag) {
  const q = l.queryPolicy || {};
  const t = q.typoTolerance || {};
  const lp = l.localePolicy || {};
  const num = (v, min, max) => h('input', { type: 'number', min, max, value: v, required: true });
  const f = {
    name: h('input', { value: l.name, required: true, maxlength: 200 }),
    visibility: select(['private', 'public', 'shared'], l.visibility),
    status: select(['active', 'archived'], l.status),
    minQueryChars: num(q.minQueryChars, 1, 32),
    debounceMs: num(q.debounceMs, 0, 5000),
    typo: h('input', { type: 'checkbox', checked: t.enabled !== false }),
    one: num(t.minCharsOneTypo, 1, 255),
    two: num(t.minCharsTwoTypos, 1, 255),
    defaultLocale: h('input', { value: lp.defaultLocale || 'en', required: true }),
    supported: h('input', { value: (lp.supportedLocales || []).join(', '), 'aria-describedby': 'set-locales-help' }),
    displayOrder: num(l.displayOrder, -2147483648, 2147483647),
  };
  const msg = h('div', { id: 'settings-msg', role: 'alert' });
  const fs = h('fieldset', { disabled: !can('writeLists') },
    h('legend', { text: 'List settings' }),
    field('set-name', 'Name', f.name), field('set-visibility', 'Visibility', f.visibility),
    field('set-status', 'Status', f.status), field('set-minq', 'Minimum query characters', f.minQueryChars),
    field('set-debounce', 'Debounce (ms)', f.debounceMs),
    h('label', { class: 'inline', for: 'set-typo' }, f.typo, 'Typo tolerance'),
    field('set-one', 'Characters before one typo is allowed', f.one),
    field('set-two', 'Characters before two typos are allowed', f.two),
    field('set-locale', 'Default locale', f.defaultLocale),
    field('set-locales', 'Supported locales', f.supported),
    h('p', { id: 'set-locales-help', class: 'muted', text: 'Comma separated, e.g. en, fr-CA.' }),
    field('set-order', 'Display order', f.displayOrder),
    can('writeLists') ? h('button', { type: 'submit', id: 'settings-save' }, 'Save settings') : null);
  f.typo.id = 'set-typo';
  const form = h('form', { id: 'settings-form', onsubmit: async (e) => {
    e.preventDefault();
    msg.replaceChildren();
    msg.className = '';
    const body = { name: f.name.value, visibility: f.visibility.value, status: f.status.value,
      queryPolicy: { minQueryChars: +f.minQueryChars.value, debounceMs: +f.debounceMs.value,
        typoTolerance: { enabled: f.typo.checked, minCharsOneTypo: +f.one.value, minCharsTwoTypos: +f.two.value } },
      localePolicy: { defaultLocale: f.defaultLocale.value,
        supportedLocales: f.supported.value.split(/[\s,]+/).filter(Boolean) },
      displayOrder: +f.displayOrder.value };
    const r = await api('PATCH', '/lists/' + l.id, body, { 'If-Match': etag });
    if (r.status === 200) {
      etag = r.etag;
      msg.textContent = 'Settings saved.';
    } else if (r.status === 412) {
      msg.className = 'conflict';
      msg.append(h('strong', { text: 'This list was changed by someone else since you opened it. ' }),
        'Your changes were not saved. Reload to see the current settings, then apply yours again. ',
        h('button', { type: 'button', class: 'small', onclick: () => route() }, 'Reload'));
    } else {
      msg.className = 'err';
      msg.textContent = errText(r);
    }
  } }, fs, msg);
  box.replaceChildren(h('h2', { text: 'Settings' }), form);
}

// ---- synonyms (docs/DESIGN.md §3.4) ------------------------------------------------------------
// The list's synonym sets as one JSON array: viewers read it, data stewards and up edit
// and save it (PUT with If-Match, so a concurrent change is a conflict, not a loss). The
// sets are served from the next publish on.
async function synonymsArea(box, l) {
  const r = await api('GET', '/lists/' + l.id + '/synonyms');
  box.replaceChildren(h('h2', { text: 'Synonyms' }));
  if (r.status !== 200) return box.append(h('p', { class: 'err', text: errText(r) }));
  let etag = r.etag;
  const edit = can('writeLists');
  const text = h('textarea', { id: 'synonyms-json', rows: 10, spellcheck: 'false', readonly: !edit,
    'aria-describedby': 'synonyms-help' });
  text.value = JSON.stringify(r.body.synonyms, null, 2);
  const msg = h('div', { id: 'synonyms-msg', role: 'alert' });
  box.append(h('p', { id: 'synonyms-help', class: 'muted' },
    'Sets of phrases that mean the same: ', h('code', { text: '{"type": "equivalent", "phrases": ["NYC", "New York City"]}' }),
    ', or that one phrase stands for: ', h('code', { text: '{"type": "oneWay", "input": "tv", "phrases": ["television"]}' }),
    '. They match like aliases and are served from the next publish on.'),
  h('label', { for: 'synonyms-json', text: 'Synonym sets (JSON array)' }), text);
  if (!edit) return;
  box.append(h('p', {}, h('button', { type: 'button', id: 'synonyms-save', onclick: async () => {
    msg.replaceChildren();
    msg.className = '';
    let sets;
    try { sets = JSON.parse(text.value); } catch (e) {
      msg.className = 'err';
      msg.textContent = 'This is not valid JSON: ' + e.message;
      return;
    }
    const p = await api('PUT', '/lists/' + l.id + '/synonyms', { synonyms: sets }, { 'If-Match': etag });
    if (p.status === 200) {
      etag = p.etag;
      text.value = JSON.stringify(p.body.synonyms, null, 2);
      msg.textContent = 'Synonyms saved (' + p.body.synonyms.length + ' sets). Publish to serve them.';
    } else if (p.status === 412) {
      msg.className = 'conflict';
      msg.append(h('strong', { text: 'The synonyms were changed by someone else since you opened them. ' }),
        'Yours were not saved. Reload to see the current ones. ',
        h('button', { type: 'button', class: 'small', onclick: () => route() }, 'Reload'));
    } else {
      msg.className = 'err';
      const fields = (p.body.details && p.body.details.fields) || [];
      msg.append(errText(p), fields.length ? h('ul', {}, fields.map((f) => h('li', {}, h('code', { text: f.path }), ': ' + f.reason))) : '');
    }
  } }, 'Save synonyms')), msg);
}

// ---- publish and versions ------------------------------------------------------------
const FINAL = ['active', 'draft', 'superseded', 'failed'];
async function publishArea(box, l) {
  const state = h('p', { id: 'publish-state', role: 'status', 'aria-live': 'polite' });
  const hist = h('div', { id: 'versions' });
  box.replaceChildren(h('h2', { text: 'Publish and versions' }), state);
  if (can('writeLists'))
    box.append(h('button', { type: 'button', id: 'publish', onclick: async (e) => {
      e.target.disabled = true;
      const r = await api('POST', '/lists/' + l.id + '/versions', {}, { 'Idempotency-Key': crypto.randomUUID() });
      if (r.status !== 200 && r.status !== 201 && r.status !== 202) {
        state.textContent = errText(r);
        e.target.disabled = false;
        return;
      }
      let v = r.body;
      state.textContent = 'Version ' + v.versionNumber + ': ' + v.state + '…';
      while (!FINAL.includes(v.state)) {
        await new Promise((ok) => setTimeout(ok, 400));
        const p = await api('GET', '/lists/' + l.id + '/versions/' + v.versionNumber);
        if (p.status !== 200) break;
        v = p.body;
        state.textContent = 'Version ' + v.versionNumber + ': ' + v.state + '…';
      }
      state.textContent = 'Version ' + v.versionNumber + ' is ' + v.state +
        (v.state === 'draft' ? ': it has validation errors, nothing served changed.' : '.');
      e.target.disabled = false;
      await renderVersions(hist, l);
    } }, 'Publish the current items'));
  box.append(hist);
  await renderVersions(hist, l);
}

async function renderVersions(box, l, message) {
  const r = await api('GET', '/lists/' + l.id + '/versions?limit=20');
  if (r.status !== 200) return box.replaceChildren(h('p', { class: 'err', text: errText(r) }));
  const rows = [];
  const note = h('p', { id: 'rollback-state', role: 'status', 'aria-live': 'polite', text: message || '' });
  // Rollback (docs/PUBLISHING.md): a superseded version that was served can be made
  // active again while its artifact is kept; the server answers version_not_available
  // past --keep-versions, and the message says so.
  const activate = (v) => h('button', { type: 'button', class: 'small', 'data-activate': v.versionNumber,
    onclick: async (e) => {
      if (!confirm('Serve version ' + v.versionNumber + ' again instead of the active one?')) return;
      e.target.disabled = true;
      const a = await api('POST', '/lists/' + l.id + '/versions/' + v.versionNumber + '/activate');
      if (a.status === 200) {
        await renderVersions(box, l, 'Version ' + v.versionNumber + ' is active again' +
          (a.body.edgeSync && a.body.edgeSync.state === 'synced' ? ' and served.' : '; the runtime serves it within seconds.'));
      } else {
        note.className = 'err';
        note.textContent = errText(a);
        e.target.disabled = false;
      }
    } }, 'Activate');
  for (const v of r.body.data) {
    const action = can('writeLists') && v.state === 'superseded' && v.activatedAt ? activate(v) : '';
    rows.push(h('tr', { 'data-version': v.versionNumber }, [
      'v' + v.versionNumber, h('span', { class: 'state', text: v.state }), String(v.itemCount),
      h('code', { text: v.contentHash || '—' }), fmtTime(v.createdAt), fmtTime(v.activatedAt), action].map((c) => h('td', {}, c))));
    if (v.validationErrors && v.validationErrors.length)
      rows.push(h('tr', {}, h('td', { colspan: 7 }, h('ul', { class: 'err validation' },
        v.validationErrors.map((e) => h('li', {}, e.itemId
          ? h('a', { href: '#/lists/' + l.id, 'data-item': e.itemId, onclick: (ev) => { ev.preventDefault(); showItem(l, e.itemId); } }, 'Item ' + e.itemId)
          : 'The list', ' — ' + (e.path ? e.path + ': ' : '') + e.message + ' (' + e.reason + ')'))))));
  }
  box.replaceChildren(h('h3', { text: 'Version history' }), note,
    table(['Version', 'State', 'Items', 'Content hash', 'Created', 'Activated', ''], rows));
}

// ---- live preview --------------------------------------------------------------------
// The widget of clients/js (served from the binary as /dashboard/suggestd.js), fed by the
// dashboard's own preview endpoint: the list's active version answered exactly as the
// runtime would (same artifact, same query policy, same highlights), for any list this
// member can read, private ones included, with no publishable key and no access token.
// A preview is never billed and records no selection (docs/DECISIONS.md).
function previewClient(l) {
  const policy = { minQueryChars: l.queryPolicy?.minQueryChars ?? 1, debounceMs: l.queryPolicy?.debounceMs ?? 150 };
  return {
    policy,
    bootstrap: async () => ({ queryPolicy: policy }),
    select: async () => false,
    async query(q, { signal } = {}) {
      const r = await fetch('/dashboard/api/lists/' + l.id + '/preview?' + new URLSearchParams({ q }),
        { signal, credentials: 'same-origin' });
      const body = await r.json().catch(() => ({}));
      if (r.status === 401 && body.code === 'invalid_session') { me = null; showSignin('Your session has ended. Sign in again.'); }
      if (!r.ok) {
        const err = new Error(body.message || 'Preview failed (' + r.status + ').');
        err.code = body.code;
        throw err;
      }
      return body;
    },
  };
}

function previewArea(box, l) {
  box.replaceChildren(h('h2', { text: 'Live preview' }));
  if (l.activeVersionNumber === null)
    return box.append(h('p', { class: 'notice', id: 'preview-none', text: 'Nothing is served yet: publish a version, then try queries here.' }));
  const q = h('input', { autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'preview-help' });
  box.append(h('div', { id: 'preview-area' }, field('preview-q', 'Try a query', q),
    h('p', { id: 'preview-help', class: 'muted', text: 'Answers come from the active version (v' + l.activeVersionNumber +
      ') with this list\'s query policy, as your visitors get them. Previews are not counted against the quota.' })));
  import('/dashboard/suggestd.js').then(({ autocomplete }) => {
    autocomplete(q, { client: previewClient(l) });
    q.dataset.ready = '1';
  }, () => say('The preview widget failed to load.'));
}

// ---- items ---------------------------------------------------------------------------
async function itemsArea(box, l) {
  const q = h('input', { type: 'search', autocomplete: 'off' });
  const results = h('div', { id: 'items' });
  const editor = h('div', { id: 'item-editor' });
  box.replaceChildren(h('h2', { text: 'Items' }),
    h('form', { role: 'search', class: 'row', onsubmit: (e) => { e.preventDefault(); loadItems(results, l, q.value, null); } },
      h('div', {}, field('item-q', 'Search items by value prefix', q)), h('button', { type: 'submit' }, 'Search')),
    results, editor);
  box.dataset.list = l.id;
  await loadItems(results, l, '', null);
  if (can('writeLists')) {
    const value = h('input', { required: true });
    const rank = h('input', { type: 'number', value: 0 });
    box.append(h('form', { id: 'item-add', onsubmit: async (e) => {
      e.preventDefault();
      const r = await api('POST', '/lists/' + l.id + '/items', { value: value.value, rank: +rank.value },
        { 'Idempotency-Key': crypto.randomUUID() });
      say(r.status === 201 ? 'Item added.' : errText(r));
      if (r.status === 201) { value.value = ''; loadItems(results, l, q.value, null); }
    } }, h('h3', { text: 'Add an item' }), field('item-new-value', 'Value', value),
    field('item-new-rank', 'Rank', rank), h('button', { type: 'submit' }, 'Add item')));
  }
}

async function loadItems(box, l, q, cursor) {
  const qs = new URLSearchParams({ limit: '20' });
  if (cursor) qs.set('cursor', cursor);
  // By value (the search route without a prefix lists every item that way), not by id.
  const path = '/lists/' + l.id + '/items/search';
  qs.set('q', q || '');
  const r = await api('GET', path + '?' + qs);
  if (r.status !== 200) return box.replaceChildren(h('p', { class: 'err', text: errText(r) }));
  box.replaceChildren(table(['Value', 'Display value', 'Description', 'Rank', 'Id', ''], r.body.data.map((it) =>
    tr(it.value, it.displayValue, it.description || '', String(it.rank), h('code', { text: it.id }),
      h('button', { type: 'button', class: 'small secondary', 'aria-label': 'Open item ' + it.value,
        onclick: () => showItem(l, it.id) }, can('writeLists') ? 'Edit' : 'View'))),
  r.body.data.length ? null : (q ? 'No item starts with “' + q + '”.' : 'No items yet.')),
  h('div', { class: 'row' },
    cursor ? h('button', { type: 'button', class: 'small secondary', onclick: () => loadItems(box, l, q, null) }, 'First page') : null,
    r.body.nextCursor ? h('button', { type: 'button', class: 'small secondary', id: 'items-next',
      onclick: () => loadItems(box, l, q, r.body.nextCursor) }, 'Next page') : null));
}

async function showItem(l, itemId) {
  const box = $('item-editor');
  if (!box) return;
  const r = await api('GET', '/lists/' + l.id + '/items/' + itemId);
  if (r.status !== 200) return box.replaceChildren(h('p', { class: 'err', text: errText(r) }));
  const it = r.body;
  const value = h('input', { value: it.value, required: true });
  const display = h('input', { value: it.displayValue });
  // Display only (a subtitle such as "Texas, United States"); empty means none.
  const description = h('input', { value: it.description || '' });
  const rank = h('input', { type: 'number', value: it.rank });
  const aliases = h('input', { value: (it.aliases || []).join(', ') });
  const fs = h('fieldset', { disabled: !can('writeLists') }, h('legend', { text: 'Item ' + it.id }),
    field('item-value', 'Value', value), field('item-display', 'Display value', display),
    field('item-description', 'Description (shown under the display value; never matched)', description),
    field('item-rank', 'Rank', rank), field('item-aliases', 'Aliases (comma separated)', aliases),
    can('writeLists') ? h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Save item'),
      h('button', { type: 'button', class: 'danger', onclick: async () => {
        const d = await api('DELETE', '/lists/' + l.id + '/items/' + it.id, undefined, r.etag ? { 'If-Match': r.etag } : {});
        say(d.status === 200 || d.status === 204 ? 'Item deleted.' : errText(d));
        box.replaceChildren();
      } }, 'Delete item')) : null);
  box.replaceChildren(h('form', { id: 'item-form', onsubmit: async (e) => {
    e.preventDefault();
    const p = await api('PATCH', '/lists/' + l.id + '/items/' + it.id, { value: value.value, displayValue: display.value,
      description: description.value === '' ? null : description.value, rank: +rank.value, aliases: aliases.value.split(',').map((s) => s.trim()).filter(Boolean) },
    r.etag ? { 'If-Match': r.etag } : {});
    say(p.status === 200 ? 'Item saved.' : p.status === 412 ? 'This item was changed by someone else: reopen it.' : errText(p));
    if (p.status === 200) showItem(l, it.id);
  } }, fs));
  value.focus();
}

// ---- import --------------------------------------------------------------------------
// The file goes as it is; the server converts it with the CLI's converter (CSV or TSV with
// a header row, a JSON array of items, or NDJSON) and names the lines of the file in its
// errors. The format comes from the name, else from the first bytes as the CLI guesses
// it. The upload is an XHR so its progress events can be shown.
async function importFormat(f) {
  const ext = (/\.([a-z]+)$/i.exec(f.name) || [])[1];
  const byExt = { csv: 'csv', tsv: 'tsv', tab: 'tsv', json: 'json', ndjson: 'ndjson', jsonl: 'ndjson' }[(ext || '').toLowerCase()];
  if (byExt) return byExt;
  const head = (await f.slice(0, 512).text()).replace(/^\uFEFF/, '').trimStart();
  return head[0] === '[' ? 'json' : head[0] === '{' ? 'ndjson' : 'csv';
}
const IMPORT_TYPES = { csv: 'text/csv', tsv: 'text/tab-separated-values', json: 'application/json', ndjson: 'application/x-ndjson' };

function importArea(box, l) {
  if (!can('writeLists')) return box.replaceChildren();
  const file = h('input', { type: 'file', accept: '.csv,.tsv,.json,.ndjson,.jsonl,text/csv,text/tab-separated-values,application/json,application/x-ndjson', required: true });
  const mode = select(['append', 'replace'], 'append');
  const bar = h('progress', { id: 'import-progress', max: 100, value: 0, 'aria-label': 'Upload progress' });
  const out = h('p', { id: 'import-result', role: 'status', 'aria-live': 'polite' });
  box.replaceChildren(h('h2', { text: 'Import a file' }), h('form', { id: 'import-form', onsubmit: async (e) => {
    e.preventDefault();
    const f = file.files[0];
    if (!f) return;
    if (mode.value === 'replace' && !confirm('Replace every item of ' + l.name + ' with this file?')) return;
    const format = await importFormat(f);
    const x = new XMLHttpRequest();
    x.open('POST', '/dashboard/api/lists/' + l.id + '/items/import?mode=' + mode.value + '&format=' + format);
    x.setRequestHeader('Content-Type', IMPORT_TYPES[format]);
    x.setRequestHeader('X-CSRF-Token', me.csrfToken);
    x.setRequestHeader('Idempotency-Key', crypto.randomUUID());
    x.upload.onprogress = (p) => { if (p.lengthComputable) { bar.value = Math.round((100 * p.loaded) / p.total); } };
    out.textContent = 'Uploading…';
    x.onload = () => {
      let b = {};
      try { b = JSON.parse(x.responseText); } catch { /* not JSON */ }
      bar.value = 100;
      const d = b.details || {};
      const problems = (d.problems || []).slice(1, 5);
      out.textContent = (x.status < 300
        ? 'Imported: ' + ['created', 'updated', 'unchanged', 'deleted'].filter((k) => k in b).map((k) => b[k] + ' ' + k).join(', ') + '.'
        : 'Import refused, nothing changed: ' + (b.message || x.status) + (problems.length ? ' Also: ' + problems.join('; ') + '.' : ''))
        + ((b.note || d.note) ? ' ' + (b.note || d.note) : '');
      out.dataset.done = String(x.status);
      if (x.status < 300) loadItems($('items'), l, '', null);
    };
    x.onerror = () => { out.textContent = 'The upload failed.'; out.dataset.done = 'error'; };
    x.send(f);
  } }, field('import-file', 'File (CSV or TSV with a header row, a JSON array of items, or NDJSON)', file), field('import-mode', 'Mode', mode),
  h('button', { type: 'submit' }, 'Upload'), h('div', {}, bar), out));
}

// ---- selections and usage ------------------------------------------------------------
async function selectionsArea(box, l) {
  const r = await api('GET', '/lists/' + l.id + '/selections?days=7');
  box.replaceChildren(h('h2', { text: 'Selections (7 days)' }));
  if (r.status !== 200) return box.append(h('p', { class: 'err', text: errText(r) }));
  const s = r.body;
  if (!s.eventsAvailable)
    return box.append(h('p', { class: 'notice', id: 'selections-unavailable', role: 'note',
      text: 'No selection data source is configured: this control plane cannot read the runtime\'s selection events.' }));
  box.append(h('p', { text: s.total + ' selections.' }),
    table(['Day', 'Selections'], s.perDay.map((d) => tr(d.date, String(d.selections)))),
    h('h3', { text: 'Most selected items' }),
    table(['Item', 'Selections'], s.topItems.map((t) => tr(t.value === null ? t.itemId + ' (deleted)' : t.displayValue || t.value, String(t.selections))),
      s.topItems.length ? null : 'No selections yet.'));
}

// ---- search analytics and query suggestions (docs/ANALYTICS.md) ---------------------------
// Charts are inline SVG built here with presentation attributes and classes (the page's
// Content-Security-Policy allows no inline style); each point carries its value in a
// <title>, and a table under each chart holds the same figures for screen readers.
const SVGNS = 'http://www.w3.org/2000/svg';
function sv(tag, attrs, ...kids) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) e.setAttribute(k, String(v));
  for (const k of kids.flat()) if (k !== null && k !== undefined) e.append(k);
  return e;
}
const utcDay = (ms) => new Date(ms).toISOString().slice(0, 10);
const pct = (x) => (Math.round(x * 10000) / 100).toFixed(2) + '%';
// The y-axis top for values up to x: four gridline steps of a round size (1, 2, 2.5 or 5
// times a power of ten; whole numbers of at least 1 for counts).
function niceMax(x, counts = true) {
  const want = Math.max(x / 4, counts ? 1 : 1e-4);
  const p = 10 ** Math.floor(Math.log10(want));
  const steps = (counts && p === 1 ? [1, 2, 5, 10] : [1, 2, 2.5, 5, 10]).map((m) => m * p);
  return 4 * steps.find((m) => m >= want - 1e-12);
}
// A line chart of series ({key, label, values}) over days, with gridlines, a day label
// every few days and a legend. fmt formats axis values and point titles.
function lineChart(id, title, days, series, fmt = (v) => String(Math.round(v * 100) / 100), top) {
  const W = 640, H = 230, L = 56, R = 26, T = 12, B = 34;
  const max = top || niceMax(Math.max(0, ...series.flatMap((s) => s.values)));
  const x = (i) => L + (days.length === 1 ? (W - L - R) / 2 : (i * (W - L - R)) / (days.length - 1));
  const y = (v) => T + (H - T - B) * (1 - v / max);
  const parts = [];
  for (let k = 0; k <= 4; k++) {
    const v = (max * k) / 4;
    parts.push(sv('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), class: 'grid' }),
      sv('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'tick' }, fmt(v)));
  }
  const every = Math.max(1, Math.ceil(days.length / 8));
  days.forEach((d, i) => {
    if ((i % every === 0 && days.length - 1 - i >= every / 2) || i === days.length - 1)
      parts.push(sv('text', { x: x(i), y: H - B + 18, 'text-anchor': 'middle', class: 'tick' }, d.slice(5)));
  });
  parts.push(sv('line', { x1: L, x2: W - R, y1: y(0), y2: y(0), class: 'axis' }));
  for (const s of series) {
    parts.push(sv('polyline', { points: s.values.map((v, i) => `${x(i)},${y(v)}`).join(' '), class: 'line s-' + s.key, 'data-series': s.key }));
    s.values.forEach((v, i) => parts.push(sv('circle', { cx: x(i), cy: y(v), r: 3.5, class: 'dot s-' + s.key, 'data-series': s.key, 'data-day': days[i], 'data-value': v },
      sv('title', {}, `${s.label}, ${days[i]}: ${fmt(v)}`))));
  }
  return h('figure', { class: 'chart' },
    h('figcaption', { text: title }),
    sv('svg', { id, viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': title, preserveAspectRatio: 'xMidYMid meet' }, ...parts),
    h('ul', { class: 'legend' }, series.map((s) => h('li', {}, h('span', { class: 'swatch s-' + s.key, 'aria-hidden': 'true' }), s.label))));
}

async function pageAnalytics(id, view) {
  const r = await api('GET', '/lists/' + id);
  if (r.status !== 200) return view.append(h('h1', { text: 'Search analytics' }), h('p', { class: 'err', text: errText(r) }));
  const l = r.body;
  const today = Date.now();
  const from = h('input', { type: 'date', required: true, value: utcDay(today - 29 * 86400000) });
  const to = h('input', { type: 'date', required: true, value: utcDay(today) });
  const out = h('div', { id: 'analytics', 'aria-live': 'polite' });
  const load = async () => {
    out.dataset.loading = '';
    delete out.dataset.ready;
    const a = await api('GET', `/lists/${l.id}/analytics?from=${encodeURIComponent(from.value)}&to=${encodeURIComponent(to.value)}`);
    out.replaceChildren();
    delete out.dataset.loading;
    if (a.status !== 200) {
      const f = a.body.details && a.body.details.fields;
      out.append(h('p', { class: 'err', id: 'analytics-error', role: 'alert',
        text: errText(a) + (f ? ' (' + f.map((x) => x.path + ': ' + x.reason).join('; ') + ')' : '') }));
      out.dataset.ready = String(a.status);
      return;
    }
    renderAnalytics(out, a.body);
    out.dataset.ready = '200';
  };
  view.append(h('p', {}, h('a', { href: '#/lists/' + l.id, text: '← ' + l.name })),
    h('h1', { text: 'Search analytics: ' + l.name }),
    h('p', { class: 'muted', text: 'What the runtimes counted for this list, per UTC day (at most 92 days). Counts appear within about 15 seconds; answers a CDN served from its cache are not seen.' }),
    h('form', { id: 'analytics-range', class: 'row', onsubmit: (e) => { e.preventDefault(); load(); } },
      h('div', {}, field('analytics-from', 'From (UTC)', from)), h('div', {}, field('analytics-to', 'To (UTC)', to)),
      h('button', { type: 'submit' }, 'Show')),
    out);
  const sug = h('section', { id: 'sec-suggestions', 'aria-labelledby': 'sec-suggestions-h' });
  if (can('writeLists')) view.append(sug);
  await Promise.all([load(), can('writeLists') ? suggestionsForm(sug, l) : null]);
}

function renderAnalytics(out, a) {
  const days = a.byDay.map((d) => d.day);
  const series = (key, label) => ({ key, label, values: a.byDay.map((d) => d[key]) });
  const ctr = a.byDay.map((d) => (d.queries ? d.selections / d.queries : 0));
  out.append(
    h('dl', { class: 'totals', id: 'analytics-totals' },
      [['Queries', a.queries], ['No-result queries', a.noResultQueries], ['Selections', a.selections], ['Click-through', pct(a.clickThroughRate)]]
        .map(([k, v]) => h('div', {}, h('dt', { text: k }), h('dd', { text: String(v) })))),
    lineChart('chart-activity', 'Queries, no-result queries and selections per day', days,
      [series('queries', 'Queries'), series('noResultQueries', 'No-result queries'), series('selections', 'Selections')]),
    lineChart('chart-ctr', 'Click-through rate per day (selections ÷ queries)', days,
      [{ key: 'ctr', label: 'Click-through', values: ctr }], pct, niceMax(Math.max(0.04, ...ctr), false)),
    h('details', {}, h('summary', { text: 'The figures per day' }),
      table(['Day', 'Queries', 'No-result queries', 'Selections', 'Click-through'],
        a.byDay.map((d, i) => tr(d.day, String(d.queries), String(d.noResultQueries), String(d.selections), pct(ctr[i]))))),
    h('h2', { text: 'Top queries' }),
    h('div', { id: 'top-queries' }, table(['Query', 'Count', 'Selections'], a.topQueries.map((q) => tr(q.q, String(q.count), String(q.selections))),
      a.topQueries.length ? null : 'No queries in this range.')),
    h('h2', { text: 'Top queries without a result' }),
    h('div', { id: 'top-no-result' }, table(['Query', 'Count'], a.topNoResultQueries.map((q) => tr(q.q, String(q.count))),
      a.topNoResultQueries.length ? null : 'Every query found something.')),
    h('h2', { text: 'Most selected items' }),
    h('div', { id: 'top-items' }, table(['Item', 'Selections', 'Mean position'], a.topItems.map((t) => tr(h('code', { text: t.itemId }), String(t.selections), String(t.meanPosition))),
      a.topItems.length ? null : 'No selections in this range.')));
}

// Generates query suggestions into a chosen list: Preview (dryRun) shows exactly what
// would be published; Publish sends the same body with an Idempotency-Key.
async function suggestionsForm(box, l) {
  box.append(h('h2', { id: 'sec-suggestions-h', text: 'Query suggestions' }),
    h('p', { class: 'muted', text: 'Fill another list with the queries that led to selections of this one: each becomes an item ranked by its selections. Anyone holding the public key can send selections, so review the preview before publishing.' }));
  const lists = await api('GET', '/lists?limit=100');
  if (lists.status !== 200) return box.append(h('p', { class: 'err', text: errText(lists) }));
  const targets = lists.body.data.filter((x) => x.id !== l.id && x.status !== 'archived');
  if (!targets.length) return box.append(h('p', { class: 'notice', id: 'suggest-no-target', text: 'Create another list first: the suggestions replace its items.' }));
  const target = h('select', {}, targets.map((x) => h('option', { value: x.id, text: x.name + ' (' + x.id + ')' })));
  const days = h('input', { type: 'number', min: 1, max: 366, value: 30, required: true });
  const minSel = h('input', { type: 'number', min: 1, value: 3, required: true });
  const maxItems = h('input', { type: 'number', min: 1, max: 100000, value: 10000, required: true });
  const exclude = h('textarea', { rows: 3, placeholder: 'One phrase per line' });
  const result = h('div', { id: 'suggest-result', 'aria-live': 'polite' });
  const body = () => ({ targetListId: target.value, days: Number(days.value), minSelections: Number(minSel.value),
    maxItems: Number(maxItems.value), exclude: exclude.value.split('\n').map((x) => x.trim()).filter(Boolean) });
  const done = (status, ...nodes) => { result.replaceChildren(...nodes); result.dataset.done = String(status); };
  const fail = (r) => {
    const f = r.body.details && r.body.details.fields;
    done(r.status, h('p', { class: 'err', role: 'alert', text: errText(r) + (f ? ' (' + f.map((x) => x.path + ': ' + x.reason).join('; ') + ')' : '') }));
  };
  const publish = async (b, n) => {
    const name = target.selectedOptions[0].textContent;
    if (!confirm(`Replace the items of ${name} with these ${n} suggestions and publish it?`)) return;
    const r = await api('POST', `/lists/${l.id}/query-suggestions`, b, { 'Idempotency-Key': crypto.randomUUID() });
    if (r.status !== 200 && r.status !== 202) return fail(r);
    done(r.status, h('p', { id: 'suggest-published', role: 'status' }, `${name}: version ${r.body.versionNumber} is ${r.body.state} with ${r.body.itemCount} items. `,
      h('a', { href: '#/lists/' + b.targetListId, text: 'Open the list' })));
  };
  box.append(h('form', { id: 'suggest-form', onsubmit: async (e) => {
    e.preventDefault();
    delete result.dataset.done;
    const b = body();
    const r = await api('POST', `/lists/${l.id}/query-suggestions`, { ...b, dryRun: true });
    if (r.status !== 200) return fail(r);
    const items = r.body.items;
    done(200, h('p', { id: 'suggest-count', text: `${items.length} suggestions would replace the items of ${target.selectedOptions[0].textContent}:` }),
      table(['Value', 'Shown as', 'Rank (selections)'], items.slice(0, 200).map((it) => tr(it.value, it.displayValue, String(it.rank))),
        items.length > 200 ? `The first 200 of ${items.length}.` : null),
      h('button', { type: 'button', id: 'suggest-publish', onclick: () => publish(b, items.length) }, `Publish ${items.length} suggestions`));
  } },
  field('suggest-target', 'Target list (its items are replaced)', target),
  h('div', { class: 'row' }, h('div', {}, field('suggest-days', 'Days', days)), h('div', {}, field('suggest-min', 'Minimum selections', minSel)),
    h('div', {}, field('suggest-max', 'Maximum items', maxItems))),
  field('suggest-exclude', 'Leave out queries holding these phrases (whole words)', exclude),
  h('button', { type: 'submit' }, 'Preview suggestions')), result);
}

async function pageUsage(view) {
  view.append(h('h1', { text: 'Usage' }));
  const r = await api('GET', '/usage');
  if (r.status !== 200) return view.append(h('p', { class: 'err', text: errText(r) }));
  const u = r.body;
  if (!u.usageAvailable)
    view.append(h('div', { class: 'notice', id: 'usage-unavailable', role: 'note' },
      h('strong', { text: 'No usage data source is configured. ' }),
      'This control plane cannot read the runtime\'s query counts, so the counts below are unknown (—), not zero. ' +
      'Start it with the runtime\'s data directory (suggestd serve, or suggestd control --data-dir) to see them.'));
  view.append(table(['Application', 'Queries in ' + u.month, 'Monthly quota', 'Share'], u.applications.map((a) =>
    tr(a.name, a.used === null ? '—' : String(a.used), a.monthlyQuota === null ? 'unlimited' : String(a.monthlyQuota),
      a.monthlyQuota && a.used !== null
        ? h('meter', { min: 0, max: a.monthlyQuota, value: a.used, high: 0.9 * a.monthlyQuota, 'aria-label': a.name + ' share of quota',
          title: Math.round((100 * a.used) / a.monthlyQuota) + '%' })
        : '—'))));
}

// ---- members -------------------------------------------------------------------------
const ROLES = ['viewer', 'data_steward', 'admin', 'owner'];
async function pageMembers(view) {
  view.append(h('h1', { text: 'Members' }));
  const r = await api('GET', '/members');
  if (r.status !== 200) return view.append(h('p', { class: 'err', text: errText(r) }));
  const shown = h('div');
  const mayTouch = (role) => can('manageMembers') && (role !== 'owner' || can('manageOwners'));
  const roles = can('manageOwners') ? ROLES : ROLES.slice(0, 3);
  view.append(shown, table(['Email', 'Role', 'Status', ''], r.body.data.map((m) => {
    if (!mayTouch(m.role) || m.id === me.member.id) return tr(m.email, m.role, m.status, '');
    const sel = select(roles, m.role);
    sel.setAttribute('aria-label', 'Role of ' + m.email);
    sel.addEventListener('change', async () => {
      const p = await api('PATCH', '/members/' + m.id, { role: sel.value });
      say(p.status === 200 ? m.email + ' is now ' + sel.value + '.' : errText(p));
    });
    return tr(m.email, sel, m.status, h('button', { type: 'button', class: 'small danger', 'aria-label': 'Remove ' + m.email,
      onclick: async () => {
        if (!confirm('Remove ' + m.email + '? Their sessions end at once.')) return;
        const d = await api('DELETE', '/members/' + m.id);
        await route();
        say(d.status === 200 ? m.email + ' removed.' : errText(d));
      } }, 'Remove'));
  })));
  if (!can('manageMembers')) return;
  const email = h('input', { type: 'email', required: true });
  const role = select(roles, 'viewer');
  view.append(h('form', { id: 'member-invite', onsubmit: async (e) => {
    e.preventDefault();
    const c = await api('POST', '/members', { email: email.value, role: role.value });
    if (c.status !== 201) return say(errText(c));
    // Shown once: on the members page it rendered, or on whatever page a visit started
    // meanwhile put up, but never lost.
    const page = (await route()) || $('view');
    page.prepend(shownOnce('Temporary password of ' + c.body.email, c.body.temporaryPassword));
  } }, h('h2', { text: 'Invite a member' }), field('member-email', 'Email', email), field('member-role', 'Role', role),
  h('button', { type: 'submit' }, 'Invite')));
}

// ---- audit log (admins) -------------------------------------------------------------
function auditDetails(d) {
  if (!d || typeof d !== 'object') return '';
  return Object.entries(d).map(([k, v]) => k + ': ' + (Array.isArray(v) ? v.join(', ') : JSON.stringify(v))).join('; ');
}
async function pageAudit(view) {
  view.append(h('h1', { text: 'Audit log' }),
    h('p', { class: 'muted', text: 'Every change made in this workspace, newest first: who, what, on which record.' }));
  const rows = h('div', { id: 'audit', 'data-what': 'the audit log' });
  view.append(rows);
  await pagedTable(rows, 'audit', (c) => '/audit?limit=' + PAGE + (c ? '&cursor=' + encodeURIComponent(c) : ''),
    ['When', 'Member', 'Action', 'Target', 'Result', 'Details'], (e) =>
      tr(fmtTime(e.at), e.actorEmail || e.actor, h('code', { text: e.action }), e.target ? h('code', { text: e.target }) : '—',
        String(e.status), auditDetails(e.details)), 'Nothing has been changed yet.');
}

// ---- account: the signed-in member's password ----------------------------------------
async function pageAccount(view) {
  view.append(h('h1', { text: 'Your account' }),
    h('p', {}, 'Signed in as ', h('strong', { text: me.member.email }), ' (' + me.member.role + ').'));
  const cur = h('input', { type: 'password', required: true, autocomplete: 'current-password' });
  const nw = h('input', { type: 'password', required: true, minlength: 12, autocomplete: 'new-password', 'aria-describedby': 'pw-help' });
  const again = h('input', { type: 'password', required: true, autocomplete: 'new-password' });
  const msg = h('p', { id: 'password-msg', role: 'alert' });
  view.append(h('form', { id: 'password-form', onsubmit: async (e) => {
    e.preventDefault();
    msg.className = 'err';
    if (nw.value !== again.value) { msg.textContent = 'The two new passwords differ.'; again.focus(); return; }
    const r = await api('POST', '/me/password', { currentPassword: cur.value, newPassword: nw.value });
    cur.value = nw.value = again.value = '';
    if (r.status === 200) {
      msg.className = '';
      msg.textContent = 'Password changed. Every other session of yours has been signed out; this one stays signed in.';
    } else if (r.status === 401 && r.body.code === 'invalid_credentials') {
      msg.textContent = 'The current password is wrong; nothing changed.';
      cur.focus();
    } else {
      msg.textContent = errText(r) + ((r.body.details && r.body.details.fields) || []).map((f) => ' ' + f.reason).join('');
    }
  } }, h('h2', { text: 'Change your password' }),
  field('pw-current', 'Current password', cur), field('pw-new', 'New password', nw),
  h('p', { id: 'pw-help', class: 'muted', text: 'At least 12 characters. Changing it signs out every other browser where you are signed in.' }),
  field('pw-again', 'New password again', again), h('button', { type: 'submit' }, 'Change password'), msg));
}

// ---- start ---------------------------------------------------------------------------
document.addEventListener('DOMContentLoaded', async () => {
  $('signin-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const email = $('email').value, password = $('password').value;
    $('password').value = '';
    signIn(email, password);
  });
  // Editing the form again drops a workspace choice (and the password it holds).
  $('signin-form').addEventListener('input', hideWorkspaceChoice);
  const out = async (path) => { await api('POST', path); me = null; showSignin(); };
  $('sign-out').addEventListener('click', () => out('/session/sign-out'));
  $('sign-out-all').addEventListener('click', () => out('/sessions/revoke-all'));
  window.addEventListener('hashchange', route);
  // The skip link moves the focus to the content and keeps the page's address.
  document.querySelector('.skip').addEventListener('click', (e) => { e.preventDefault(); $('main').focus(); });
  const r = await api('GET', '/me');
  if (r.status === 200) signedIn(r.body);
  else showSignin();
});
