"""Black-box test harness: starts the real binary on free ports with per-test overrides.

Every test talks HTTP to a real `suggestd serve` (or `control` / `runtime`) process over
loopback and uses the real admin CLI, exactly as a user would. Stdlib only.
"""
import json
import os
import queue
import random
import resource
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse
import uuid
import http.client

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BINARY = os.environ.get("SUGGESTD_BINARY", os.path.join(ROOT, "build", "suggestd"))

# SUGGESTD_TEST_DATABASE=postgres://…/postgres (a server's maintenance database) runs the
# suite on PostgreSQL: every data dir gets a fresh database of its own, created on first use
# and dropped after the test, and every serve/control/admin run on that data dir is given
# `--database URL` (the data dir still holds local state and the edge directory).
TEST_DATABASE = os.environ.get("SUGGESTD_TEST_DATABASE") or None
ON_POSTGRES = TEST_DATABASE is not None
_databases = {}  # realpath of a data dir -> database URL
_created = []  # database names created during the current test
_template = None  # this session's migrated, otherwise empty database (see _template_name)


# PostgreSQL's own psql (scripts/pg.sh's PG_BIN): Debian's /usr/bin/psql is a Perl wrapper
# that picks a version first, and the suite runs psql twice per data dir.
PSQL = os.path.join(os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin"), "psql")
if not os.access(PSQL, os.X_OK):
    PSQL = "psql"


def psql(sql, url=None):
    r = subprocess.run([PSQL, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url or TEST_DATABASE,
                        "-c", sql], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, f"psql {sql!r}: {r.stderr}"
    return r.stdout


def _url_of(name):
    return urllib.parse.urlsplit(TEST_DATABASE)._replace(path="/" + name).geturl()


def _template_name():
    """A database the binary has migrated and nothing else: each data dir's database is a
    copy of it (CREATE DATABASE … TEMPLATE), so the migrations run once per test file
    rather than once per data dir, and a fresh database still holds exactly what a first
    start leaves (`admin workspace list` migrates and only reads; the check below makes
    sure no row beyond sg_migrations is copied into every test's database). Nothing
    connects to it after this, as a template requires."""
    global _template
    if _template is None:
        name = "sg_tmpl_" + uuid.uuid4().hex[:20]
        psql(f'CREATE DATABASE "{name}"')
        d = tempfile.mkdtemp(prefix="suggestd-template-")
        try:
            r = subprocess.run([BINARY, "admin", "workspace", "list", "--data-dir", d,
                                "--database", _url_of(name)],
                               capture_output=True, text=True, timeout=60)
        finally:
            shutil.rmtree(d, ignore_errors=True)
        assert r.returncode == 0, f"migrating the template database: {r.stderr}"
        rows = psql("SELECT '<' || string_agg(table_name, ',') || '>' FROM information_schema.tables"
                    " WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
                    " AND table_name NOT IN ('sg_migrations', 'edge_guard') AND (xpath('/row/n/text()', query_to_xml("
                    "format('SELECT count(*) AS n FROM %I', table_name), false, true, '')))[1]"
                    "::text::bigint > 0", url=_url_of(name))
        assert "<" not in rows, f"the template database holds rows: {rows}"
        _template = name
    return _template


def database_url(data_dir):
    """The database URL a data dir's processes use on PostgreSQL; None on SQLite."""
    if not ON_POSTGRES:
        return None
    key = os.path.realpath(data_dir)
    if key not in _databases:
        name = "sg_t_" + uuid.uuid4().hex[:20]
        psql(f'CREATE DATABASE "{name}" TEMPLATE "{_template_name()}"')
        _created.append(name)
        _databases[key] = _url_of(name)
    return _databases[key]


def database_args(data_dir):
    """`--database URL` for a data dir on PostgreSQL, nothing on SQLite."""
    url = database_url(data_dir)
    return ["--database", url] if url else []


def pytest_configure(config):
    config.addinivalue_line("markers", "sqlite_only(reason): checks SQLite's own files; "
                            "skipped on PostgreSQL")


def pytest_collection_modifyitems(config, items):
    if not ON_POSTGRES:
        return
    for item in items:
        m = item.get_closest_marker("sqlite_only")
        if m:
            item.add_marker(pytest.mark.skip(reason="SQLite only: " + (m.args[0] if m.args else "")))


# DROP DATABASE waits for a checkpoint (about 0.4 s): one thread drops them in the
# background so the tests do not wait, and the session waits for it at the end.
_drops = queue.Queue()


def _dropper():
    while True:
        name = _drops.get()
        try:
            psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        except AssertionError as e:  # a leftover in a throwaway cluster, not a failure
            print(e)
        finally:
            _drops.task_done()


@pytest.fixture(autouse=True)
def _test_databases():
    """Drops the databases a test created (after its servers stopped: autouse fixtures are
    set up first, so they are torn down last)."""
    yield
    while _created:
        name = _created.pop()
        for k in [k for k, v in _databases.items() if v.endswith("/" + name)]:
            del _databases[k]
        _drops.put(name)


def pytest_sessionstart(session):
    if ON_POSTGRES:
        threading.Thread(target=_dropper, daemon=True).start()


def pytest_sessionfinish(session, exitstatus):
    if ON_POSTGRES:
        if _template:
            _drops.put(_template)
        _drops.join()


def destroy_store(data_dir):
    """Deletes the store a data dir's processes use: SQLite's files, or the PostgreSQL
    database (dropped even while connections remain)."""
    url = database_url(data_dir)
    if url:
        psql(f'DROP DATABASE "{urllib.parse.urlsplit(url).path[1:]}" WITH (FORCE)')
        return
    for f in os.listdir(data_dir):
        if f.startswith("suggestd.db"):
            os.remove(os.path.join(data_dir, f))


def store_bytes(data_dir):
    """Everything the store holds for a data dir, as bytes (to check what is never stored
    in the clear): SQLite's files, or a dump of the PostgreSQL database."""
    url = database_url(data_dir)
    if url:
        return subprocess.run(["pg_dump", "--no-owner", "-d", url], capture_output=True,
                              check=True, timeout=60).stdout
    out = b""
    for suffix in ("", "-wal"):
        try:
            with open(os.path.join(data_dir, "suggestd.db" + suffix), "rb") as f:
                out += f.read()
        except FileNotFoundError:
            pass
    return out


# Ports for servers come from below the kernel's ephemeral range (32768-60999 here), where
# no outgoing connection of this machine can take one between free_port() and the
# server's bind; random, so parallel test files rarely pick the same one (and Server.start
# picks again when one does).
_PORTS = range(20000, 32000)
_given = set()


def free_port():
    for _ in range(1000):
        port = random.choice(_PORTS)
        if port in _given:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _given.add(port)
        if len(_given) > len(_PORTS) // 2:
            _given.clear()
        return port
    with socket.socket() as s:  # the range is crowded: let the kernel choose
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # dict, lower-case names
        self.body = body  # bytes

    def json(self):
        return json.loads(self.body)

    def header(self, name):
        return self.headers.get(name.lower())

    def __repr__(self):
        return f"<Response {self.status} {self.body[:300]!r}>"


# With SUGGESTD_RECORD=FILE every answer is appended to FILE as one JSON line, so
# tests/node/openapi.test.mjs can check the live responses of this suite against
# docs/openapi.yaml (make test sets it).
RECORD = os.environ.get("SUGGESTD_RECORD")
RECORD_MAX_BODY = 256 * 1024


def record(method, path, out):
    if not RECORD or len(out.body) > RECORD_MAX_BODY:
        return
    try:
        text = out.body.decode()
    except UnicodeDecodeError:
        return
    line = {"method": method, "path": path, "status": out.status,
            "headers": out.headers, "body": text}
    with open(RECORD, "a") as f:
        f.write(json.dumps(line) + "\n")


def request(port, method, path, body=None, headers=None, raw=None, timeout=30):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    hdrs = dict(headers or {})
    data = raw
    if body is not None:
        data = json.dumps(body).encode()
        hdrs.setdefault("Content-Type", "application/json")
    conn.request(method, path, body=data, headers=hdrs)
    r = conn.getresponse()
    out = Response(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    # Every Set-Cookie by cookie name (the header dict above keeps only the last one).
    out.cookies = {c.split("=", 1)[0]: c for c in (r.msg.get_all("Set-Cookie") or [])}
    conn.close()
    record(method, path, out)
    return out


# SUGGESTD_TEST_EDGE=redis://HOST:PORT runs every Server on that Redis edge: each data
# directory gets its own database (1..15, round robin), emptied when first handed out, so
# processes sharing a data directory share an edge. Tests that read edge files do not fit.
TEST_EDGE = os.environ.get("SUGGESTD_TEST_EDGE", "")
_edge_dbs = {}


def edge_for(data_dir):
    if not TEST_EDGE.startswith("redis://"):
        return None
    if data_dir not in _edge_dbs:
        url = f"{TEST_EDGE.rstrip('/')}/{len(_edge_dbs) % 15 + 1}"
        subprocess.run(["redis-cli", "-u", url, "FLUSHDB"], check=True, capture_output=True)
        _edge_dbs[data_dir] = url
    return _edge_dbs[data_dir]


class Server:
    """A running suggestd process plus helpers for the admin CLI and both APIs."""

    def __init__(self, data_dir, mode="serve", extra=None, env=None, database=None, edge=None):
        self.data_dir = data_dir
        # The database of serve/control/admin on PostgreSQL (default: the data dir's own)
        # and an edge directory other than <data_dir>/edge (several data dirs, one edge).
        self.database = database or database_url(data_dir)
        self.edge_dir = edge
        self.mode = mode
        self.extra = list(extra or [])
        self.env = dict(os.environ)
        self.env.update(env or {})
        self.pick_ports()
        self.proc = None
        self.preexec = None  # run in the child before exec (e.g. to set resource limits)
        self.log_path = os.path.join(data_dir, f"{mode}.log")
        self.edge_url = edge_for(data_dir)  # an --edge URL for every process, or None

    # -- process --------------------------------------------------------------------------
    def start(self):
        # Two free_port() calls in parallel test files can return the same port (neither
        # is bound yet). The process that loses the bind exits "cannot listen", and its
        # /healthz may meanwhile have been answered by the other file's server; its next
        # request was then refused (seen once in CI). So a start counts only once our
        # own process has said it listens, and a lost port is picked again.
        for attempt in range(5):
            if self._start_once():
                return self
            self.pick_ports()
        raise RuntimeError(f"suggestd could not listen: {self.read_log()[-2000:]}")

    def pick_ports(self):
        self.control_port = free_port()
        self.runtime_port = free_port()
        # Two free ports asked one after the other could be the same one (neither is bound
        # yet): the runtime then failed to listen ("cannot listen"), about once a suite.
        while self.runtime_port == self.control_port:
            self.runtime_port = free_port()

    def _start_once(self):
        """Starts the process; True once it listens and answers, False when it lost its
        port to another process; raises on any other failure."""
        args = [BINARY, self.mode, "--data-dir", self.data_dir]
        args += self.store_args(with_edge="--edge" not in self.extra,
                                runtime=self.mode == "runtime")
        if self.mode in ("serve", "control"):
            args += ["--control-listen", f"127.0.0.1:{self.control_port}"]
        if self.mode in ("serve", "runtime"):
            args += ["--runtime-listen", f"127.0.0.1:{self.runtime_port}"]
        args += self.extra
        self.log = open(self.log_path, "ab")
        log_from = self.log.tell()  # a restart appends to the same log
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=self.log, env=self.env,
                                     preexec_fn=self.preexec)
        ports, lines = [], []
        if self.mode in ("serve", "control"):
            ports.append(self.control_port)
            lines.append('"msg":"control plane listening"')
        if self.mode in ("serve", "runtime"):
            ports.append(self.runtime_port)
            lines.append('"msg":"runtime listening"')
        deadline = time.time() + 30  # generous: a loaded CI machine starts slowly
        while True:
            log = self.read_log(log_from)
            if all(line in log for line in lines):
                break
            if self.proc.poll() is not None:
                log = self.read_log(log_from)
                mine = "--control-listen" not in self.extra and "--runtime-listen" not in self.extra
                if mine and "cannot listen" in log:
                    self.stop()
                    return False
                raise RuntimeError(f"suggestd exited early: {log[-2000:]}")
            if time.time() > deadline:
                raise RuntimeError(f"suggestd did not say it listens: {log[-2000:]}")
            time.sleep(0.02)
        for p in ports:
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"suggestd exited early: {self.read_log()[-2000:]}")
                try:
                    if request(p, "GET", "/healthz", timeout=1).status == 200:
                        break
                except OSError:
                    pass
                if time.time() > deadline:
                    raise RuntimeError(f"suggestd did not start: {self.read_log()[-2000:]}")
                time.sleep(0.05)
        return True

    def stop(self, sig_kill=False):
        if self.proc and self.proc.poll() is None:
            if sig_kill:
                self.proc.kill()
            else:
                self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if getattr(self, "log", None):
            self.log.close()
            self.log = None

    def restart(self, sig_kill=False):
        self.stop(sig_kill=sig_kill)
        return self.start()

    def read_log(self, offset=0):
        try:
            with open(self.log_path, "rb") as f:
                f.seek(offset)
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    # -- admin CLI ------------------------------------------------------------------------
    def store_args(self, with_edge=True, runtime=False):
        """The flags naming this server's database (not for a runtime, which never reads
        it) and edge (an edge directory of its own, or the Redis edge of the suite) beyond
        its --data-dir."""
        edge = self.edge_dir or self.edge_url
        return ((["--database", self.database] if self.database and not runtime else []) +
                (["--edge", edge] if edge and with_edge else []))

    def admin(self, *words, check=True):
        r = subprocess.run([BINARY, "admin", *words, "--data-dir", self.data_dir,
                            *self.store_args()],
                           capture_output=True, text=True, timeout=30)
        if check:
            assert r.returncode == 0, f"admin {words} failed: {r.stderr}"
            return json.loads(r.stdout)
        return r

    def tenant(self, quota=None):
        """Creates a workspace, an application and a secret key; returns a Tenant."""
        ws = self.admin("workspace", "create", "--name", "Acme")["id"]
        args = ["application", "create", "--workspace", ws, "--name", "web"]
        if quota is not None:
            args += ["--monthly-quota", str(quota)]
        app = self.admin(*args)["id"]
        sk = self.admin("secret-key", "create", "--application", app)
        return Tenant(self, ws, app, sk["id"], sk["secretKey"])

    # -- HTTP -----------------------------------------------------------------------------
    def control(self, method, path, body=None, key=None, headers=None, raw=None):
        hdrs = dict(headers or {})
        if key is not None:
            hdrs["Authorization"] = f"Bearer {key}"
        return request(self.control_port, method, path, body=body, headers=hdrs, raw=raw)

    def serves(self, pk, content_hash, timeout=5):
        """Waits until the runtime answers /v1/bootstrap for the publishable key pk with
        content_hash (a publish has reached it); False when it does not within timeout."""
        return wait_until(lambda: self.runtime("GET", "/v1/bootstrap", params={"key": pk})
                          .json().get("activeVersionHash") == content_hash, timeout=timeout)

    def runtime(self, method, path, params=None, body=None, headers=None, raw=None):
        if params:
            path = path + "?" + urllib.parse.urlencode(params)
        return request(self.runtime_port, method, path, body=body, headers=headers, raw=raw)


class Tenant:
    def __init__(self, server, workspace_id, application_id, key_id, secret_key):
        self.server = server
        self.workspace_id = workspace_id
        self.application_id = application_id
        self.key_id = key_id
        self.secret_key = secret_key

    def api(self, method, path, body=None, headers=None, raw=None):
        return self.server.control(method, "/api/v1" + path, body=body, key=self.secret_key,
                                   headers=headers, raw=raw)

    def create_list(self, name="Cities", **patch):
        r = self.api("POST", "/lists", {"name": name})
        assert r.status == 201, r
        lst = r.json()
        if patch:
            r = self.api("PATCH", f"/lists/{lst['id']}", patch)
            assert r.status == 200, r
            lst = r.json()
        return lst

    def add_items(self, list_id, items):
        out = []
        for it in items:
            r = self.api("POST", f"/lists/{list_id}/items", it)
            assert r.status == 201, r
            out.append(r.json())
        return out

    def publish(self, list_id, timeout=60):
        r = self.api("POST", f"/lists/{list_id}/versions")
        assert r.status in (200, 202), r
        v = r.json()
        deadline = time.time() + timeout
        # staged: the moment between the artifact's write and the activation.
        while v.get("state") in ("queued", "staged") and time.time() < deadline:
            time.sleep(0.1)
            v = self.api("GET", f"/lists/{list_id}/versions/{v['versionNumber']}").json()
        return v

    def public_list_served(self, name, items, timeout=5):
        """A public list holding items, published, with a publishable key; returns (list,
        key) once the runtime serves the version."""
        lst = self.create_list(name, visibility="public")
        self.add_items(lst["id"], items)
        v = self.publish(lst["id"])
        assert v["state"] == "active", v
        pk = self.publishable_key(lst["id"])["publishableKey"]
        assert self.server.serves(pk, v["contentHash"], timeout=timeout)
        return lst, pk

    def publishable_key(self, list_id, origins=()):
        args = ["publishable-key", "create", "--application", self.application_id,
                "--list", list_id]
        for o in origins:
            args += ["--origin", o]
        return self.server.admin(*args)


# Generous limits so that only the rate-limit tests ever meet them.
NO_LIMITS = ["--control-rate-key", "0", "--control-rate-ip", "0"]


@pytest.fixture
def make_server():
    """Factory: make_server(extra_flags, mode='serve') -> started Server; all stopped after."""
    servers = []
    dirs = []

    def factory(extra=None, mode="serve", data_dir=None, env=None, limits=True):
        if data_dir is None:
            data_dir = tempfile.mkdtemp(prefix="suggestd-test-")
            dirs.append(data_dir)
        flags = list(extra or [])
        if limits:
            flags = NO_LIMITS + flags
        s = Server(data_dir, mode=mode, extra=flags, env=env)
        servers.append(s)
        return s.start()

    yield factory
    for s in servers:
        s.stop()
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def server(make_server):
    return make_server()


@pytest.fixture
def tenant(server):
    return server.tenant()


@pytest.fixture
def cp(make_server):
    """The control plane alone (`suggestd control`), rate limits off."""
    return make_server(mode="control")


@pytest.fixture
def t(cp):
    """A workspace, application and secret key on the `cp` control plane."""
    return cp.tenant()


def wait_until(fn, timeout=5.0, interval=0.05):
    """Polls fn() until it returns a truthy value; returns it or the last value."""
    deadline = time.time() + timeout
    while True:
        v = fn()
        if v or time.time() > deadline:
            return v
        time.sleep(interval)


def raise_nofile(want):
    """Raises this process's soft descriptor limit towards want; returns the new limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        new = want if hard == resource.RLIM_INFINITY else min(want, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]
