// Shared harness of the node tests: starts the real build/suggestd on free ports with a
// fresh data dir, drives the admin CLI and the control plane, and serves files on another
// origin. Nothing here fakes the service.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync, readdirSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BINARY = process.env.SUGGESTD_BINARY || path.join(ROOT, 'build', 'suggestd');

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitHttp(url, proc, what) {
  const deadline = Date.now() + 10000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${what} exited early (${proc.exitCode})`);
    try {
      const r = await fetch(url);
      if (r.status < 500) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error(`${what} did not start`);
    await sleep(50);
  }
}

/** SIGTERM to a child we started, then wait for it to exit. */
async function stopProcess(proc) {
  if (proc && proc.exitCode === null) {
    const done = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    await done;
  }
}

export class Suggestd {
  /** Starts `suggestd serve`; `extra` are more flags (e.g. a short --session-idle-seconds). */
  async start(extra = []) {
    this.dir = mkdtempSync(path.join(tmpdir(), 'suggestd-node-'));
    this.controlPort = await freePort();
    this.runtimePort = await freePort();
    this.control = `http://127.0.0.1:${this.controlPort}`;
    this.runtime = `http://127.0.0.1:${this.runtimePort}`;
    this.log = [];
    this.proc = spawn(BINARY, [
      'serve', '--data-dir', this.dir,
      '--control-listen', `127.0.0.1:${this.controlPort}`,
      '--runtime-listen', `127.0.0.1:${this.runtimePort}`, ...extra,
    ], { stdio: ['ignore', 'ignore', 'pipe'] });
    this.proc.stderr.on('data', (d) => this.log.push(d.toString()));
    await waitHttp(this.control + '/healthz', this.proc, 'suggestd control');
    await waitHttp(this.runtime + '/healthz', this.proc, 'suggestd runtime');
    return this;
  }

  async stop() {
    await stopProcess(this.proc);
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }

  admin(...words) {
    const out = execFileSync(BINARY, ['admin', ...words, '--data-dir', this.dir], { encoding: 'utf8' });
    return JSON.parse(out);
  }

  /** A publishable key, once the runtime serves it (admin changes reach it within ~1 s). */
  async publishableKey(app, list, ...origins) {
    const args = ['publishable-key', 'create', '--application', app, '--list', list];
    for (const o of origins) args.push('--origin', o);
    const key = this.admin(...args).publishableKey;
    const deadline = Date.now() + 5000;
    const known = async () => {
      const r = await fetch(`${this.runtime}/v1/bootstrap?key=${key}`);
      return r.status !== 401 || (await r.json()).code !== 'invalid_key';
    };
    while (!(await known())) {
      if (Date.now() > deadline) throw new Error('the runtime never saw the new publishable key');
      await sleep(50);
    }
    return key;
  }

  /** A workspace, an application and a secret key; signing enabled for POST /token. */
  tenant() {
    const ws = this.admin('workspace', 'create', '--name', 'Acme').id;
    const app = this.admin('application', 'create', '--workspace', ws, '--name', 'web').id;
    const sk = this.admin('secret-key', 'create', '--application', app).secretKey;
    this.admin('signing-key', 'rotate');
    return { ws, app, sk };
  }

  async api(sk, method, p, body) {
    const r = await fetch(this.control + '/api/v1' + p, {
      method,
      headers: { Authorization: `Bearer ${sk}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: r.status, headers: r.headers, json, text };
  }

  /** Creates a list with `items` (parents named by `parent` value), publishes it. */
  async list(sk, name, items, patch) {
    const l = await this.api(sk, 'POST', '/lists', { name });
    if (l.status !== 201) throw new Error(`create list: ${l.text}`);
    const id = l.json.id;
    if (patch) {
      const p = await this.api(sk, 'PATCH', `/lists/${id}`, patch);
      if (p.status !== 200) throw new Error(`patch list: ${p.text}`);
    }
    const ids = {};
    for (const it of items) {
      const body = { ...it };
      delete body.parent;
      if (it.parent) body.parentId = ids[it.parent];
      const r = await this.api(sk, 'POST', `/lists/${id}/items`, body);
      if (r.status !== 201) throw new Error(`add item: ${r.text}`);
      ids[it.value] = r.json.id;
    }
    const v = await this.api(sk, 'POST', `/lists/${id}/versions`);
    if (v.status !== 200 || v.json.state !== 'active') throw new Error(`publish: ${v.text}`);
    return { id, ids };
  }

  /** Selection events the runtime wrote (docs/RUNTIME.md "Selection reports"). */
  selections() {
    const d = path.join(this.dir, 'runtime', 'events');
    if (!existsSync(d)) return [];
    const out = [];
    for (const f of readdirSync(d).sort()) {
      for (const line of readFileSync(path.join(d, f), 'utf8').split('\n')) if (line) out.push(JSON.parse(line));
    }
    return out;
  }

  /** Waits until `pred` holds for some selection event (they are flushed within ~1 s). */
  async selection(pred, ms = 6000) {
    const deadline = Date.now() + ms;
    for (;;) {
      const hit = this.selections().find(pred);
      if (hit) return hit;
      if (Date.now() > deadline) return null;
      await sleep(100);
    }
  }
}

/** Serves the repository's files on another origin (python3's http.server). */
export class StaticServer {
  async start() {
    this.port = await freePort();
    this.origin = `http://127.0.0.1:${this.port}`;
    this.proc = spawn('python3', ['-m', 'http.server', String(this.port), '--bind', '127.0.0.1', '--directory', ROOT], {
      stdio: 'ignore',
    });
    await waitHttp(this.origin + '/examples/browser/index.html', this.proc, 'http.server');
    return this;
  }

  stop() {
    return stopProcess(this.proc);
  }
}

/** Debian's Chromium for the browser suites. */
export const CHROMIUM = process.env.CHROMIUM || ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find(existsSync);

/** A browser suite's `skip`: false with Chromium, a reason without; under CI=true it must run. */
export function browserSkip() {
  if (!CHROMIUM && process.env.CI === 'true') throw new Error('CI=true but no Chromium: scripts/deps.sh installs Debian\'s chromium');
  return CHROMIUM ? false : 'Chromium is not installed (apt-get install chromium, or run scripts/deps.sh)';
}

/** Headless Chromium driven by puppeteer-core (tests/node/package.json). */
export async function launchChromium() {
  const { default: puppeteer } = await import('puppeteer-core');
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
  });
}
