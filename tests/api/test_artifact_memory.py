"""The runtime's artifacts in memory (docs/RUNTIME.md, "Artifacts in memory"): once a
version serves, the loader moves its artifact onto huge pages, a step at a time, while
queries go on; the answers stay byte for byte the same, the log says what happened, and
the process's memory map shows the huge pages where the kernel took the advice.
"""
import errno
import json
import os
import platform
import re
import time

from conftest import wait_until

ND = {"Content-Type": "application/x-ndjson"}
QUERIES = ["se", "settled place 01", "settled place 3999", "setled plcae 2", "place 12345",
           "settled place 39999 in a list", "xyz"]


def answers(server, pk):
    out = []
    for q in QUERIES:
        r = server.runtime("GET", "/v1/query", params={"key": pk, "q": q})
        assert r.status == 200, r
        out.append(r.json()["items"])
    return out


def huge_kb(pid):
    with open(f"/proc/{pid}/smaps_rollup") as f:
        m = re.search(r"^ShmemPmdMapped:\s+(\d+) kB", f.read(), re.M)
    return int(m.group(1)) if m else 0


def test_a_served_artifact_moves_onto_huge_pages_and_answers_the_same(server, tenant):
    lst = tenant.create_list("Settled", visibility="public")
    items = [{"value": f"settled place {i:05d} in a list long enough for huge pages "
                       f"{i * 7919 % 100000}"} for i in range(40000)]
    body = "".join(json.dumps(it) + "\n" for it in items).encode()
    r = tenant.api("POST", f"/lists/{lst['id']}/items/import?mode=append", raw=body, headers=ND)
    assert r.status == 200, r
    log_from = len(server.read_log())
    v = tenant.publish(lst["id"], timeout=120)
    assert v["state"] == "active", v
    pk = tenant.publishable_key(lst["id"])["publishableKey"]
    assert server.serves(pk, v["contentHash"], timeout=30)
    first = answers(server, pk)  # while the loader may still be moving it

    said = {}

    def logged():
        for line in server.read_log(log_from).splitlines():
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("msg") in ("artifact on huge pages", "artifact left partly on small pages") \
                    and e.get("hash") == v["contentHash"]:
                said.update(e)
                return True
            if str(e.get("msg", "")).startswith("artifacts stay on small pages"):
                said.update(e)
                return True
        return False

    assert wait_until(logged, timeout=60), server.read_log(log_from)[-2000:]
    assert answers(server, pk) == first
    if said["msg"] == "artifact on huge pages":
        assert said["bytes"] > 4 << 20, said
        # Every whole 2 MiB of the artifact is mapped by a huge page now.
        assert huge_kb(server.proc.pid) >= (said["bytes"] >> 21) * 2048, huge_kb(server.proc.pid)
    elif said["msg"] == "artifact left partly on small pages":
        # Only a passing shortage may leave steps out (no huge page free just then).
        assert said["error"] in (os.strerror(errno.EAGAIN), os.strerror(errno.EBUSY),
                                 os.strerror(errno.ENOMEM)), said
        assert said["failedSteps"] >= 1, said
    else:
        # A kernel without MADV_COLLAPSE (before 6.1) serves from small pages, as before.
        release = tuple(int(x) for x in re.findall(r"\d+", platform.release())[:2])
        assert release < (6, 1), (platform.release(), said)
    time.sleep(0.2)
    assert server.proc.poll() is None
