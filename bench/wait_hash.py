"""Waits until a runtime's bootstrap answers a given activeVersionHash (bench/load.sh).

    python3 bench/wait_hash.py PORT KEY HASH [LIMIT_SECONDS]

Polls GET /v1/bootstrap every 5 ms over one keep-alive connection (opened again whenever
the runtime is not up yet or drops it), so the wait costs the machine far less than a
curl and a jq started per poll, which on two cores took CPU from the activation being
timed. Exits 0 once the hash is served, 1 after LIMIT_SECONDS (default 120).
"""
import http.client
import json
import sys
import time


def main():
    port, key, want = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    limit = float(sys.argv[4]) if len(sys.argv) > 4 else 120.0
    end = time.monotonic() + limit
    conn = None
    while time.monotonic() < end:
        try:
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", f"/v1/bootstrap?key={key}")
            r = conn.getresponse()
            body = r.read()
            if r.status == 200 and json.loads(body).get("activeVersionHash") == want:
                return 0
        except (OSError, http.client.HTTPException, ValueError):
            if conn is not None:
                conn.close()
            conn = None
        time.sleep(0.005)
    return 1


if __name__ == "__main__":
    sys.exit(main())
