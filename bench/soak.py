#!/usr/bin/env python3
"""Soak test: a real `suggestd serve` under steady mixed load for SOAK_SECONDS.

Queries flow on several keep-alive connections, an item edit is published every second
and selection reports are sent, while the server's RSS and open descriptors are sampled
from /proc. Prints its figures as it goes and at the end, and exits non-zero on any
unexpected answer, on descriptor growth, or on RSS growth past the bound after warm-up.
Stdlib only (python3); run through `make soak` (bench/soak.sh).

Environment: SOAK_SECONDS (300), SOAK_ITEMS (20000 cities; 0 = all), SOAK_QUERY_CONNS (3),
SOAK_RSS_GROWTH_MB (8: allowed RSS growth after warm-up, from the lowest sample of its first
minute to that of the last),
SOAK_RSS_KB_PER_PUBLISH (0.5: allowed RSS slope after warm-up, in KiB per publish, on top
of the database file's own growth per publish, which SQLite's page cache follows; checked
once SOAK_SLOPE_MIN_PUBLISHES (300) publishes ran after warm-up, enough for a least-squares
slope to see a 1 KiB-per-publish leak through the allocator's steps),
SOAK_FD_GROWTH (8: allowed descriptor growth, same window), SUGGESTD_BINARY.
"""
import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BINARY = os.environ.get("SUGGESTD_BINARY", os.path.join(ROOT, "build", "suggestd"))
SECONDS = int(os.environ.get("SOAK_SECONDS", "300"))
ITEMS = int(os.environ.get("SOAK_ITEMS", "20000"))
CONNS = int(os.environ.get("SOAK_QUERY_CONNS", "3"))
RSS_GROWTH_MB = float(os.environ.get("SOAK_RSS_GROWTH_MB", "8"))
FD_GROWTH = int(os.environ.get("SOAK_FD_GROWTH", "8"))
KB_PER_PUBLISH = float(os.environ.get("SOAK_RSS_KB_PER_PUBLISH", "0.5"))
SLOPE_MIN_PUBLISHES = int(os.environ.get("SOAK_SLOPE_MIN_PUBLISHES", "300"))
WARMUP = min(60.0, SECONDS * 0.2)
SAMPLE_EVERY = 5.0
DATASET = os.path.join(ROOT, ".cache", "datasets", "cities.jsonl")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log(msg):
    print(f"[soak {time.strftime('%H:%M:%S')}] {msg}", flush=True)


class Client:
    """One keep-alive HTTP connection; reconnects after an error (which it reports)."""

    def __init__(self, port):
        self.port = port
        self.conn = None

    def call(self, method, path, body=None, headers=None):
        hdrs = dict(headers or {})
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            try:
                self.conn.request(method, path, body=data, headers=hdrs)
                r = self.conn.getresponse()
                payload = r.read()
                if r.getheader("connection", "").lower() == "close":
                    self.conn.close()
                    self.conn = None
                return r.status, payload
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as e:
                # A keep-alive connection closed by the server between two requests (idle
                # timeout) is retried once on a new connection; anything else is an error.
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
                err = e
        raise err


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}
        self.errors = []

    def add(self, kind, n=1):
        with self.lock:
            self.counts[kind] = self.counts.get(kind, 0) + n

    def error(self, what):
        with self.lock:
            self.errors.append(what)
            if len(self.errors) <= 20:
                log(f"ERROR {what}")


def admin(data, *words):
    r = subprocess.run([BINARY, "admin", *words, "--data-dir", data], capture_output=True,
                       text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"admin {words}: {r.stderr}")
    return json.loads(r.stdout)


def proc_sample(pid):
    rss_kb = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss_kb = int(line.split()[1])
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    return rss_kb, fds


def db_bytes(data):
    """The SQLite database file's size in bytes (its write-ahead log comes and goes)."""
    try:
        return os.path.getsize(os.path.join(data, "suggestd.db"))
    except OSError:
        return 0


def slope_kb(samples, window=12):
    """Least-squares slope of RSS (KiB) over the publish count, fitted to the lowest sample
    of each run of `window` samples (a minute): a publish's compile briefly adds megabytes,
    a leak raises the floor. 0 when flat."""
    low = [min(samples[i:i + window], key=lambda s: s[1])
           for i in range(0, len(samples), window)]
    if len(low) < 3:
        low = samples
    xs = [s[3] for s in low]
    ys = [s[1] for s in low]
    n = len(xs)
    if n < 2:
        return 0.0
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return 0.0
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def rss_verdict(warm, growth_mb=RSS_GROWTH_MB, kb_per_publish=KB_PER_PUBLISH,
                min_publishes=SLOPE_MIN_PUBLISHES):
    """The soak's judgement of memory from the samples taken after warm-up, each
    (seconds, rss KiB, fds, publishes so far, database bytes): returns the figures and the
    failures (a list of sentences, empty when it passes). It fails when RSS grew more than
    growth_mb MiB from the lowest sample of the first minute to that of the last, or when, over at least min_publishes
    publishes, RSS rose faster than kb_per_publish KiB per publish plus what the database
    file grew per publish (SQLite caches the pages it writes, up to its cache size, so RSS
    may follow the file; nothing else). tests/api/test_soak_check.py runs it on made-up
    series, so the check itself is tested."""
    # From the floor of the first minute to that of the last (of the first and the last
    # quarter in a shorter run): a compile's peak in the first or the last sample is not
    # growth.
    w = max(1, min(12, len(warm) // 4))
    rss_growth = (min(s[1] for s in warm[-w:]) - min(s[1] for s in warm[:w])) / 1024
    pubs = warm[-1][3] - warm[0][3]
    slope = slope_kb(warm)
    db_kb_per_publish = (warm[-1][4] - warm[0][4]) / 1024 / pubs if pubs else 0.0
    slope_bound = kb_per_publish + max(0.0, db_kb_per_publish)
    slope_checked = pubs >= min_publishes
    figures = {"growthAfterWarmupMiB": round(rss_growth, 1), "publishesAfterWarmup": pubs,
               "slopeKiB": round(slope, 3), "databaseKiB": round(db_kb_per_publish, 3),
               "boundKiB": round(slope_bound, 3), "checked": slope_checked}
    failures = []
    if rss_growth > growth_mb:
        failures.append(f"RSS grew {rss_growth:.1f} MiB after warm-up (bound {growth_mb})")
    if slope_checked and slope > slope_bound:
        failures.append(f"RSS grew {slope:.2f} KiB per publish after warm-up (bound "
                        f"{slope_bound:.2f}: {kb_per_publish} + the database's "
                        f"{db_kb_per_publish:.2f})")
    return figures, failures


def with_serve(prefix, run):
    """Starts `suggestd serve` on a fresh data dir (free ports, rate limits off), calls
    run(proc, work, data, cport, rport, mport), stops the server and exits 0 when run
    returned true; a failed run's work dir (server log: serve.log) is kept."""
    if not os.path.exists(DATASET):
        sys.exit(f"{prefix}: {DATASET} is missing (make datasets)")
    work = tempfile.mkdtemp(prefix=f"suggestd-{prefix}-")
    data = os.path.join(work, "data")
    os.makedirs(data)
    cport, rport, mport = free_port(), free_port(), free_port()
    server_log = open(os.path.join(work, "serve.log"), "wb")
    args = [BINARY, "serve", "--data-dir", data, "--control-listen", f"127.0.0.1:{cport}",
            "--runtime-listen", f"127.0.0.1:{rport}", "--metrics-listen", f"127.0.0.1:{mport}",
            "--control-rate-key", "0", "--control-rate-ip", "0",
            "--sync-publish-limit", "100000000"]
    proc = subprocess.Popen(args, stdout=server_log, stderr=server_log)
    ok = False
    try:
        ok = run(proc, work, data, cport, rport, mport)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        server_log.close()
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            log(f"kept {work} (server log: {work}/serve.log)")
    sys.exit(0 if ok else 1)


def main():
    with_serve("soak", run)


def wait_up(port):
    deadline = time.time() + 15
    while time.time() < deadline:
        try:
            if Client(port).call("GET", "/readyz")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"port {port} not ready")


def run(proc, work, data, cport, rport, mport):
    for p in (cport, rport):
        wait_up(p)
    ws = admin(data, "workspace", "create", "--name", "Soak")["id"]
    app = admin(data, "application", "create", "--workspace", ws, "--name", "soak")["id"]
    sk = admin(data, "secret-key", "create", "--application", app)["secretKey"]
    auth = {"Authorization": f"Bearer {sk}"}
    ctl = Client(cport)
    st, body = ctl.call("POST", "/api/v1/lists", {"name": "Cities"}, auth)
    assert st == 201, body
    lst = json.loads(body)["id"]
    st, body = ctl.call("PATCH", f"/api/v1/lists/{lst}", {"visibility": "public"}, auth)
    assert st == 200, body

    # Items: the first ITEMS cities, imported in one NDJSON request.
    values, lines = [], []
    with open(DATASET) as f:
        for line in f:
            it = json.loads(line)
            it.pop("id", None)
            lines.append(json.dumps(it))
            values.append(it.get("displayValue") or it["value"])
            if ITEMS and len(lines) >= ITEMS:
                break
    t0 = time.time()
    st, body = ctl.call("POST", f"/api/v1/lists/{lst}/items/import?mode=replace",
                        "\n".join(lines).encode() + b"\n",
                        dict(auth, **{"Content-Type": "application/x-ndjson"}))
    assert st == 200, body
    st, body = ctl.call("POST", f"/api/v1/lists/{lst}/versions", None, auth)
    assert st == 200 and json.loads(body)["state"] == "active", body
    log(f"imported and published {len(lines)} items in {time.time() - t0:.1f} s")
    pk = admin(data, "publishable-key", "create", "--application", app, "--list",
               lst)["publishableKey"]
    # Items the publisher edits: their ids, from the first page of the list.
    st, body = ctl.call("GET", f"/api/v1/lists/{lst}/items?limit=10", None, auth)
    edit_ids = [i["id"] for i in json.loads(body)["data"]]
    prefixes = sorted({v[:n].lower() for v in values[:2000] for n in (1, 2, 3, 5) if len(v) >= n})
    rt = Client(rport)
    deadline = time.time() + 10
    while rt.call("GET", "/v1/query?" + urllib.parse.urlencode({"key": pk, "q": "a"}))[0] != 200:
        if time.time() > deadline:
            raise RuntimeError("runtime never served the list")
        time.sleep(0.1)

    stats = Stats()
    stop = threading.Event()
    last_qrid = {}

    def querier(i):
        c = Client(rport)
        rnd = random.Random(i)
        while not stop.is_set():
            q = rnd.choice(prefixes)
            try:
                st, body = c.call("GET", "/v1/query?" + urllib.parse.urlencode({"key": pk, "q": q}))
            except OSError as e:
                stats.error(f"query {q!r}: {e!r}")
                continue
            if st != 200:
                stats.error(f"query {q!r}: {st} {body[:200]!r}")
                continue
            stats.add("queries")
            o = json.loads(body)
            if o["items"]:
                last_qrid["v"] = (o["requestId"], o["items"][0]["itemId"])

    def publisher():
        c = Client(cport)
        n = 0
        durations = []
        while not stop.is_set():
            start = time.time()
            n += 1
            item = edit_ids[n % len(edit_ids)]
            try:
                st, body = c.call("PATCH", f"/api/v1/lists/{lst}/items/{item}",
                                  {"rank": 1000000 + n}, auth)
                if st != 200:
                    stats.error(f"item edit: {st} {body[:200]!r}")
                st, body = c.call("POST", f"/api/v1/lists/{lst}/versions", None, auth)
                state = json.loads(body).get("state") if st in (200, 202) else None
                if st != 200 or state != "active":
                    stats.error(f"publish: {st} {body[:300]!r}")
                else:
                    stats.add("publishes")
                    durations.append(time.time() - start)
            except OSError as e:
                stats.error(f"publish: {e!r}")
            stats.durations = durations
            stop.wait(max(0.0, 1.0 - (time.time() - start)))

    def selector():
        c = Client(rport)
        while not stop.is_set():
            v = last_qrid.get("v")
            if v:
                body = {"key": pk, "selectionId": str(uuid.uuid4()), "queryRequestId": v[0],
                        "listId": lst, "itemId": v[1], "position": 1}
                try:
                    st, resp = c.call("POST", "/v1/selection", body)
                    if st != 200:
                        stats.error(f"selection: {st} {resp[:200]!r}")
                    else:
                        stats.add("selections")
                except OSError as e:
                    stats.error(f"selection: {e!r}")
            stop.wait(0.2)  # 5 a second, inside the default 600 a minute per key

    threads = [threading.Thread(target=querier, args=(i,)) for i in range(CONNS)]
    threads += [threading.Thread(target=publisher), threading.Thread(target=selector)]
    begin = time.time()
    for t in threads:
        t.start()
    samples = []
    log(f"running {SECONDS} s: {CONNS} query connections, a publish a second, 5 selections a "
        f"second; warm-up {WARMUP:.0f} s; pid {proc.pid}")
    try:
        while time.time() - begin < SECONDS:
            time.sleep(SAMPLE_EVERY)
            if proc.poll() is not None:
                stats.error(f"server exited with {proc.returncode}")
                break
            rss, fds = proc_sample(proc.pid)
            el = time.time() - begin
            c = dict(stats.counts)
            samples.append((el, rss, fds, c.get("publishes", 0), db_bytes(data)))
            log(f"t={el:5.0f}s rss={rss / 1024:7.1f} MiB fds={fds:3d} queries={c.get('queries', 0)} "
                f"publishes={c.get('publishes', 0)} selections={c.get('selections', 0)} "
                f"errors={len(stats.errors)}")
    finally:
        stop.set()
        for t in threads:
            t.join(120)
    elapsed = time.time() - begin

    # The last publish is what the runtime serves.
    st, body = ctl.call("GET", f"/api/v1/lists/{lst}", None, auth)
    active = json.loads(body).get("activeVersionNumber")
    metrics = {}
    try:
        st, body = Client(mport).call("GET", "/metrics")
        for line in body.decode().splitlines():
            if line and not line.startswith("#"):
                k, _, v = line.rpartition(" ")
                metrics[k] = float(v)
    except OSError as e:
        stats.error(f"metrics: {e!r}")
    art_dir = os.path.join(data, "edge", "artifacts")
    art_bytes = sum(os.path.getsize(os.path.join(art_dir, f)) for f in os.listdir(art_dir))

    warm = [s for s in samples if s[0] >= WARMUP] or samples[-1:]
    c = stats.counts
    durs = sorted(getattr(stats, "durations", []) or [0])
    rss_mb = [s[1] / 1024 for s in samples]
    fds = [s[2] for s in samples]
    fd_growth = warm[-1][2] - warm[0][2]
    # RSS after warm-up: its growth, and its slope against the publish count.
    rss, rss_failures = rss_verdict(warm)
    figures = {
        "seconds": round(elapsed, 1),
        "items": len(lines),
        "queries": c.get("queries", 0),
        "queriesPerSecond": round(c.get("queries", 0) / elapsed, 1),
        "publishes": c.get("publishes", 0),
        "publishSecondsMedian": round(durs[len(durs) // 2], 3),
        "publishSecondsMax": round(durs[-1], 3),
        "activeVersion": active,
        "selections": c.get("selections", 0),
        "errors": len(stats.errors),
        "rssMiB": {"first": round(rss_mb[0], 1), "warm": round(warm[0][1] / 1024, 1),
                   "last": round(rss_mb[-1], 1), "max": round(max(rss_mb), 1),
                   "growthAfterWarmup": rss["growthAfterWarmupMiB"], "bound": RSS_GROWTH_MB},
        "rssPerPublish": {k: rss[k] for k in ("publishesAfterWarmup", "slopeKiB", "databaseKiB",
                                              "boundKiB", "checked")},
        "fds": {"first": fds[0], "warm": warm[0][2], "last": fds[-1], "max": max(fds),
                "growthAfterWarmup": fd_growth, "bound": FD_GROWTH},
        "serverMetrics": {
            "queriesServed": metrics.get("suggestd_queries_served_total"),
            "selectionEventsWritten": metrics.get("suggestd_selection_events_written_total"),
            "selectionEventsDropped": metrics.get("suggestd_selection_events_dropped_total"),
            "publishQueueDepth": metrics.get("suggestd_publish_queue_depth"),
            "edgeRevision": metrics.get("suggestd_edge_revision"),
            "openFds": metrics.get("process_open_fds"),
        },
        "artifactDirMiB": round(art_bytes / 1048576, 1),
    }
    print(json.dumps(figures, indent=2), flush=True)
    failures = []
    if stats.errors:
        failures.append(f"{len(stats.errors)} errors (first: {stats.errors[0]})")
    failures += rss_failures
    if fd_growth > FD_GROWTH:
        failures.append(f"descriptors grew by {fd_growth} after warm-up (bound {FD_GROWTH})")
    if c.get("publishes", 0) < max(1, elapsed * 0.5):
        failures.append(f"only {c.get('publishes', 0)} publishes in {elapsed:.0f} s")
    if not c.get("selections") or not c.get("queries"):
        failures.append("no queries or no selections flowed")
    if metrics.get("suggestd_selection_events_dropped_total"):
        failures.append("selection events were dropped")
    for f in failures:
        log(f"FAIL {f}")
    log("PASS" if not failures else "FAILED")
    return not failures


if __name__ == "__main__":
    main()
