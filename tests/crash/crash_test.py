#!/usr/bin/env python3
"""`make crash-test`: kill -9 trials during item writes, imports and publishes.

One `suggestd serve` (random ports, a fresh temporary data directory) is driven by four
concurrent writers while a killer sends SIGKILL at a random moment; then the server is
restarted and everything acknowledged before the kill is checked:

  - every item whose POST was answered 201 exists, with its value, displayValue and rank;
  - the POST the kill cut off, retried with its Idempotency-Key, answers 201 (it runs
    again, or replays if it had committed), never 409 idempotency_key_in_flight;
  - the import list holds exactly the last acknowledged import's items, or those of the
    import that was in flight when the process died (an import is one transaction);
  - every publish answered 200 is still there: its version is active or superseded, with
    the contentHash the answer gave;
  - no version stays queued or staged once recovery ran (within 30 s), and none failed;
  - the runtime serves exactly what the store says: bootstrap names the store's
    activeContentHash and the queryPolicy of the last PATCH (a fourth writer keeps changing
    it), and a query answers what `suggestd inspect` reads from the active artifact.

The state accumulates across trials (one data directory), like a server that crashes again
and again. Standard library only. Usage:

    tests/crash/crash_test.py [--trials N] [--seed S] [--binary build/suggestd]

Prints its figures and exits non-zero on the first violation.
"""
import argparse
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

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(port, method, path, body=None, headers=None, raw=None, timeout=30):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    hdrs = dict(headers or {})
    data = raw
    if body is not None:
        data = json.dumps(body).encode()
        hdrs.setdefault("Content-Type", "application/json")
    try:
        conn.request(method, path, body=data, headers=hdrs)
        r = conn.getresponse()
        payload = r.read()
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), payload
    finally:
        conn.close()


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


class Server:
    def __init__(self, binary, data_dir):
        self.binary, self.data_dir = binary, data_dir
        self.proc = None
        self.log = open(os.path.join(data_dir, "serve.log"), "ab")

    def start(self):
        self.cport, self.rport = free_port(), free_port()
        self.proc = subprocess.Popen(
            [self.binary, "serve", "--data-dir", self.data_dir,
             "--control-listen", f"127.0.0.1:{self.cport}",
             "--runtime-listen", f"127.0.0.1:{self.rport}",
             "--control-rate-key", "0", "--control-rate-ip", "0"],
            stdout=self.log, stderr=self.log)
        deadline = time.time() + 30
        for port in (self.cport, self.rport):
            while True:
                check(self.proc.poll() is None, "suggestd exited at start")
                try:
                    if call(port, "GET", "/healthz", timeout=1)[0] == 200:
                        break
                except OSError:
                    pass
                check(time.time() < deadline, "suggestd did not start")
                time.sleep(0.02)

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(20)

    def admin(self, *words):
        r = subprocess.run([self.binary, "admin", *words, "--data-dir", self.data_dir],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, f"admin {words}: {r.stderr}")
        return json.loads(r.stdout)


class Driver:
    """Shared state of one run: what was acknowledged so far."""

    def __init__(self, server, rng):
        self.s, self.rng = server, rng
        self.items = {}        # itemId -> (value, displayValue, rank), acknowledged
        self.imports = []      # acknowledged import sets, in order (list of value sets)
        self.pending_import = None
        self.pending_item = None  # (Idempotency-Key, body) of the POST the kill cut off
        self.publishes = {}    # versionNumber -> contentHash, acknowledged
        self.counter = 0
        self.lock = threading.Lock()

    def api(self, method, path, body=None, raw=None, headers=None):
        h = {"Authorization": f"Bearer {self.secret}"}
        h.update(headers or {})
        return call(self.s.cport, method, "/api/v1" + path, body=body, raw=raw, headers=h)

    def setup(self):
        ws = self.s.admin("workspace", "create", "--name", "crash")["id"]
        app = self.s.admin("application", "create", "--workspace", ws, "--name", "app")["id"]
        self.secret = self.s.admin("secret-key", "create", "--application", app)["secretKey"]
        st, _, b = self.api("POST", "/lists", {"name": "items"})
        check(st == 201, f"create list: {st} {b}")
        self.list = json.loads(b)["id"]
        st, _, b = self.api("PATCH", f"/lists/{self.list}", {"visibility": "public"})
        check(st == 200, "patch")
        st, _, b = self.api("POST", "/lists", {"name": "imports"})
        self.import_list = json.loads(b)["id"]
        self.pk = self.s.admin("publishable-key", "create", "--application", app,
                               "--list", self.list)["publishableKey"]

    # -- writers (each stops at its first connection error: the kill) -------------------
    def next_n(self):
        with self.lock:
            self.counter += 1
            return self.counter

    def post_item(self, key, body):
        """POST one item under an Idempotency-Key; records it when acknowledged."""
        st, _, b = self.api("POST", f"/lists/{self.list}/items", body,
                            headers={"Idempotency-Key": key})
        if st == 201:
            it = json.loads(b)
            with self.lock:
                self.items[it["id"]] = (body["value"], body["displayValue"], body["rank"])
        return st, b

    def item_writer(self, stop):
        while not stop.is_set():
            n = self.next_n()
            body = {"value": f"city {n:07d}", "displayValue": f"City {n}", "rank": n % 97}
            key = f"item-{n}"
            self.pending_item = (key, body)
            try:
                st, _ = self.post_item(key, body)
            except OSError:
                return  # killed: retried after the restart
            self.pending_item = None
            if st >= 500:
                return

    def importer(self, stop):
        while not stop.is_set():
            k = self.next_n()
            values = {f"import {k} row {i}" for i in range(self.rng.randint(50, 3000))}
            raw = b"".join(json.dumps({"value": v}).encode() + b"\n" for v in sorted(values))
            with self.lock:
                self.pending_import = values
            try:
                st, _, _ = self.api("POST", f"/lists/{self.import_list}/items/import?mode=replace",
                                    raw=raw, headers={"Content-Type": "application/x-ndjson"})
            except OSError:
                return
            with self.lock:
                if st == 200:
                    self.imports.append(values)
                self.pending_import = None

    def patcher(self, stop):
        """Changes a served field (queryPolicy.debounceMs): the edge must follow the store."""
        while not stop.is_set():
            try:
                self.api("PATCH", f"/lists/{self.list}",
                         {"queryPolicy": {"debounceMs": self.rng.randint(0, 5000)}})
            except OSError:
                return
            time.sleep(self.rng.uniform(0, 0.1))

    def publisher(self, stop):
        while not stop.is_set():
            try:
                st, _, b = self.api("POST", f"/lists/{self.list}/versions")
            except OSError:
                return
            if st == 200:
                v = json.loads(b)
                check(v["state"] in ("active", "draft"), f"publish answered {v['state']}")
                if v["state"] == "active":
                    with self.lock:
                        self.publishes[v["versionNumber"]] = v["contentHash"]
            time.sleep(self.rng.uniform(0, 0.2))

    # -- verification ---------------------------------------------------------------------
    def paged(self, path):
        """Every element of a paginated collection, by its key member."""
        out, cursor = [], None
        while True:
            q = "?limit=100" + (f"&cursor={urllib.parse.quote(cursor)}" if cursor else "")
            st, _, b = self.api("GET", path + q)
            check(st == 200, f"GET {path}: {st}")
            page = json.loads(b)
            out += page["data"]
            cursor = page.get("nextCursor")
            if not cursor:
                return out

    def all_items(self, list_id):
        return {it["id"]: it for it in self.paged(f"/lists/{list_id}/items")}

    def versions(self):
        return {v["versionNumber"]: v for v in self.paged(f"/lists/{self.list}/versions")}

    def verify(self, stats):
        dup = False
        if self.pending_item:
            # The retry of a request the kill cut off runs (or replays): never 409
            # idempotency_key_in_flight for a request nothing runs any more.
            key, body = self.pending_item
            st, b = self.post_item(key, body)
            # The item committed but the process died before recording the answer: the
            # retry runs again and finds its own value (409 duplicate_value).
            dup = st == 409 and json.loads(b).get("details", {}).get("reason") == "duplicate_value"
            check(st == 201 or dup, f"retry of {key} after the kill answered {st} {b[:200]}")
            self.pending_item = None
            stats["retries"] += 1
        items = self.all_items(self.list)
        if dup:
            found = [i for i, it in items.items() if it["value"] == body["value"]]
            check(found, f"duplicate_value for {body['value']} but no such item")
            self.items[found[0]] = (body["value"], body["displayValue"], body["rank"])
        for iid, (value, dv, rank) in self.items.items():
            got = items.get(iid)
            check(got is not None, f"acknowledged item {iid} ({value}) lost")
            check((got["value"], got["displayValue"], got["rank"]) == (value, dv, rank),
                  f"item {iid} changed: {got}")
        stats["items"] = len(self.items)

        imported = {it["value"] for it in self.all_items(self.import_list).values()}
        allowed = [self.imports[-1] if self.imports else set()]
        if self.pending_import is not None:
            allowed.append(self.pending_import)
        check(imported in allowed, f"import list holds {len(imported)} items, none of the "
                                   f"acknowledged/in-flight sets {[len(a) for a in allowed]}")
        if self.pending_import is not None and imported == self.pending_import:
            self.imports.append(self.pending_import)  # it committed before the kill
        self.pending_import = None
        stats["imports"] = len(self.imports)

        deadline = time.time() + 30
        while True:
            vs = self.versions()
            stuck = [n for n, v in vs.items() if v["state"] in ("queued", "staged")]
            if not stuck:
                break
            check(time.time() < deadline, f"versions stuck: {stuck}")
            time.sleep(0.1)
        failed = [n for n, v in vs.items() if v["state"] == "failed"]
        check(not failed, f"versions failed: {failed}")
        for n, h in self.publishes.items():
            v = vs.get(n)
            check(v is not None, f"acknowledged version {n} lost")
            check(v["state"] in ("active", "superseded"), f"version {n} is {v['state']}")
            check(v["contentHash"] == h, f"version {n} hash changed")
        stats["publishes"] = len(self.publishes)

        st, _, b = self.api("GET", f"/lists/{self.list}")
        lst = json.loads(b)
        active = lst["activeContentHash"]
        actives = [n for n, v in vs.items() if v["state"] == "active"]
        check(len(actives) <= 1, f"several active versions: {actives}")
        if actives:
            check(vs[actives[0]]["contentHash"] == active, "active pointer disagrees")
        if not active:
            return

        debounce = lst["queryPolicy"]["debounceMs"]

        def boot():
            # The runtime serves what the store says: the active version, and the policy
            # of the last PATCH (rewritten at start when the kill cut its edge write off).
            st, _, b = call(self.s.rport, "GET", "/v1/bootstrap?key=" + self.pk)
            if st != 200:
                return False
            o = json.loads(b)
            return o["activeVersionHash"] == active and o["queryPolicy"]["debounceMs"] == debounce

        deadline = time.time() + 10
        while not boot():
            check(time.time() < deadline, "runtime does not serve the active version and policy")
            time.sleep(0.05)
        art = os.path.join(self.s.data_dir, "edge", "artifacts", active.split(":")[1] + ".sga")
        q = "city 00" + str(self.rng.randint(0, 9))
        # inspect answers as the runtime under the list's typo policy (docs/DESIGN.md §3.1).
        tt = lst["queryPolicy"]["typoTolerance"]
        policy = (f"{tt['minCharsOneTypo']},{tt['minCharsTwoTypos']}" if tt["enabled"]
                  else "off")
        r = subprocess.run([self.s.binary, "inspect", art, "--query", q,
                            "--typo-tolerance", policy],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, f"inspect: {r.stderr}")
        want = [it["itemId"] for it in json.loads(r.stdout)]
        st, _, b = call(self.s.rport, "GET",
                        "/v1/query?" + urllib.parse.urlencode({"key": self.pk, "q": q}))
        check(st == 200, f"query {st} {b[:200]}")
        got = [it["itemId"] for it in json.loads(b)["items"]]
        check(got == want, f"runtime answers {got} for {q!r}, the active artifact {want}")
        stats["queries"] += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=int(os.environ.get("CRASH_TRIALS", "100")))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("SG_CRASH_SEED",
                                                                   str(int(time.time())))))
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "suggestd"))
    args = ap.parse_args()
    rng = random.Random(args.seed)
    data_dir = tempfile.mkdtemp(prefix="suggestd-crash-")
    server = Server(args.binary, data_dir)
    t0 = time.time()
    stats = {"items": 0, "imports": 0, "publishes": 0, "queries": 0, "retries": 0}
    ok = False
    try:
        server.start()
        d = Driver(server, rng)
        d.setup()
        for trial in range(1, args.trials + 1):
            stop = threading.Event()
            threads = [threading.Thread(target=f, args=(stop,))
                       for f in (d.item_writer, d.importer, d.publisher, d.patcher)]
            for t in threads:
                t.start()
            time.sleep(rng.uniform(0.05, 1.5))
            server.kill()
            stop.set()
            for t in threads:
                t.join(60)
            server.start()
            d.verify(stats)
            print(f"trial {trial}/{args.trials}: ok ({stats['items']} items, "
                  f"{stats['imports']} imports, {stats['publishes']} publishes acknowledged)",
                  flush=True)
        ok = True
    except Failure as e:
        print(f"FAILED (seed {args.seed}, data dir {data_dir}): {e}", file=sys.stderr)
    finally:
        server.stop()
    secs = time.time() - t0
    print(json.dumps({"trials": args.trials, "seed": args.seed,
                      "acknowledgedItemsChecked": stats["items"],
                      "acknowledgedImports": stats["imports"],
                      "acknowledgedPublishesChecked": stats["publishes"],
                      "servedQueriesCompared": stats["queries"],
                      "retriesAfterKill": stats["retries"],
                      "losses": 0 if ok else "see above", "seconds": round(secs, 1),
                      "result": "pass" if ok else "FAIL"}))
    if ok:
        shutil.rmtree(data_dir, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
