// An autocomplete widget on the WAI-ARIA 1.2 combobox pattern (list autocomplete, no
// inline completion): the input keeps focus, aria-activedescendant names the active
// option, arrows move, Enter chooses, Escape closes (and clears when already closed).
// No framework; themable through the CSS variables in STYLE.

import { renderHighlight } from './highlight.js';

const STYLE = `
.sg-combo{position:relative}
.sg-listbox{position:absolute;left:0;right:0;z-index:var(--sg-z,1000);margin:var(--sg-gap,4px) 0 0;padding:0;list-style:none;
max-height:var(--sg-max-height,min(60vh,22rem));overflow-y:auto;-webkit-overflow-scrolling:touch;
background:var(--sg-bg,#fff);color:var(--sg-fg,#111);border:1px solid var(--sg-border,#c8c8d0);
border-radius:var(--sg-radius,8px);box-shadow:var(--sg-shadow,0 6px 24px rgba(0,0,0,.12));font:var(--sg-font,inherit)}
.sg-listbox[hidden]{display:none}
.sg-option{display:flex;flex-direction:column;justify-content:center;min-height:var(--sg-row,44px);
padding:var(--sg-pad,6px 12px);cursor:pointer;touch-action:manipulation}
.sg-option[aria-selected=true]{background:var(--sg-active-bg,#e8f0fe);color:var(--sg-active-fg,inherit)}
.sg-option mark{background:var(--sg-mark-bg,transparent);color:var(--sg-mark-fg,inherit);font-weight:var(--sg-mark-weight,700)}
.sg-description,.sg-ancestors{font-size:.85em;color:var(--sg-muted,#666)}
.sg-status{font-size:.9em;color:var(--sg-muted,#666);min-height:1.2em}
.sg-status.sg-error{color:var(--sg-error,#b00020)}`;

let seq = 0;

/**
 * Turns `input` into a combobox backed by `options.client` (a Client).
 * Options: client (required), onSelect(item, answer, position), onError(err),
 * ancestorsLabel(ancestors) -> string, injectStyles (default true), messages, within (an
 * item id, or a function returning one or null, read at each query: only that item's
 * descendants are suggested, e.g. the cities of the country chosen in another box).
 * Returns {close(), destroy(), get answer()}.
 */
export function autocomplete(input, options) {
  const o = options || {};
  const client = o.client;
  if (!client) throw new TypeError('suggestd: autocomplete needs a client');
  const doc = input.ownerDocument;
  const msg = Object.assign({ empty: 'No suggestions', count: (n) => (n === 1 ? '1 suggestion' : `${n} suggestions`) }, o.messages);
  const base = input.id || 'sg-' + ++seq;
  if (!input.id) input.id = base;

  if (o.injectStyles !== false && !doc.getElementById('sg-style') && !doc.sgStyleAdopted) {
    // A constructed stylesheet where the browser has them: a page whose
    // Content-Security-Policy forbids inline style (style-src 'self', as the dashboard's)
    // would block a <style> element, but not the CSS object model.
    const View = doc.defaultView;
    if (View && View.CSSStyleSheet && 'adoptedStyleSheets' in doc) {
      const sheet = new View.CSSStyleSheet();
      sheet.replaceSync(STYLE);
      doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, sheet];
      doc.sgStyleAdopted = true;
    } else {
      const st = doc.createElement('style');
      st.id = 'sg-style';
      st.textContent = STYLE;
      doc.head.appendChild(st);
    }
  }

  // The listbox and a live region for counts and errors sit right after the input, in a
  // positioned wrapper so the popup lines up with it whatever the page's layout.
  const wrap = doc.createElement('div');
  wrap.className = 'sg-combo';
  input.parentNode.insertBefore(wrap, input);
  wrap.appendChild(input);
  const list = doc.createElement('ul');
  list.id = base + '-listbox';
  list.className = 'sg-listbox';
  list.setAttribute('role', 'listbox');
  list.hidden = true;
  const status = doc.createElement('div');
  status.className = 'sg-status';
  status.setAttribute('role', 'status');
  status.setAttribute('aria-live', 'polite');
  wrap.append(list, status);

  const attrs = {
    role: 'combobox',
    'aria-autocomplete': 'list',
    'aria-expanded': 'false',
    'aria-controls': list.id,
    autocomplete: 'off',
    autocapitalize: 'none',
    spellcheck: 'false',
    enterkeyhint: 'go',
  };
  for (const [k, v] of Object.entries(attrs)) input.setAttribute(k, v);
  const label = input.labels && input.labels[0];
  if (label) list.setAttribute('aria-labelledby', label.id || (label.id = base + '-label'));

  let answer = null; // the answer on screen
  let active = -1;
  let timer = 0;
  let ctrl = null;
  let gen = 0; // bumped by every edit: an answer for an older generation is never shown

  const setStatus = (text, isError) => {
    status.textContent = text;
    status.classList.toggle('sg-error', !!isError);
  };

  function open(on) {
    list.hidden = !on;
    input.setAttribute('aria-expanded', on ? 'true' : 'false');
    if (!on) setActive(-1);
  }

  function setActive(i) {
    const opts = list.children;
    if (active >= 0 && opts[active]) opts[active].setAttribute('aria-selected', 'false');
    active = i;
    if (i >= 0 && opts[i]) {
      opts[i].setAttribute('aria-selected', 'true');
      input.setAttribute('aria-activedescendant', opts[i].id);
      opts[i].scrollIntoView({ block: 'nearest' });
    } else {
      input.removeAttribute('aria-activedescendant');
    }
  }

  function render(ans) {
    answer = ans;
    active = -1;
    list.textContent = '';
    const items = ans.items || [];
    items.forEach((it, i) => {
      const li = doc.createElement('li');
      li.id = `${list.id}-${i}`;
      li.className = 'sg-option';
      li.setAttribute('role', 'option');
      li.setAttribute('aria-selected', 'false');
      const main = doc.createElement('span');
      main.className = 'sg-display';
      renderHighlight(main, it.displayValue, it.highlight);
      li.appendChild(main);
      // The item's description (display only, e.g. "Texas, United States"), as text.
      if (typeof it.description === 'string' && it.description) {
        const d = doc.createElement('span');
        d.className = 'sg-description';
        d.textContent = it.description;
        li.appendChild(d);
      }
      if (Array.isArray(it.ancestors) && it.ancestors.length) {
        const a = doc.createElement('span');
        a.className = 'sg-ancestors';
        a.textContent = o.ancestorsLabel
          ? o.ancestorsLabel(it.ancestors)
          : it.ancestors.map((x) => x.displayValue).join(' › ');
        li.appendChild(a);
      }
      // pointerdown (not click) so the input never loses focus; works for touch and mouse.
      li.addEventListener('pointerdown', (e) => {
        e.preventDefault();
        choose(i);
      });
      list.appendChild(li);
    });
    open(items.length > 0);
    setStatus(items.length ? msg.count(items.length) : ans.code === 'query_too_short' ? '' : msg.empty, false);
    input.removeAttribute('aria-activedescendant');
  }

  function fail(err) {
    open(false);
    setStatus(err.message, true);
    if (o.onError) o.onError(err);
    input.dispatchEvent(new CustomEvent('suggestd:error', { detail: err }));
  }

  function run(g, q) {
    if (ctrl) ctrl.abort(); // a stale request is cancelled, never awaited
    const c = (ctrl = new AbortController());
    const w = typeof o.within === 'function' ? o.within() : o.within;
    client.query(q, w === undefined ? { signal: c.signal } : { signal: c.signal, within: w || null }).then(
      (ans) => g === gen && render(ans),
      (err) => g === gen && err.name !== 'AbortError' && fail(err),
    );
  }

  function onInput() {
    const g = ++gen;
    clearTimeout(timer);
    const q = input.value;
    if (!q.trim()) {
      if (ctrl) ctrl.abort();
      open(false);
      setStatus('', false);
      return;
    }
    const wait = client.policy.debounceMs;
    timer = setTimeout(() => run(g, q), wait);
  }

  function choose(i) {
    const it = answer && answer.items && answer.items[i];
    if (!it) return;
    input.value = it.displayValue;
    gen++; // whatever is in flight no longer matches the input
    clearTimeout(timer);
    open(false);
    setStatus('', false);
    client.select(answer, it, i + 1);
    if (o.onSelect) o.onSelect(it, answer, i + 1);
    input.dispatchEvent(new CustomEvent('suggestd:select', { detail: { item: it, answer, position: i + 1 } }));
  }

  function onKey(e) {
    const n = list.children.length;
    const isOpen = !list.hidden;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      if (!n) return;
      e.preventDefault();
      if (!isOpen) open(true);
      const down = e.key === 'ArrowDown';
      setActive(active < 0 ? (down ? 0 : n - 1) : (active + (down ? 1 : n - 1)) % n);
    } else if (e.key === 'Enter') {
      if (isOpen && active >= 0) {
        e.preventDefault();
        choose(active);
      }
    } else if (e.key === 'Escape') {
      e.preventDefault();
      if (isOpen) open(false);
      else {
        input.value = '';
        onInput();
      }
    }
  }

  const onBlur = () => open(false);
  const onFocus = () => client.bootstrap().catch(fail); // also re-checks a stale policy
  input.addEventListener('input', onInput);
  input.addEventListener('keydown', onKey);
  input.addEventListener('blur', onBlur);
  input.addEventListener('focus', onFocus);

  return {
    get answer() {
      return answer;
    },
    close: () => open(false),
    destroy() {
      clearTimeout(timer);
      if (ctrl) ctrl.abort();
      input.removeEventListener('input', onInput);
      input.removeEventListener('keydown', onKey);
      input.removeEventListener('blur', onBlur);
      input.removeEventListener('focus', onFocus);
      for (const k of Object.keys(attrs)) input.removeAttribute(k);
      input.removeAttribute('aria-activedescendant');
      wrap.replaceWith(input);
    },
  };
}
