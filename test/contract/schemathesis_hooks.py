"""Hooks of the test command's schema fuzzer (test/contract/schemathesis.test.ts), loaded through SCHEMATHESIS_HOOKS.

They touch only cases the fuzzer means to be valid (a case meant to be invalid is sent as it was made), and only
where validity depends on state or on a relation between two values that a JSON Schema cannot state; what the
document states is left to the fuzzer. Each rule is the server's own, and each names the client behaviour it mirrors.
"""

import json
import os
import time
import uuid
from datetime import datetime, timedelta, timezone

import requests
import schemathesis
from schemathesis.generation.modes import GenerationMode

# Loopback is allowed by the test command's outbound guard (OUTBOUND_ALLOW_PRIVATE_CIDRS); fuzz-seed.ts's FUZZ_HOOK_URL.
HOOK_URL = "https://127.0.0.1/fuzz/hook"

# Operations whose time window (from < to, at most a bounded span) is checked by the server: `to` moves to one hour
# after the generated `from`, so the generated `from` is still what is sent.
WINDOW_IN_QUERY = {("GET", "/v1/tenants/current/audit-log"), ("GET", "/v1/tenants/current/usage-summary")}
WINDOW_IN_BODY = {("POST", "/v1/tenants/current/audit-log/exports"), ("POST", "/v1/tenants/current/audit-log/verifications")}
WEBHOOK_URL_IN_BODY = {("POST", "/v1/webhook-endpoints"), ("PATCH", "/v1/webhook-endpoints/{endpointId}")}
# Feature names are unique within each list (the document says so; JSON Schema cannot state uniqueness by a property).
FEATURE_LISTS_IN_BODY = {("POST", "/v1/embodiment-profiles"), ("PATCH", "/v1/embodiment-profiles/{profileId}")}
# Expiries the server wants in the future (and, for a token, within its longest lifetime): one day from now.
EXPIRY_IN_BODY = {
    ("POST", "/v1/api-keys"),
    ("POST", "/v1/projects/{projectId}/members"),
    ("PATCH", "/v1/projects/{projectId}/members/{userId}"),
}
USAGE_SUMMARY = ("GET", "/v1/tenants/current/usage-summary")
USAGE_METER = "edge_package.builds"
SELF_SERVICE_RESET = ("POST", "/v1/password-resets")
ADMIN_RESET = ("POST", "/v1/users/{userId}/password-reset-requests")
CHANGE_PASSWORD = ("PATCH", "/v1/users/me/password")
CONFIRM_RESET = ("POST", "/v1/password-resets/confirmations")
SWITCH_MEMBERSHIP = ("POST", "/v1/sessions/current-membership-switches")
UPLOAD_OBJECT = ("PUT", "/v1/model-versions/{modelVersionId}/object-content")
UPLOAD_URLS = ("POST", "/v1/model-versions/{modelVersionId}/upload-urls")
VALIDATE = ("POST", "/v1/model-versions/{modelVersionId}/validations")
SIGN_IN = ("POST", "/v1/sessions")
OFFBOARDING = ("POST", "/v1/tenants/current/offboarding")
CHANGE_PROJECT_MEMBER = ("PATCH", "/v1/projects/{projectId}/members/{userId}")
STORAGE_BUCKET = ("PUT", "/v1/tenants/current/storage-bucket")
# Where a new password is chosen. The server estimates its strength (zxcvbn), which no JSON Schema can state: a valid
# case gets a passphrase it takes, where a generated one is mostly "too easy to guess".
NEW_PASSWORD_IN_BODY = {
    ("PATCH", "/v1/users/me/password"): "newPassword",
    ("POST", "/v1/password-resets/confirmations"): "newPassword",
    ("POST", "/v1/users"): "password",
    ("POST", "/v1/registration-invitations/completions"): "password",
    ("POST", "/v1/tenant-invitations/acceptance-records"): "password",
}
ADD_PROJECT_MEMBER = ("POST", "/v1/projects/{projectId}/members")

# What the seed knows of the fuzzer's own tenant (fuzz-seed.ts, schemathesis.test.ts): the owner's password and own
# membership, the seeded project, a member in no project, members to ask reset mails for and grants already mailed to
# others, a draft version for uploads, and the API's address and the pass's credential headers for the reads a client
# makes first (an ETag). State the fuzzer's tenant has without spending its own credential.
SEED = json.loads(os.environ.get("RCP_FUZZ_HOOK_SEED", "{}"))
# The pass's own credential (its --header lines), for the reads and undos the hooks make themselves.
_HEADERS = dict(h.split(": ", 1) for h in SEED.get("headers", []))
# The owner's password as it stands: a valid change moves it, and the next valid change proves the new one.
_password = {"current": SEED.get("password")}
# Members an administrator may ask a reset mail for; each address takes one a minute, so a valid case names the next
# one once the last was taken.
_reset_targets = {"ids": SEED.get("resetTargetIds", []), "next": 0}
# Reset grants the seed had mailed to other members and read from the mail catcher; a confirmation spends one.
# Draft versions with their object stored, one a validation: a validated version is validated no more.
_validations = {"ids": SEED.get("validationVersionIds", []), "next": 0}
# Spread over the run: one a scenario (each scenario of the operation needs one served valid case; spent in a row,
# the later phases and schemathesis's later cycles would find none left). A scenario of one operation takes well under
# GRANT_SECONDS, and the next one comes in another phase or cycle, later.
_reset_grants = {"grants": SEED.get("resetGrants", []), "next": 0, "spent_in": None, "spent_at": 0.0}
GRANT_SECONDS = 5


def _is_valid_case(case):
    meta = case.meta
    return meta is not None and meta.generation.mode == GenerationMode.POSITIVE


def _phase(case):
    return str(case.meta.phase.name) if case.meta is not None else None


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


def _unique_names(features):
    """Suffixes a repeated name with its index, within the name's pattern (128 characters of [A-Za-z0-9_./-])."""
    if not isinstance(features, list):
        return
    seen = set()
    for i, feature in enumerate(features):
        if not isinstance(feature, dict) or not isinstance(feature.get("name"), str):
            continue
        name = feature["name"]
        if name in seen:
            suffix = f"-{i}"
            name = name[: 128 - len(suffix)] + suffix
            feature["name"] = name
        seen.add(name)


def _expires_tomorrow(body):
    if isinstance(body, dict) and isinstance(body.get("expiresAt"), str):
        body["expiresAt"] = (datetime.now(timezone.utc) + timedelta(days=1)).isoformat().replace("+00:00", "Z")


def _current_etag(case):
    """The ETag a read of the same resource answers now, as a client reads it before a conditional change; None when
    the read does not answer one."""
    base = SEED.get("base")
    if not base:
        return None
    try:
        read = requests.get(base + case.formatted_path, headers=_HEADERS, timeout=5)
    except requests.RequestException:
        return None
    return read.headers.get("etag") if read.status_code == 200 else None


def _fix_usage_scope(query):
    """Each scope with the one filter it takes: projectId (the seeded project) for project, a meter for meter."""
    if not isinstance(query, dict) or query.get("scope", "tenant") not in ("tenant", "project", "meter"):
        return
    query.pop("projectId", None)
    query.pop("meter", None)
    scope = query.get("scope", "tenant")
    if scope == "project" and SEED.get("projectId"):
        query["projectId"] = SEED["projectId"]
    if scope == "meter":
        query["meter"] = USAGE_METER
    group = query.get("groupBy")
    if group is not None and not (isinstance(group, str) and group in ("project", "day", "project,day")):
        query["groupBy"] = "day"


# RCP_FUZZ_HOOK_LOG=<file>: each valid case's answer, a line each (operation, status, the start of the body), to read why
# an operation's valid cases were refused.
_LOG = os.environ.get("RCP_FUZZ_HOOK_LOG")


@schemathesis.hook
def after_call(context, case, response):
    operation = (case.method.upper(), case.path)
    if _LOG and _is_valid_case(case):
        with open(_LOG, "a") as log:
            log.write(f"{operation[0]} {operation[1]} {response.status_code} {_phase(case)} {case.query!r} {response.text[:300]!r}\n")
    # Offboarding (a fresh session may ask for it) stops the tenant's new work until it is cancelled: the rest of the
    # run would meet 409 TENANT_OFFBOARDING. Cancelled at once, as its owner can, so only this request saw it.
    if operation == OFFBOARDING and response.status_code == 201 and SEED.get("base"):
        requests.delete(SEED["base"] + "/v1/tenants/current/offboarding", headers={**_HEADERS, "Idempotency-Key": str(uuid.uuid4())}, timeout=15)
    # A change the server took moved the password: the next valid change proves the new one.
    if operation == CHANGE_PASSWORD and response.status_code == 200 and isinstance(case.body, dict):
        _password["current"] = case.body.get("newPassword", _password["current"])
    if operation == VALIDATE and response.status_code == 202 and _is_valid_case(case):
        _validations["next"] += 1
    if operation == ADMIN_RESET and response.status_code == 202:
        _reset_targets["next"] += 1
    if operation == CONFIRM_RESET and response.status_code in (200, 201) and _is_valid_case(case):
        _reset_grants["next"] += 1
        _reset_grants["spent_in"] = _phase(case)
        _reset_grants["spent_at"] = time.monotonic()


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
    if operation in FEATURE_LISTS_IN_BODY and isinstance(case.body, dict):
        _unique_names(case.body.get("observationFeatures"))
        _unique_names(case.body.get("actionFeatures"))
    if operation in EXPIRY_IN_BODY:
        _expires_tomorrow(case.body)
    # A password change proves the current password, which only the account's owner knows: the seed does.
    if operation == CHANGE_PASSWORD and isinstance(case.body, dict) and _password["current"]:
        case.body["currentPassword"] = _password["current"]
    # A project member is a member of the tenant not yet in the project: the seed made one.
    if operation == ADD_PROJECT_MEMBER and isinstance(case.body, dict) and SEED.get("nonMemberUserId"):
        case.body["userId"] = SEED["nonMemberUserId"]
    # The same scope rules as the server's: the parameters are separate in the document, so it cannot tie them.
    if operation == USAGE_SUMMARY:
        _fix_usage_scope(case.query)
    # One reset mail a minute per address: each valid request names an address of its own (unknown addresses get the
    # same 202, so nothing else changes).
    if operation == SELF_SERVICE_RESET and isinstance(case.body, dict) and "email" in case.body:
        case.body["email"] = f"fuzz-reset-{uuid.uuid4().hex[:12]}@example.test"
    if operation == ADMIN_RESET and _reset_targets["ids"] and case.path_parameters is not None:
        ids = _reset_targets["ids"]
        case.path_parameters["userId"] = ids[_reset_targets["next"] % len(ids)]
    # If-Match names the version the change was made from: a client reads it first. A generated tag is almost never
    # the current one, so every valid conditional change met 412 instead of the operation.
    if case.headers and case.method.upper() in ("PATCH", "PUT", "DELETE"):
        for name in list(case.headers):
            if name.lower() == "if-match":
                etag = _current_etag(case)
                if etag is not None:
                    case.headers[name] = etag
    # A reset is confirmed with what the mail said (the link's token, or the address and its code): the next unspent
    # grant's, in the variant the case was made in, when one is due; none left, as made.
    grants = _reset_grants["grants"]
    due = _reset_grants["spent_in"] != _phase(case) or time.monotonic() - _reset_grants["spent_at"] > GRANT_SECONDS
    if operation == CONFIRM_RESET and isinstance(case.body, dict) and due and _reset_grants["next"] < len(grants):
        grant = grants[_reset_grants["next"]]
        if "token" in case.body:
            case.body["token"] = grant["token"]
        elif "code" in case.body:
            case.body["email"] = grant["email"]
            case.body["code"] = grant["code"]
    # A page token is one the server issued for the same list: a made-up one is never valid (its MAC cannot match), so
    # a valid case asks for the first page, as a client does before it holds a token.
    if isinstance(case.query, dict) and "pageToken" in case.query:
        del case.query["pageToken"]
    # A switch names one of the caller's memberships; the fuzzer's account has one (a second tenant would take the
    # session out of the seeded one), so a valid switch names it.
    if operation == SWITCH_MEMBERSHIP and isinstance(case.body, dict) and SEED.get("ownMembershipId"):
        case.body["membershipId"] = SEED["ownMembershipId"]
    # An upload names one of the version's objects, of a version still in draft: the seed made one that only uploads
    # (and their presigned URLs) name (a validation, which the fuzzer also runs, ends a version's uploads).
    if operation == UPLOAD_OBJECT and isinstance(case.query, dict) and SEED.get("modelObjectKey"):
        case.query["key"] = SEED["modelObjectKey"]
        if SEED.get("uploadVersionId") and case.path_parameters is not None:
            case.path_parameters["modelVersionId"] = SEED["uploadVersionId"]
    if operation == UPLOAD_URLS and SEED.get("uploadVersionId") and case.path_parameters is not None:
        case.path_parameters["modelVersionId"] = SEED["uploadVersionId"]
    # A project role is refused below what the member's tenant role already gives: the seeded project member is a
    # researcher, for whom reader is below.
    if operation == CHANGE_PROJECT_MEMBER and isinstance(case.body, dict) and case.body.get("role") == "reader":
        case.body["role"] = "contributor"
    # The storage region is one this deployment offers: the test command's is `local`.
    if operation == STORAGE_BUCKET and isinstance(case.body, dict) and "regionId" in case.body:
        case.body["regionId"] = SEED.get("regionId", "local")
    field = NEW_PASSWORD_IN_BODY.get(operation)
    if field and isinstance(case.body, dict) and field in case.body:
        # Longer than the longest minimum a tenant's policy may set (64), which the fuzzer also sets.
        case.body[field] = f"fuzz {uuid.uuid4().hex} passphrase {uuid.uuid4().hex}"
    # A project a body names is a project of this tenant, not archived, which no generated id is; and the fuzzer
    # archives the seeded one sooner or later (its id is in list responses). Where naming one is optional, a valid case
    # leaves it out (tenant-wide); a legal hold's project scope names the seeded one.
    if isinstance(case.body, dict) and SEED.get("projectId"):
        if isinstance(case.body.get("projectId"), str):
            del case.body["projectId"]
        scope = case.body.get("scope")
        if isinstance(scope, dict) and isinstance(scope.get("projectId"), str):
            scope["projectId"] = SEED["projectId"]
    if operation == VALIDATE and _validations["next"] < len(_validations["ids"]) and case.path_parameters is not None:
        case.path_parameters["modelVersionId"] = _validations["ids"][_validations["next"]]
    # A password sign-in names an account and its password: the fuzzer's own, as it stands (a new session; the pass's
    # own is untouched).
    if operation == SIGN_IN and isinstance(case.body, dict) and "password" in case.body and SEED.get("email") and _password["current"]:
        case.body["email"] = SEED["email"]
        case.body["password"] = _password["current"]
