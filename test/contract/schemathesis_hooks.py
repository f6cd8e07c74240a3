"""Hooks of the test command's schema fuzzer (test/contract/schemathesis.test.ts), loaded through SCHEMATHESIS_HOOKS.

They touch only cases the fuzzer means to be valid (a case meant to be invalid is sent as it was made), and only
where validity depends on state or on a relation between two values that a JSON Schema cannot state; what the
document states is left to the fuzzer. Each rule is the server's own, and each names the client behaviour it mirrors.
"""

import uuid
from datetime import datetime, timedelta

import schemathesis
from schemathesis.generation.modes import GenerationMode

# Loopback is allowed by the test command's outbound guard (OUTBOUND_ALLOW_PRIVATE_CIDRS); fuzz-seed.ts's FUZZ_HOOK_URL.
HOOK_URL = "https://127.0.0.1/fuzz/hook"

# Operations whose time window (from < to, at most a bounded span) is checked by the server: `to` moves to one hour
# after the generated `from`, so the generated `from` is still what is sent.
WINDOW_IN_QUERY = {("GET", "/v1/tenants/current/audit-log"), ("GET", "/v1/tenants/current/usage-summary")}
WINDOW_IN_BODY = {("POST", "/v1/tenants/current/audit-log/exports"), ("POST", "/v1/tenants/current/audit-log/verifications")}
WEBHOOK_URL_IN_BODY = {("POST", "/v1/webhook-endpoints"), ("PATCH", "/v1/webhook-endpoints/{endpointId}")}


def _is_valid_case(case):
    meta = case.meta
    return meta is not None and meta.generation.mode == GenerationMode.POSITIVE


def _one_hour_later(value):
    """RFC 3339 `from` + 1 hour; None where Python cannot read or shift it (the case is then sent as made)."""
    if not isinstance(value, str):
        return None
    try:
        start = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
        return (start + timedelta(hours=1)).isoformat().replace("+00:00", "Z")
    except (ValueError, OverflowError):
        return None


def _fix_window(container):
    if isinstance(container, dict) and "from" in container and "to" in container:
        later = _one_hour_later(container["from"])
        if later is not None:
            container["to"] = later


@schemathesis.hook
def before_call(context, case, kwargs):
    if not _is_valid_case(case):
        return
    operation = (case.method.upper(), case.path)
    # An Idempotency-Key names an operation's first answer for 24 hours: the same key with another body is 409
    # IDEMPOTENCY_CONFLICT. The fuzzer draws keys from a small space and reuses them, so after the first case every
    # valid one met a conflict instead of the operation; a client (the SDKs send a UUIDv4) makes one per request.
    if case.headers:
        for name in list(case.headers):
            if name.lower() == "idempotency-key":
                case.headers[name] = str(uuid.uuid4())
    # A webhook URL's host must resolve, and no host name the fuzzer makes up does.
    if operation in WEBHOOK_URL_IN_BODY and isinstance(case.body, dict) and "url" in case.body:
        case.body["url"] = HOOK_URL
    if operation in WINDOW_IN_QUERY:
        _fix_window(case.query)
    if operation in WINDOW_IN_BODY:
        _fix_window(case.body)
