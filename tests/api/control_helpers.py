"""Shared assertions for the control-plane black-box tests (tests/api/test_control_*.py)."""
import re

ERROR_KEYS = {"code", "message", "requestId", "details", "docsUrl", "remediation"}


def assert_error(r, status, code, reason=None, field=None):
    """Asserts r is a control-plane error with the full body shape; returns the body."""
    assert r.status == status, r
    assert r.header("content-type") is None or "json" in r.header("content-type"), r
    b = r.json()
    assert set(b) == ERROR_KEYS, b
    assert b["code"] == code, b
    assert isinstance(b["message"], str) and b["message"], b
    assert isinstance(b["requestId"], str) and b["requestId"], b
    assert b["requestId"] == r.header("x-request-id"), (b, r.headers)
    assert isinstance(b["details"], dict), b
    assert isinstance(b["docsUrl"], str) and b["docsUrl"], b
    assert isinstance(b["remediation"], str) and b["remediation"], b
    if reason is not None:
        assert b["details"].get("reason") == reason, b
    if field is not None:
        paths = [f["path"] for f in b["details"].get("fields", [])]
        assert field in paths, b
        for f in b["details"]["fields"]:
            assert set(f) == {"path", "reason"} and isinstance(f["reason"], str), f
    return b


def fields_of(r):
    return {f["path"]: f["reason"] for f in r.json()["details"].get("fields", [])}


ETAG_RE = re.compile(r'^(W/)?"[^"]+"$')


def assert_etag(r):
    tag = r.header("etag")
    assert tag and ETAG_RE.match(tag), r.headers
    return tag
