"""`suggestd compile`'s reference flags, which exist only for `make bench` to measure what a
part of the artifact costs (bench/words.sh): --without-skip-tables leaves the typo
search's skip tables out (docs/ARTIFACT.md, "Skip record") and must change no answer;
--without-words leaves tiers 3 and 4 out (docs/DESIGN.md §3.3) and must lose exactly
those matches."""
import json
import os
import subprocess

from conftest import BINARY

# Names dense near their start (many share their first letters), long enough for both
# skip tables (queries of 8-9 and of 10 or more code points).
STEMS = ["react", "reach", "read", "real", "redux", "render", "request", "resolve"]
TAILS = ["native markdown", "native pusher", "dom router", "table view", "query client",
         "hook form", "icons pack", "select box", "spring motion", "test utils"]
QUERIES = [
    "react natvie markdown",  # a swap past the first five code points
    "raect native pusher",    # a swap near the start
    "reqeust query clent",    # two edits
    "rendr tabel view",       # two edits, 16 code points
    "resolev hok",            # table 1's length range with its prefix cut
    "reduxx dom routr",
    "realtest utils",
    "native react",           # tier 3 (words in any order)
    "reactnative",            # tier 4 (run together)
]


def compile_items(tmp_path, name, *flags):
    src = tmp_path / "items.jsonl"
    if not src.exists():
        with open(src, "w") as f:
            n = 0
            for s in STEMS:
                for t in TAILS:
                    n += 1
                    f.write(json.dumps({"id": f"itm_{n}", "value": f"{s} {t}", "rank": n % 7})
                            + "\n")
    out = tmp_path / f"{name}.art"
    r = subprocess.run([BINARY, "compile", "--input", str(src), "--output", str(out), *flags],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return out


def answer(art, q, *flags):
    r = subprocess.run([BINARY, "inspect", str(art), "--query", q, *flags],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_without_skip_tables_same_answers_smaller_artifact(tmp_path):
    full = compile_items(tmp_path, "full")
    bare = compile_items(tmp_path, "bare", "--without-skip-tables")
    assert os.path.getsize(bare) < os.path.getsize(full)
    found = 0
    for q in QUERIES:
        a, b = answer(full, q), answer(bare, q)
        assert a == b, q
        found += '"itemId"' in a
    assert found == len(QUERIES)  # every query matches something: the comparison is not empty


def test_without_words_loses_only_tiers_3_and_4(tmp_path):
    full = compile_items(tmp_path, "full")
    bare = compile_items(tmp_path, "bare", "--without-words")
    assert os.path.getsize(bare) < os.path.getsize(full)
    for q in QUERIES[:-2]:
        assert answer(full, q) == answer(bare, q), q
    for q in QUERIES[-2:]:  # typos off: "reactnative" is one edit from "react native"
        assert '"itemId"' in answer(full, q, "--typo-tolerance", "off"), q
        assert '"itemId"' not in answer(bare, q, "--typo-tolerance", "off"), q
