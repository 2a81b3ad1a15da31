"""The first hour of a new user: messages that point the right way (issue "The first
hour"). Each test runs the real CLI or script and reads what a person would read.
"""
import json
import os
import re
import socket
import subprocess
import tempfile

from conftest import BINARY, ROOT, free_port


def cli(*args, timeout=60):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=timeout)


def setup_list(server, tmp_path):
    t = server.tenant()
    lst = t.create_list()
    key = tmp_path / "key"
    key.write_text(t.secret_key + "\n")
    src = tmp_path / "items.ndjson"
    src.write_text("".join(json.dumps({"value": f"city {i}"}) + "\n" for i in range(50)))
    return t, lst["id"], key, src


def common(url, key, list_id):
    return ["--control-url", url, "--secret-key-file", str(key), "--list", list_id]


def test_make_help_lists_the_targets():
    r = subprocess.run(["make", "--no-print-directory", "help"], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    for target in ("make run", "make test", "make install", "make deb", "make help"):
        assert target in r.stdout


def test_make_run_refuses_a_busy_metrics_port_and_the_readme_moves_all_three():
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    data = tempfile.mkdtemp(prefix="suggestd-run-")
    env = dict(os.environ,
               SUGGESTD_DATA_DIR=data,
               SUGGESTD_CONTROL_LISTEN=f"127.0.0.1:{free_port()}",
               SUGGESTD_RUNTIME_LISTEN=f"127.0.0.1:{free_port()}",
               SUGGESTD_METRICS_LISTEN=f"127.0.0.1:{busy.getsockname()[1]}")
    try:
        r = subprocess.run([os.path.join(ROOT, "scripts", "run.sh")], env=env,
                           capture_output=True, text=True, timeout=30)
    finally:
        busy.close()
    assert r.returncode == 1
    assert "(the metrics) is already in use" in r.stderr
    assert "SUGGESTD_METRICS_LISTEN=" in r.stderr
    assert not os.path.exists(os.path.join(data, "suggestd.db"))
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = f.read()
    recipe = re.search(r"Other ports or another data directory:\s*`([^`]*)`", readme).group(1)
    for var in ("SUGGESTD_CONTROL_LISTEN", "SUGGESTD_RUNTIME_LISTEN", "SUGGESTD_METRICS_LISTEN"):
        assert var in recipe


def test_import_sent_to_the_runtime_points_at_the_control_port(make_server, tmp_path):
    s = make_server()
    t, list_id, key, _ = setup_list(s, tmp_path)
    big = tmp_path / "big.ndjson"  # past the runtime's 4 KiB body cap
    big.write_text("".join(json.dumps({"value": f"item {i}"}) + "\n" for i in range(2000)))
    for f in (big, tmp_path / "items.ndjson"):
        r = cli("import", *common(f"http://127.0.0.1:{s.runtime_port}", key, list_id), str(f))
        assert r.returncode != 0
        err = json.loads(r.stderr.strip().splitlines()[-1])
        assert err["status"] == 404
        msg = err["response"]["message"]
        assert "runtime's port" in msg and "--control-listen" in msg
        assert "4096" not in msg


def test_a_refused_connection_names_the_url(tmp_path):
    key = tmp_path / "key"
    key.write_text("sk_test\n")
    src = tmp_path / "items.ndjson"
    src.write_text('{"value":"a"}\n')
    url = f"http://127.0.0.1:{free_port()}"
    r = cli("import", *common(url, key, "lst_x"), str(src))
    assert r.returncode != 0
    err = json.loads(r.stderr.strip().splitlines()[0])["error"]
    assert url + "/api/v1/lists/lst_x/items/import" in err
    assert "--control-url" in err
    r = cli("export", *common(url, key, "lst_x"), str(tmp_path / "out.ndjson"))
    assert r.returncode != 0 and url in r.stderr


def test_import_says_items_go_live_on_publish_and_a_publish_of_the_same_items_says_so(
        make_server, tmp_path):
    s = make_server()
    t, list_id, key, src = setup_list(s, tmp_path)
    args = common(f"http://127.0.0.1:{s.control_port}", key, list_id)
    r = cli("import", *args, str(src))
    assert r.returncode == 0, r.stderr
    assert "go live when the list is published" in r.stderr
    assert f"/api/v1/lists/{list_id}/versions" in r.stderr
    r = cli("import", *args, str(src), "--publish")
    assert r.returncode == 0, r.stderr
    assert "go live" not in r.stderr and "nothing changed" not in r.stderr
    assert "publishUnchanged" not in json.loads(r.stdout)  # the first version
    r = cli("import", *args, str(src), "--publish")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["publishUnchanged"] is True and out["version"]["versionNumber"] == 2
    assert "nothing changed since version 1" in r.stderr
    changed = tmp_path / "more.ndjson"
    changed.write_text('{"value":"new town"}\n')
    r = cli("import", *args, str(changed), "--publish")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["publishUnchanged"] is False
    assert "nothing changed" not in r.stderr


def test_cli_durations_are_rounded_to_the_millisecond(make_server, tmp_path):
    s = make_server()
    t, list_id, key, src = setup_list(s, tmp_path)
    args = common(f"http://127.0.0.1:{s.control_port}", key, list_id)
    pattern = re.compile(r'"(seconds|publishSeconds)":(-?[0-9.eE+-]+)')
    r = cli("import", *args, str(src), "--publish")
    assert r.returncode == 0, r.stderr
    r2 = cli("export", *args, str(tmp_path / "out.ndjson"))
    assert r2.returncode == 0, r2.stderr
    found = pattern.findall(r.stdout) + pattern.findall(r2.stdout)
    assert len(found) == 3
    for _, num in found:
        assert re.fullmatch(r"[0-9]+(\.[0-9]{1,3})?", num), num
