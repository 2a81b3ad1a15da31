"""A load generator for tests/api/test_control_pools.py, run as its own process so its
threads never hold the measuring test's interpreter lock:

    python3 flooder.py SPEC_JSON

SPEC_JSON: {"port", "seconds", "connections", "requests": [{method, path, body?, headers?}]}.
Each connection thread sends the requests in turn (a new TCP connection each time, as the
control listener closes it after one answer) until the time is up, and prints one JSON
line: {"statuses": {status: count}, "retryAfter": [values seen on 503s], "reasons": [...]}.
After a 503 a thread pauses 50 ms (a flood that ignores Retry-After, without burning the
CPU the server needs on a small test machine)."""
import collections
import http.client
import json
import sys
import threading
import time


def main():
    spec = json.loads(sys.argv[1])
    deadline = time.monotonic() + spec["seconds"]
    statuses = collections.Counter()
    retry_after, reasons = set(), set()
    lock = threading.Lock()

    def run(i):
        reqs = spec["requests"]
        k = i
        while time.monotonic() < deadline:
            rq = reqs[k % len(reqs)]
            k += 1
            body = json.dumps(rq["body"]).encode() if "body" in rq else None
            hdrs = dict(rq.get("headers") or {})
            if body is not None:
                hdrs.setdefault("Content-Type", "application/json")
            try:
                c = http.client.HTTPConnection("127.0.0.1", spec["port"], timeout=60)
                c.request(rq["method"], rq["path"], body=body, headers=hdrs)
                r = c.getresponse()
                data = r.read()
                c.close()
            except OSError as e:
                with lock:
                    statuses["error:" + type(e).__name__] += 1
                time.sleep(0.05)
                continue
            with lock:
                statuses[str(r.status)] += 1
                if r.status == 503:
                    retry_after.add(r.getheader("Retry-After"))
                    try:
                        reasons.add(json.loads(data)["details"]["reason"])
                    except (ValueError, KeyError, TypeError):
                        reasons.add(None)
            if r.status == 503:
                time.sleep(0.05)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(spec["connections"])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"statuses": statuses, "retryAfter": sorted(x or "" for x in retry_after),
                      "reasons": sorted(x or "" for x in reasons)}))


if __name__ == "__main__":
    main()
