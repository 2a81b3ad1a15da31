"""`suggestd import` reads NDJSON, a JSON array, or CSV/TSV with a header row (issue 16):
format detection, column-mapping flags, and errors reported against the user's own file —
a repeated value names the value and both lines."""
import json
import subprocess

import pytest

from conftest import BINARY


@pytest.fixture
def env(make_server, tmp_path):
    s = make_server(mode="control")
    t = s.tenant()
    lst = t.create_list()
    key = tmp_path / "key"
    key.write_text(t.secret_key + "\n")
    common = ["--control-url", f"http://127.0.0.1:{s.control_port}", "--secret-key-file",
              str(key), "--list", lst["id"]]
    return t, lst["id"], common, tmp_path


def run(common, *args, stdin=None):
    r = subprocess.run([BINARY, "import", *common, *args], capture_output=True, text=True,
                       timeout=60, input=stdin)
    return r


def items(t, list_id):
    r = t.api("GET", f"/lists/{list_id}/items?limit=100")
    assert r.status == 200, r
    return {i["value"]: i for i in r.json()["data"]}


def last_json(stderr):
    return json.loads(stderr.strip().splitlines()[-1])


def test_json_array_is_detected_and_imported(env):
    t, lst, common, d = env
    f = d / "cities.json"
    f.write_text('[\n  {"value": "France"},\n  {"value": "Paris", "rank": 5,\n'
                 '   "aliases": ["Lutece", "a, b]"], "parentValue": "France"}\n]\n')
    r = run(common, str(f))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["created"] == 2 and out["lines"] == 2
    got = items(t, lst)
    assert got["Paris"]["aliases"] == ["Lutece", "a, b]"] and got["Paris"]["rank"] == 5
    assert got["Paris"]["parentId"] == got["France"]["id"]


def test_json_array_without_extension_on_stdin(env):
    t, lst, common, _ = env
    r = run(common, "-", stdin='  [{"value":"a"},{"value":"b"}]')
    assert r.returncode == 0, r.stderr
    assert set(items(t, lst)) == {"a", "b"}


def test_csv_with_header_and_default_columns(env):
    t, lst, common, d = env
    f = d / "cities.csv"
    f.write_bytes(b'\xef\xbb\xbfvalue,displayValue,rank,aliases,parentValue,population\r\n'
                  b'France,,1,,,67000000\r\n'
                  b'"Paris, FR","Paris ""City of Light""",100,Lutece|Paname,France,2100000\r\n'
                  b'"Multi\nline",,,,,0\r\n')
    r = run(common, str(f))
    assert r.returncode == 0, r.stderr
    assert "ignoring CSV columns: population" in r.stderr
    got = items(t, lst)
    assert set(got) == {"France", "Paris, FR", "Multi\nline"}
    p = got["Paris, FR"]
    assert p["displayValue"] == 'Paris "City of Light"' and p["rank"] == 100
    assert p["aliases"] == ["Lutece", "Paname"] and p["parentId"] == got["France"]["id"]
    assert got["France"]["displayValue"] == "France" and got["France"]["rank"] == 1


def test_csv_column_mapping_flags_and_tsv(env):
    t, lst, common, d = env
    f = d / "export.tsv"
    f.write_text("name\tlabel\tscore\tsyn\n"
                 "lyon\tLyon\t7\tLugdunum;Gones\n")
    r = run(common, str(f), "--value-column", "name", "--display-column", "label",
            "--rank-column", "score", "--aliases-column", "syn", "--aliases-separator", ";")
    assert r.returncode == 0, r.stderr
    got = items(t, lst)["lyon"]
    assert got["displayValue"] == "Lyon" and got["rank"] == 7
    assert got["aliases"] == ["Lugdunum", "Gones"]
    # --format overrides detection: a .txt file read as CSV with ';'.
    g = d / "x.txt"
    g.write_text("value;rank\nnice;3\n")
    r = run(common, str(g), "--format", "csv", "--delimiter", ";")
    assert r.returncode == 0, r.stderr
    assert items(t, lst)["nice"]["rank"] == 3


def test_duplicate_names_the_value_and_both_lines(env):
    t, lst, common, d = env
    f = d / "dup.csv"
    f.write_text("value,rank\nParis,1\nLyon,2\n\nParis,3\n")
    r = run(common, str(f))
    assert r.returncode != 0
    err = last_json(r.stderr)
    assert err["status"] == 400
    assert 'line 5: the value "Paris" is already on line 2' in err["problems"], err
    assert items(t, lst) == {}
    # The server's answer names it too, in its own (0-based NDJSON) line numbers.
    dups = err["response"]["details"]["duplicates"]
    assert dups == [{"value": "Paris", "line": 2, "firstLine": 0}]
    assert '"Paris"' in err["response"]["message"]
    # The same in a JSON array spread over lines, and in NDJSON.
    j = d / "dup.json"
    j.write_text('[\n{"value": "a"},\n{"value": "b"},\n\n{"value":\n "a"}]')
    err = last_json(run(common, str(j)).stderr)
    assert 'line 5: the value "a" is already on line 2' in err["problems"], err
    n = d / "dup.ndjson"
    n.write_text('{"value":"x"}\n{"value":"x"}\n')
    err = last_json(run(common, str(n)).stderr)
    assert 'line 2: the value "x" is already on line 1' in err["problems"], err


def test_field_errors_point_at_the_source_line(env):
    _, _, common, d = env
    f = d / "bad.csv"
    f.write_text("value,rank\nok,1\n\"multi\nline\",2\nbad,notanumber\n")
    err = last_json(run(common, str(f)).stderr)
    assert any(p.startswith("line 5: rank: must be an integer") for p in err["problems"]), err


@pytest.mark.parametrize("name,body,needle", [
    ("a.csv", "label,rank\nx,1\n", "no 'value' column"),
    ("a.csv", "value,rank\nx,1,2\n", "line 2: 3 fields, but the header has 2"),
    ("a.csv", 'value\n"open\n', "never closed"),
    ("a.csv", 'value\nab"c\n', "line 2: a quote inside an unquoted field"),
    ("a.json", '[{"value":"x"}', "not closed"),
    ("a.json", '[{"value":"x"}] extra', "data after the end"),
    ("a.json", '{"value":"x"}, {"value":"y"}]', None),
])
def test_malformed_files_fail_before_the_server_sees_them(env, name, body, needle):
    t, lst, common, d = env
    f = d / name
    f.write_text(body)
    r = run(common, str(f))
    assert r.returncode != 0
    err = last_json(r.stderr)
    if needle:
        assert needle in err["error"], err
    assert items(t, lst) == {}


def test_unknown_column_flag_and_format_are_refused(env):
    _, _, common, d = env
    f = d / "a.csv"
    f.write_text("value\nx\n")
    r = run(common, str(f), "--rank-column", "nope")
    assert r.returncode != 0 and "no column 'nope'" in last_json(r.stderr)["error"]
    r = run(common, str(f), "--format", "xml")
    assert r.returncode != 0 and "--format" in last_json(r.stderr)["error"]
