#!/usr/bin/env python3
"""Server-side latency of a run from the runtime's access log (docs/OBSERVABILITY.md):
reads access lines on stdin and prints {"serverRequests", "serverP50us", "serverP99us"}
over the `durationUs` of those whose route is ROUTE (default /v1/query)."""
import json
import math
import sys

route = sys.argv[1] if len(sys.argv) > 1 else "/v1/query"
d = []
for line in sys.stdin:
    if '"msg":"access"' not in line:
        continue
    try:
        o = json.loads(line)
    except ValueError:
        continue
    if o.get("route") == route and isinstance(o.get("durationUs"), int):
        d.append(o["durationUs"])
d.sort()


def pct(p):
    return d[max(0, math.ceil(p * len(d)) - 1)] if d else None


print(json.dumps({"serverRequests": len(d), "serverP50us": pct(0.5), "serverP99us": pct(0.99)}))
