#!/usr/bin/env python3
"""RSS per publish: a real `suggestd serve` under publishes only (no query flood).

Creates a public list of PUBLISH_RSS_ITEMS cities, then PUBLISH_RSS_COUNT times edits one
item's rank and publishes synchronously, back to back, sampling the server's RSS from /proc
every PUBLISH_RSS_EVERY publishes. Prints one line per sample and, at the end, the
least-squares slopes of RSS against the publish count (KiB per publish) over the second
half and over the last quarter of the run, that of the database file, and whether the
RSS levelled off over the last PUBLISH_RSS_TAIL of the run (slope at most
PUBLISH_RSS_MAX_KB). Exits 1 when it did not. The writer's page cache fills for about
12,000 publishes of a 1,000-item list (docs/PERFORMANCE.md), so a run that is to show the
plateau publishes more than that.

Environment: PUBLISH_RSS_COUNT (16000), PUBLISH_RSS_ITEMS (1000), PUBLISH_RSS_EVERY (250),
PUBLISH_RSS_TAIL (0.25), PUBLISH_RSS_MAX_KB (0.1), SUGGESTD_BINARY, and MALLOC_* for the
server (passed through).
Run: python3 bench/publish_rss.py (after make all and make datasets).
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import soak  # noqa: E402  (the soak's client, admin and /proc helpers)

COUNT = int(os.environ.get("PUBLISH_RSS_COUNT", "16000"))
ITEMS = int(os.environ.get("PUBLISH_RSS_ITEMS", "1000"))
EVERY = int(os.environ.get("PUBLISH_RSS_EVERY", "250"))
TAIL = float(os.environ.get("PUBLISH_RSS_TAIL", "0.25"))
MAX_KB = float(os.environ.get("PUBLISH_RSS_MAX_KB", "0.1"))


def fit(points):
    """Least-squares slope of y over x for [(x, y)]; 0 when x does not vary."""
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    sxx = sum((p[0] - mx) ** 2 for p in points)
    return sum((p[0] - mx) * (p[1] - my) for p in points) / sxx if sxx else 0.0


def main():
    soak.with_serve("pubrss", lambda proc, work, data, cport, rport, mport:
                    run(proc, data, cport, rport))


def run(proc, data, cport, rport):
    for p in (cport, rport):
        soak.wait_up(p)
    ws = soak.admin(data, "workspace", "create", "--name", "Rss")["id"]
    app = soak.admin(data, "application", "create", "--workspace", ws, "--name", "rss")["id"]
    sk = soak.admin(data, "secret-key", "create", "--application", app)["secretKey"]
    auth = {"Authorization": f"Bearer {sk}"}
    ctl = soak.Client(cport)
    st, body = ctl.call("POST", "/api/v1/lists", {"name": "Cities"}, auth)
    assert st == 201, body
    lst = json.loads(body)["id"]
    st, body = ctl.call("PATCH", f"/api/v1/lists/{lst}", {"visibility": "public"}, auth)
    assert st == 200, body
    lines = []
    with open(soak.DATASET) as f:
        for line in f:
            it = json.loads(line)
            it.pop("id", None)
            lines.append(json.dumps(it))
            if len(lines) >= ITEMS:
                break
    st, body = ctl.call("POST", f"/api/v1/lists/{lst}/items/import?mode=replace",
                        "\n".join(lines).encode() + b"\n",
                        dict(auth, **{"Content-Type": "application/x-ndjson"}))
    assert st == 200, body
    st, body = ctl.call("GET", f"/api/v1/lists/{lst}/items?limit=10", None, auth)
    edit_ids = [i["id"] for i in json.loads(body)["data"]]
    samples = []  # (publishes, rss KiB, database KiB)
    t0 = time.time()
    for n in range(1, COUNT + 1):
        item = edit_ids[n % len(edit_ids)]
        st, body = ctl.call("PATCH", f"/api/v1/lists/{lst}/items/{item}", {"rank": 1000000 + n},
                            auth)
        if st != 200:
            print(f"item edit: {st} {body[:200]!r}", flush=True)
            return False
        st, body = ctl.call("POST", f"/api/v1/lists/{lst}/versions", None, auth)
        if st != 200 or json.loads(body).get("state") != "active":
            print(f"publish: {st} {body[:300]!r}", flush=True)
            return False
        if n % EVERY == 0:
            rss, fds = soak.proc_sample(proc.pid)
            dbk = soak.db_bytes(data) / 1024
            samples.append((n, rss, dbk))
            print(f"publishes={n:5d} t={time.time() - t0:6.0f}s rss={rss} KiB fds={fds} "
                  f"db={dbk:.0f} KiB", flush=True)
    def window(frac):
        return [s for s in samples if s[0] > COUNT * (1 - frac)]

    def slopes(frac):
        w = window(frac)
        return {"rssKiBPerPublish": round(fit([(s[0], s[1]) for s in w]), 3),
                "databaseKiBPerPublish": round(fit([(s[0], s[2]) for s in w]), 3),
                "rssKiBFrom": w[0][1] if w else None}

    slope = fit([(s[0], s[1]) for s in window(TAIL)])
    print(json.dumps({
        "publishes": COUNT, "items": ITEMS, "seconds": round(time.time() - t0, 1),
        "rssKiB": {"first": samples[0][1], "last": samples[-1][1],
                   "max": max(s[1] for s in samples)},
        "secondHalf": slopes(0.5), "lastQuarter": slopes(0.25),
        "tail": TAIL, "bound": MAX_KB}, indent=2), flush=True)
    ok = slope <= MAX_KB
    print(f"levelled off: {slope:.3f} KiB/publish over the last {TAIL:g} of the run" if ok
          else f"still rising: {slope:.3f} KiB/publish > {MAX_KB} over the last {TAIL:g}",
          flush=True)
    return ok


if __name__ == "__main__":
    main()
