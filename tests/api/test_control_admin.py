"""Durability of the control plane and the admin CLI contract (docs/DESIGN.md §5).

Every admin command prints one JSON object on stdout and exits 0, or prints
{"error": ...} on stderr and exits non-zero; flags may come before or after positional
arguments; SUGGESTD_* environment variables mirror every flag; admin commands work
while a server runs on the same data dir.
"""
import json
import os
import subprocess
import threading
import time

import pytest

from conftest import BINARY, ON_POSTGRES, database_args, store_bytes


def run(*words, env=None, data_dir=None):
    e = dict(os.environ)
    e.pop("SUGGESTD_DATA_DIR", None)
    e.update(env or {})
    args = [BINARY, "admin", *words]
    if data_dir:
        args += ["--data-dir", data_dir, *database_args(data_dir)]
    return subprocess.run(args, capture_output=True, text=True, timeout=30, env=e)


def ok(r):
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    lines = r.stdout.strip().split("\n")
    assert len(lines) == 1, r.stdout
    out = json.loads(lines[0])
    assert isinstance(out, dict)
    return out


def fails(r):
    assert r.returncode != 0, (r.stdout, r.stderr)
    assert r.stdout == "", r.stdout
    # stderr is exactly one JSON object, so a script can parse it without scraping.
    lines = r.stderr.strip().split("\n")
    assert len(lines) == 1, r.stderr
    err = json.loads(lines[0])
    assert set(err) == {"error"} and isinstance(err["error"], str) and err["error"], err
    return err


# -- durability -------------------------------------------------------------------------
def test_created_list_survives_kill_9(cp):
    t = cp.tenant()
    made = []
    for i in range(5):
        r = t.api("POST", "/lists", {"name": f"durable {i}"})
        assert r.status == 201
        made.append(r.json())
    patched = t.api("PATCH", f"/lists/{made[0]['id']}", {"visibility": "public"})
    assert patched.status == 200
    cp.restart(sig_kill=True)  # SIGKILL right after the last acknowledged write
    for lst in made:
        r = t.api("GET", f"/lists/{lst['id']}")
        assert r.status == 200, r
        assert r.json()["name"] == lst["name"]
    assert t.api("GET", f"/lists/{made[0]['id']}").json()["visibility"] == "public"


def test_kill_9_during_concurrent_writes_loses_no_acknowledged_list(cp):
    t = cp.tenant()
    acked = []
    lock = threading.Lock()

    def writer(n):
        for i in range(15):
            try:
                r = t.api("POST", "/lists", {"name": f"w{n}-{i}"})
            except OSError:
                return
            if r.status == 201:
                with lock:
                    acked.append(r.json()["id"])
    ths = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    [th.start() for th in ths]
    while len(acked) < 20 and any(th.is_alive() for th in ths):
        time.sleep(0.002)
    cp.proc.kill()
    [th.join() for th in ths]
    cp.stop()
    cp.start()
    ids = {x["id"] for x in t.api("GET", "/lists?limit=100").json()["data"]}
    assert set(acked) <= ids


def test_admin_while_serving(cp):
    t = cp.tenant()  # created through the CLI while the server runs
    assert t.api("GET", "/lists").status == 200
    sk2 = cp.admin("secret-key", "create", "--application", t.application_id)
    assert cp.control("GET", "/api/v1/lists", key=sk2["secretKey"]).status == 200
    cp.admin("secret-key", "revoke", sk2["id"])
    assert cp.control("GET", "/api/v1/lists", key=sk2["secretKey"]).status == 401
    assert t.api("GET", "/lists").status == 200


def test_admin_concurrent_with_writes(cp):
    t = cp.tenant()
    errors = []

    def writer():
        for i in range(30):
            r = t.api("POST", "/lists", {"name": f"c{i}"})
            if r.status != 201:
                errors.append(r)
    th = threading.Thread(target=writer)
    th.start()
    for _ in range(5):
        cp.tenant()
    th.join()
    assert not errors, errors


# -- admin CLI contract -----------------------------------------------------------------
def test_every_command_prints_one_object(cp):
    d = cp.data_dir
    ws = ok(run("workspace", "create", "--name", "W", data_dir=d))
    assert ws["id"].startswith("wsp_")
    app = ok(run("application", "create", "--workspace", ws["id"], "--name", "A",
                 "--monthly-quota", "1000", data_dir=d))
    assert app["id"].startswith("app_")
    sk = ok(run("secret-key", "create", "--application", app["id"], data_dir=d))
    assert set(sk) == {"id", "secretKey"} and sk["secretKey"].startswith(sk["id"] + "_")
    assert ok(run("secret-key", "revoke", sk["id"], data_dir=d))["id"] == sk["id"]
    assert ok(run("application", "disable", app["id"], data_dir=d))["status"] == "disabled"
    assert ok(run("workspace", "disable", ws["id"], data_dir=d)) == {"id": ws["id"],
                                                                      "status": "disabled"}


def test_secret_keys_are_unique_and_shown_once(cp):
    t = cp.tenant()
    keys = {cp.admin("secret-key", "create", "--application", t.application_id)["secretKey"]
            for _ in range(5)}
    assert len(keys) == 5
    db = store_bytes(cp.data_dir)
    for k in keys:
        secret = k.split("_", 2)[2]
        assert secret.encode() not in db


def test_flags_before_or_after_positionals(cp):
    d = cp.data_dir
    db = database_args(d)
    ws1 = ok(run(*db, "--data-dir", d, "workspace", "create", "--name", "A"))["id"]
    ws2 = ok(run("workspace", "--name", "B", *db, "create", "--data-dir", d))["id"]
    ws3 = ok(run("workspace", "create", f"--data-dir={d}", "--name=C", *db))["id"]
    assert ok(run("workspace", *db, "disable", ws1, "--data-dir", d))["status"] == "disabled"
    assert ok(run("--data-dir", d, "workspace", "disable", ws2, *db))["status"] == "disabled"
    assert ok(run("workspace", f"--data-dir={d}", "disable", ws3, *db))["status"] == "disabled"


def test_env_mirrors_data_dir(cp, tmp_path):
    env = {"SUGGESTD_DATA_DIR": cp.data_dir}
    if ON_POSTGRES:
        env["SUGGESTD_DATABASE"] = database_args(cp.data_dir)[1]
    ws = ok(run("workspace", "create", "--name", "Env", env=env))["id"]
    app = ok(run("application", "create", "--workspace", ws, "--name", "a", env=env))["id"]
    sk = ok(run("secret-key", "create", "--application", app, env=env))
    # The key was written to the server's data dir: it works at once.
    assert cp.control("GET", "/api/v1/lists", key=sk["secretKey"]).status == 200
    # The flag wins over the environment.
    other = str(tmp_path / "other")
    ok(run("workspace", "create", "--name", "X", "--data-dir", other, env=env))
    if not ON_POSTGRES:  # (on PostgreSQL the store is the environment's database)
        assert os.path.exists(os.path.join(other, "suggestd.db"))


@pytest.mark.parametrize("words", [
    (),
    ("workspace",),
    ("workspace", "explode"),
    ("nothing", "create"),
    ("workspace", "create"),                              # --name missing
    ("workspace", "create", "--name"),                    # value missing
    ("workspace", "create", "--name", "a", "--name", "b"),
    ("workspace", "create", "--name", "a", "--bogus", "1"),
    ("workspace", "disable"),                             # id missing
    ("workspace", "disable", "wsp_doesnotexist"),
    ("application", "create", "--name", "a"),             # --workspace missing
    ("application", "create", "--workspace", "wsp_nope", "--name", "a"),
    ("application", "create", "--workspace", "WS", "--name", "a", "--monthly-quota", "-5"),
    ("application", "create", "--workspace", "WS", "--name", "a", "--monthly-quota", "lots"),
    ("application", "disable", "app_nope"),
    ("secret-key", "create"),
    ("secret-key", "create", "--application", "app_nope"),
    ("secret-key", "revoke", "sk_nope"),
    ("secret-key", "revoke"),
])
def test_errors_are_json_on_stderr(cp, words):
    ws = cp.admin("workspace", "create", "--name", "real")["id"]
    words = tuple(ws if w == "WS" else w for w in words)
    fails(run(*words, data_dir=cp.data_dir))


def test_unknown_top_level_command_is_json():
    r = subprocess.run([BINARY, 'no"such\\command'], capture_output=True, text=True, timeout=30)
    err = fails(r)
    assert 'no"such\\command' in err["error"]


def test_unknown_admin_command_lists_the_commands():
    err = fails(run("workspace", "explode", data_dir="/tmp/unused-suggestd-dir"))
    assert "workspace create" in err["error"] and "secret-key revoke" in err["error"]


def test_missing_data_dir_is_an_error():
    fails(run("workspace", "create", "--name", "x"))


def test_unusable_data_dir_is_an_error(tmp_path):
    f = tmp_path / "file"
    f.write_text("not a directory")
    fails(run("workspace", "create", "--name", "x", data_dir=str(f)))


def test_names_with_odd_characters(cp):
    for name in ('quote " and \\ backslash', "日本", "--looks-like-a-flag", "a\nb"):
        ws = ok(run("workspace", "create", f"--name={name}", data_dir=cp.data_dir))
        assert ws["id"].startswith("wsp_")


def test_many_concurrent_clients_and_admin_processes(cp):
    """16 API clients and two admin processes writing at once: no 5xx (no SQLITE_BUSY
    leaking out), and every acknowledged write is there afterwards."""
    tenants = [cp.tenant() for _ in range(4)]
    bad, created = [], {t.workspace_id: 0 for t in tenants}
    lock = threading.Lock()

    def client(t, n):
        for i in range(15):
            r = t.api("POST", "/lists", {"name": f"c{n}-{i}"})
            g = t.api("GET", "/lists?limit=5")
            with lock:
                if r.status != 201 or g.status != 200:
                    bad.append((r, g))
                else:
                    created[t.workspace_id] += 1

    def admin():
        for _ in range(8):
            cp.tenant()
    ths = [threading.Thread(target=client, args=(tenants[n % 4], n)) for n in range(16)]
    ths += [threading.Thread(target=admin) for _ in range(2)]
    [th.start() for th in ths]
    [th.join() for th in ths]
    assert not bad, bad[:3]
    for t in tenants:
        got, cursor = 0, None
        while True:
            path = "/lists?limit=100" + (f"&cursor={cursor}" if cursor else "")
            b = t.api("GET", path).json()
            got += len(b["data"])
            cursor = b["nextCursor"]
            if not cursor:
                break
        assert got == created[t.workspace_id] == 60


# -- server command line ----------------------------------------------------------------
def test_second_server_on_a_taken_port_refuses_to_start(cp, tmp_path):
    """A second process must not silently share the port (SO_REUSEPORT would let the
    kernel split requests between two unrelated servers)."""
    r = subprocess.run([BINARY, "control", "--data-dir", str(tmp_path),
                        "--control-listen", f"127.0.0.1:{cp.control_port}"],
                       capture_output=True, text=True, timeout=20)
    assert r.returncode != 0
    err = json.loads(r.stderr.strip().split("\n")[-1])
    assert "error" in err
    assert cp.control("GET", "/healthz").status == 200


def test_restart_on_the_same_port_after_kill_9(cp):
    t = cp.tenant()
    for _ in range(3):
        assert t.api("GET", "/lists").status == 200  # leaves connections in TIME_WAIT
        cp.restart(sig_kill=True)
    assert t.api("GET", "/lists").status == 200


@pytest.mark.parametrize("flags", [
    ["--control-listen", "nonsense"],
    ["--control-listen", "127.0.0.1:99999"],
    ["--control-listen", "example.com:80"],
    ["--bogus"],
    ["--control-rate-key"],
])
def test_bad_server_flags_fail_with_json(tmp_path, flags):
    r = subprocess.run([BINARY, "control", "--data-dir", str(tmp_path), *flags],
                       capture_output=True, text=True, timeout=20)
    assert r.returncode != 0
    err = json.loads(r.stderr.strip().split("\n")[-1])
    assert set(err) == {"error"}


@pytest.mark.sqlite_only("names a SQLite file by a sqlite:// URL")
def test_database_and_edge_flags_name_a_sqlite_file_and_a_directory(tmp_path):
    """`--database URL --edge URL` instead of --data-dir: the control plane on a SQLite
    file named by a sqlite:// URL, a runtime on the same edge directory."""
    from conftest import Server, request

    db = tmp_path / "db" / "control.db"
    edge = tmp_path / "edge"
    loc = ["--database", f"sqlite://{db}", "--edge", str(edge)]

    def admin(*words):
        r = subprocess.run([BINARY, "admin", *words, *loc], capture_output=True, text=True,
                           timeout=30)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    ws = admin("workspace", "create", "--name", "W")["id"]
    app = admin("application", "create", "--workspace", ws, "--name", "A")["id"]
    sk = admin("secret-key", "create", "--application", app)["secretKey"]
    assert db.exists() and not (tmp_path / "db" / "suggestd.db").exists()
    (tmp_path / "logs").mkdir()
    ctl = Server(str(tmp_path / "logs"), mode="control", extra=loc).start()
    try:
        r = request(ctl.control_port, "POST", "/api/v1/lists", body={"name": "L"},
                    headers={"Authorization": f"Bearer {sk}"})
        assert r.status == 201, r
        lst = r.json()["id"]
        r = request(ctl.control_port, "GET", f"/api/v1/lists/{lst}/items/export",
                    headers={"Authorization": f"Bearer {sk}"})
        assert r.status == 200, r
    finally:
        ctl.stop()
    assert (edge / "lists" / f"{lst}.json").exists()


def test_publishable_key_origins_are_validated_and_stored_lower_case(server):
    """--origin takes http(s)://host[:port] with ports 1-65535; a wildcard stands for
    labels below a registrable domain, never for every .com or .co.uk site; upper case is
    accepted and stored (and enforced) lower case."""
    t = server.tenant()
    lst = t.create_list("Cities", visibility="public")
    t.add_items(lst["id"], [{"value": "Paris"}])
    assert t.publish(lst["id"])["state"] == "active"
    base = ["publishable-key", "create", "--application", t.application_id, "--list", lst["id"]]
    for bad in ("https://*.com", "https://*.co.uk", "https://*.com.au", "https://a.example.com:99999",
                "https://a.example.com:0", "ftp://a.example.com", "https://a.example.com/path",
                "https://u@a.example.com", "https://a.example.com?x", "example.com", "https://*"):
        r = server.admin(*base, "--origin", bad, check=False)
        assert r.returncode != 0, bad
        assert "error" in json.loads(r.stderr), bad
    pk = server.admin(*base, "--origin", "HTTPS://Shop.Example.COM", "--origin",
                      "https://*.Example.ORG:443")["publishableKey"]

    def query(origin):
        return server.runtime("GET", "/v1/query", params={"key": pk, "q": "par"},
                              headers={"Origin": origin})
    t0 = time.time()
    while query("https://shop.example.com").status != 200:
        assert time.time() - t0 < 5
        time.sleep(0.05)
    for origin in ("https://shop.example.com", "https://a.example.org", "https://A.B.example.org"):
        assert query(origin).status == 200, origin
    for origin in ("https://evil.com", "https://example.org", "http://shop.example.com"):
        assert query(origin).status == 403, origin
