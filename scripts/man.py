#!/usr/bin/env python3
"""Man pages from the binary's own --help texts (src/cli/help.c), so the two never differ.

usage: scripts/man.py BINARY OUTDIR

Writes OUTDIR/suggestd.1 (the command list) and OUTDIR/suggestd-<command>.1 for each
command. A help text is read as: "usage:" lines (SYNOPSIS), prose paragraphs
(DESCRIPTION), a "flags:" or "commands:" block of two-space-indented lines, and prose
after it. The date comes from SOURCE_DATE_EPOCH when set (reproducible packages), else
from the VERSION file's modification time.
"""
import os
import re
import subprocess
import sys
import time

COMMANDS = ["serve", "control", "runtime", "admin", "compile", "inspect", "import", "export"]


def esc(s):
    """Escapes text for roff: backslashes, hyphens, and a leading dot or quote."""
    s = s.replace("\\", "\\e").replace("-", "\\-")
    if s[:1] in (".", "'"):
        s = "\\&" + s
    return s


def run(binary, *args):
    out = subprocess.run([binary, *args], check=True, capture_output=True, text=True)
    return out.stdout


def blocks(text):
    """Splits a help text into (kind, lines): usage, prose or list blocks."""
    lines = text.rstrip("\n").split("\n")
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if line.startswith("usage:"):
            u = [line[len("usage:"):].strip()]
            i += 1
            while i < len(lines) and lines[i].startswith("      ") and lines[i].strip():
                u.append(lines[i].strip())
                i += 1
            out.append(("usage", u))
        elif re.match(r"^[a-z ]+:$", line):
            title, items = line[:-1], []
            i += 1
            while i < len(lines) and lines[i].startswith("  "):
                items.append(lines[i])
                i += 1
            out.append(("list:" + title, items))
        else:
            p = []
            while i < len(lines) and lines[i].strip() and not lines[i].startswith("usage:"):
                p.append(lines[i].strip())
                i += 1
            out.append(("prose", p))
    return out


def entries(items):
    """Groups list lines into (term, description) pairs: a term line starts with two
    spaces and a non-space, description continuation lines are indented further."""
    res = []
    for line in items:
        if line.startswith("   ") and res:
            res[-1][1].append(line.strip())
            continue
        m = re.match(r"^  (\S.*?)(?:\s{2,}(\S.*))?$", line)
        term, desc = m.group(1), m.group(2)
        res.append([term, [desc] if desc else []])
    return res


def page(name, section_title, summary, text, version, date):
    out = [
        '.TH %s 1 "%s" "suggestd %s" "%s"' % (name.upper(), date, version, section_title),
        ".SH NAME",
        "%s \\- %s" % (esc(name), esc(summary)),
    ]
    parts = blocks(text)
    usage = [b for b in parts if b[0] == "usage"]
    if usage:
        out.append(".SH SYNOPSIS")
        for j, u in enumerate(usage[0][1]):
            if j:
                out.append(".br")
            out.append(".B " + esc(u))
    described = False
    for kind, lines in parts:
        if kind == "usage":
            continue
        if kind == "prose":
            if not described:
                out.append(".SH DESCRIPTION")
                described = True
            else:
                out.append(".PP")
            out.append(esc(" ".join(lines)))
        else:
            title = kind.split(":", 1)[1]
            out.append(".SH " + ("OPTIONS" if title == "flags" else esc(title.upper())))
            pairs = entries(lines)
            if not any(desc for _, desc in pairs):
                # A list of command lines (admin): one a line, as printed.
                out.append(".nf")
                out.extend(esc(term) for term, _ in pairs)
                out.append(".fi")
                described = True
                continue
            for term, desc in pairs:
                out.append(".TP")
                out.append(".B " + esc(term))
                if desc:
                    out.append(esc(" ".join(desc)))
            described = True
    out.append(".SH ENVIRONMENT")
    out.append(
        esc("Every flag --NAME is also read from the environment variable SUGGESTD_NAME "
            "(upper case, - to _) when the flag is absent. The systemd units read "
            "/etc/suggestd/suggestd.env."))
    out.append(".SH SEE ALSO")
    others = ["suggestd"] + ["suggestd-" + c for c in COMMANDS]
    out.append(",\n".join(".BR %s (1)" % esc(o) for o in others if o != name))
    return "\n".join(out) + "\n"


def main():
    binary, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    with open(os.path.join(root, "VERSION")) as f:
        version = f.read().strip()
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = int(epoch) if epoch else int(os.path.getmtime(os.path.join(root, "VERSION")))
    date = time.strftime("%Y-%m-%d", time.gmtime(when))
    top = run(binary, "--help")
    summaries = {}
    for line in top.split("\n"):
        m = re.match(r"^  (\S+)\s+(.*)$", line)
        if m:
            summaries[m.group(1)] = m.group(2)
    pages = {"suggestd": ("an autocomplete service", top)}
    for c in COMMANDS:
        pages["suggestd-" + c] = (summaries.get(c, c), run(binary, c, "--help"))
    for name, (summary, text) in pages.items():
        with open(os.path.join(outdir, name + ".1"), "w") as f:
            f.write(page(name, "suggestd manual", summary, text, version, date))


if __name__ == "__main__":
    main()
