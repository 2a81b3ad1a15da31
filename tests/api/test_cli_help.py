"""`suggestd <command> --help` for every subcommand: exit 0, a usage text on stdout that
names every flag the command accepts (and no flag it refuses), and no "…" in it."""
import os
import re
import subprocess

import pytest

from conftest import BINARY, ROOT

# command -> (source file, name of its sg_flag_spec table)
COMMANDS = {
    "serve": ("src/cli/serve.c", "serve_flags"),
    "control": ("src/cli/serve.c", "serve_flags"),
    "runtime": ("src/runtime/cmd.c", "flags"),
    "admin": ("src/admin/admin.c", "admin_flags"),
    "compile": ("src/compiler/cli.c", "compile_flags"),
    "inspect": ("src/compiler/cli.c", "inspect_flags"),
    "import": ("src/client/transfer.c", "flags"),
    "export": ("src/client/transfer.c", "flags"),
    "versions": ("src/client/transfer.c", "versions_flags"),
}
# export shares import's table but uses only these; the rest are import's.
EXPORT_FLAGS = {"control-url", "secret-key-file", "list"}


def accepted_flags(cmd):
    path, table = COMMANDS[cmd]
    with open(os.path.join(ROOT, path)) as f:
        src = f.read()
    m = re.search(r"static const sg_flag_spec " + table + r"\[\] = \{(.*?)\n\};", src, re.S)
    assert m, (path, table)
    return set(re.findall(r'\{"([a-z0-9-]+)",', m.group(1)))


def run(*args):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=10,
                          env={k: v for k, v in os.environ.items()
                               if not k.startswith("SUGGESTD_")})


def test_every_command_is_covered():
    top = run("--help")
    assert top.returncode == 0
    listed = set(re.findall(r"^  ([a-z]+) ", top.stdout, re.M)) - {"version"}
    assert listed == set(COMMANDS), listed


@pytest.mark.parametrize("cmd", sorted(COMMANDS))
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_answers_usage(cmd, flag):
    r = run(cmd, flag)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert r.stdout.startswith(f"usage: suggestd {cmd} "), r.stdout
    assert r.stderr == ""
    assert "…" not in r.stdout
    named = set(re.findall(r"--([a-z][a-z0-9-]+)", r.stdout)) - {"help"}
    want = EXPORT_FLAGS if cmd == "export" else accepted_flags(cmd)
    assert want <= named, f"{cmd} --help does not name {sorted(want - named)}"
    if cmd != "control":  # control names serve's flags, which it shares
        assert named <= accepted_flags(cmd), f"{cmd} --help names {sorted(named - accepted_flags(cmd))}"


@pytest.mark.parametrize("cmd", sorted(COMMANDS))
def test_help_anywhere_and_before_other_flags(cmd):
    """--help wins over missing or bad flags, wherever it is; nothing is opened or run."""
    r = run(cmd, "--no-such-flag", "--help")
    assert r.returncode == 0 and r.stdout.startswith("usage:"), r


def test_admin_subcommand_help_lists_the_commands():
    r = run("admin", "member", "create", "--help")
    assert r.returncode == 0
    assert "member create --workspace W --email E" in r.stdout
    assert "--database URL" in r.stdout and "--edge URL" in r.stdout


def test_help_after_double_dash_is_an_argument():
    r = run("inspect", "--", "--help")
    assert r.returncode != 0 and r.stdout == ""


def test_usage_errors_have_no_ellipsis():
    for args in (["import"], ["export", "a", "b"], ["admin", "nope"], ["inspect"]):
        r = run(*args)
        assert r.returncode != 0
        assert "…" not in r.stderr, (args, r.stderr)
        assert "usage" in r.stderr, (args, r.stderr)
