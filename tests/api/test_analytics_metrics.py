"""Metrics of search analytics (docs/OBSERVABILITY.md): what the runtime counted into
shipments, the shipments the state took, lost or holds, and what the control plane's
drain stored, all on one `serve` process's --metrics-listen."""
import uuid

from conftest import wait_until
from test_analytics import TODAY, analytics, day, query, select, setup_list
from test_observability import start_with_metrics


def test_counted_shipped_and_drained(make_server):
    s, m = start_with_metrics(make_server)
    assert m.value("suggestd_analytics_enabled") == 1
    t, lst, pk, ids = setup_list(s)  # one served query ("par") on the way
    for q in ["par", "lyon", "zzz", "porto"]:
        assert query(s, pk, q).status == 200
    for q, item in [("par", "Paris"), ("lyon", "Lyon"), (None, "Porto")]:
        assert select(s, pk, lst, ids[item], 1, q=q).status == 200
    # A duplicate report and an unknown item are not counted.
    sid = str(uuid.uuid4())
    assert select(s, pk, lst, ids["Lille"], 2, q="lille", sid=sid).status == 200
    assert select(s, pk, lst, ids["Lille"], 2, q="lille", sid=sid).status == 200
    assert select(s, pk, lst, "itm_invented", 1, q="par").status == 400

    def settled():
        a = analytics(t, lst, day(TODAY), day(TODAY)).json()
        rows = m.value("suggestd_analytics_shipped_rows_total")
        return (a["queries"] == 5 and a["selections"] == 4 and
                m.value("suggestd_analytics_drained_rows_total") == rows)
    assert wait_until(settled, timeout=20, interval=0.5), m.scrape()[0]
    assert m.value("suggestd_analytics_counted_total", what="queries") == 5
    assert m.value("suggestd_analytics_counted_total", what="selections") == 4
    assert m.value("suggestd_analytics_shipments_total", result="shipped") >= 1
    assert m.value("suggestd_analytics_shipments_total", result="dropped") == 0
    assert m.value("suggestd_analytics_dropped_keys_total") == 0
    assert m.value("suggestd_analytics_pending_shipments") == 0
    stored = m.value("suggestd_analytics_drained_shipments_total", result="stored")
    assert stored == m.value("suggestd_analytics_shipments_total", result="shipped")
    assert m.value("suggestd_analytics_drained_shipments_total", result="invalid") == 0
    assert m.value("suggestd_analytics_drained_shipments_total", result="failed") == 0
    _, types = m.scrape()
    assert types["suggestd_analytics_counted_total"] == "counter"
    assert types["suggestd_analytics_pending_shipments"] == "gauge"


def test_analytics_off_reports_nothing_counted(make_server):
    s, m = start_with_metrics(make_server, extra=["--analytics", "off"])
    t, lst, pk, ids = setup_list(s)
    assert query(s, pk, "lyon").status == 200
    assert m.value("suggestd_analytics_enabled") == 0
    assert m.value("suggestd_analytics_counted_total", what="queries") == 0
