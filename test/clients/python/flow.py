"""The Python SDK against the real platform, as a robot engineer would use it (run by test/clients/python-sdk.test.ts,
which starts the API and worker): register, sign in, create a tenant, provision its storage, upload a checkpoint,
build an edge package, download and verify it (and see tampered copies refused), register a webhook endpoint and
verify a test event (and see a tampered body refused); then AsyncRcpClient's calls, pages, ETags and errors against the
same platform. Prints what it made as one JSON line for the test."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
import os
import ssl
import sys
import tarfile
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

from typing_extensions import override

from rcp_sdk import (
    AsyncRcpClient,
    PackageVerificationError,
    RcpClient,
    RcpError,
    SessionJar,
    WebhookVerificationError,
    aitems,
    aread,
    download_package,
    if_match,
    signing_keys,
    upload_checkpoint,
    verify_package,
    verify_webhook,
)

T = TypeVar('T')
URL = os.environ['RCP_URL']
SCRATCH = Path(os.environ['RCP_SCRATCH'])
PASSWORD = os.environ['RCP_PASSWORD']
STATE = {'name': 'observation/state', 'dtype': 'float32', 'shape': [7], 'kind': 'state'}
CAMERA = {'name': 'observation/image', 'dtype': 'uint8', 'shape': [8, 8, 3], 'kind': 'image'}
ACTIONS = {'name': 'actions', 'dtype': 'float32', 'shape': [7], 'kind': 'action'}


def eventually(what: str, probe: Callable[[], T | None], timeout: float = 120.0) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = probe()
        if got is not None:
            return got
        time.sleep(0.5)
    raise TimeoutError(what)


def check(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)


def receiver() -> tuple[str, list[tuple[bytes, dict[str, str]]], ThreadingHTTPServer]:
    """An HTTPS receiver of deliveries on 127.0.0.1 (the test CA's certificate): each raw body and its headers."""
    got: list[tuple[bytes, dict[str, str]]] = []

    class Handler(BaseHTTPRequestHandler):
        @override
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get('content-length') or 0))
            got.append((body, dict(self.headers.items())))
            self.send_response(204)
            self.end_headers()

    server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.environ['RCP_CERT_FILE'], os.environ['RCP_KEY_FILE'])
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f'https://127.0.0.1:{server.server_address[1]}/hook', got, server


def rewrite(archive: Path, dest: Path, change: Callable[[str, bytes], bytes], resum: bool = False) -> Path:
    """A copy of the archive with each file's bytes passed through ``change``; with ``resum``, SHA256SUMS rewritten
    to the changed files' digests (an attacker who can write the archive can write its checksums too)."""
    with tarfile.open(archive, 'r:gz') as src:
        members = [(m, src.extractfile(m).read() if m.isfile() else None) for m in src]  # type: ignore[union-attr]
    swaps: dict[bytes, bytes] = {}
    changed: list[tuple[tarfile.TarInfo, bytes | None]] = []
    for member, data in members:
        if data is not None:
            new = change(member.name.removeprefix('./'), data)
            if new != data:
                swaps[hashlib.sha256(data).hexdigest().encode()] = hashlib.sha256(new).hexdigest().encode()
            data = new
        changed.append((member, data))
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode='w:gz') as dst:
        for member, data in changed:
            if data is not None and resum and member.name.removeprefix('./') == 'SHA256SUMS':
                for old, new in swaps.items():
                    data = data.replace(old, new)
            if data is not None:
                member.size = len(data)
            dst.addfile(member, io.BytesIO(data) if data is not None else None)
    dest.write_bytes(out.getvalue())
    return dest


def main() -> None:
    email = f'pysdk-{uuid.uuid4().hex[:10]}@example.com'

    # Register (a cookie session), then sign in again on a fresh client: the session is what the SDK keeps.
    RcpClient(URL, session=SessionJar()).post('/v1/users', json={'email': email, 'password': PASSWORD})
    session = SessionJar()
    rcp = RcpClient(URL, session=session)
    signed_in = rcp.post('/v1/sessions', json={'email': email, 'password': PASSWORD}).data
    check(signed_in['data']['session']['state'] == 'active' and session.signed_in, 'signed in')
    me = RcpClient(URL, token=session.cookie).get('/v1/users/me').data
    check(me['data']['user']['email'] == email, 'the session token as a bearer')

    # A tenant (its Idempotency-Key added by the SDK), its storage provisioned, then a token for the rest.
    tenant = rcp.post('/v1/tenants', json={'name': 'Python SDK tenant', 'slug': f'pysdk-{uuid.uuid4().hex[:10]}'})
    check(tenant.data['data']['membership']['role'] == 'owner', 'owner of the tenant')
    check(tenant.response.request.headers.get('idempotency-key') is not None, 'the create carried a key')
    rcp.put('/v1/tenants/current/storage-bucket', json={'regionId': 'local'})

    def storage_ready() -> bool | None:
        buckets = rcp.get('/v1/tenants/current/storage-bucket').data['data']
        return True if all(b is None or b['status'] == 'ready' for b in buckets.values()) else None

    eventually('storage ready', storage_ready)
    scopes = ['model:read', 'model:write', 'tenant:read', 'tenant:manage']
    token = rcp.post('/v1/api-keys', json={'name': 'pysdk', 'scopes': scopes}).data['data']['token']
    pat = RcpClient(URL, token=token)

    # A model: profile, version, the checkpoint streamed in parts through its presigned URL, validated.
    body = {'name': 'pysdk arm', 'robotType': 'so100', 'controlRateHz': 30, 'observationFeatures': [CAMERA, STATE], 'actionFeatures': [ACTIONS]}
    profile = pat.post('/v1/embodiment-profiles', json=body).data['data']
    checkpoint = SCRATCH / 'params.bin'
    checkpoint.write_bytes(bytes((i * 7) % 256 for i in range(300_000)))
    source = {
        'kind': 'imported_checkpoint',
        'path': 'checkpoints/pysdk/params.bin',
        'sizeBytes': checkpoint.stat().st_size,
        'sha256': hashlib.sha256(checkpoint.read_bytes()).hexdigest(),
    }
    version = pat.post('/v1/model-versions', json={'name': 'pysdk policy', 'format': 'openpi', 'source': source}).data['data']
    parts: list[int] = []
    upload_checkpoint(pat, version['id'], checkpoint, chunk_size=64 * 1024, progress=lambda p: parts.append(p.total_sent))
    check(parts == [min(64 * 1024 * (i + 1), 300_000) for i in range(5)], f'progress per part: {parts}')
    pat.post('/v1/model-versions/{modelVersionId}/validations', params={'modelVersionId': version['id']})

    def settled(path: str, key: str, value: str) -> Callable[[], dict[str, Any] | None]:
        def probe() -> dict[str, Any] | None:
            data: dict[str, Any] = pat.get(path, params={key: value}).data['data']
            return data if data['status'] in ('ready', 'failed') else None

        return probe

    ready = eventually('model version settled', settled('/v1/model-versions/{modelVersionId}', 'modelVersionId', version['id']))
    check((ready['status'], ready['failureReason']) == ('ready', None), f'model version: {ready}')

    # The package, built by the worker, downloaded and verified against the published keys.
    ordered = pat.post(
        '/v1/model-versions/{modelVersionId}/edge-inference-package',
        params={'modelVersionId': version['id']},
        json={
            'embodimentProfileId': profile['id'],
            'mode': 'remote_ws',
            'remotePolicyHost': '127.0.0.1',
            'remotePolicyPort': 8000,
            'targetArch': 'cpu',
            'wireProtocols': ['openpi-ws'],
            'steps': 4,
            'useFakeTransport': True,
        },
    ).data['data']
    pkg = eventually('package built', settled('/v1/edge-inference-packages/{packageId}', 'packageId', ordered['id']), 180.0)
    check((pkg['status'], pkg['failureReason']) == ('ready', None), f'package: {pkg}')
    received: list[int] = []
    verified = download_package(pat, ordered['id'], SCRATCH / 'pkg.tar.gz', progress=lambda got, total: received.append(got))
    check(received[-1] == pkg['artifact']['sizeBytes'], 'progress reached the size')
    check('SHA256SUMS' in verified.files and 'provenance.intoto.jsonl' in verified.files, 'the package files')
    check(any(name.startswith('model/') for name in verified.files), 'the model is in the package')

    # Tampered copies: a model byte changed (SHA256SUMS disagrees), the same with SHA256SUMS rewritten to match (the
    # signed statement disagrees), the provenance's payload changed and SHA256SUMS rewritten (the signature fails).
    keys = signing_keys(RcpClient(URL))
    refused: dict[str, str] = {}
    model = next(n for n in verified.files if n.startswith('model/'))

    def flip(data: bytes) -> bytes:
        return bytes([data[0] ^ 1]) + data[1:]

    copies: dict[str, tuple[Callable[[str, bytes], bytes], bool]] = {
        'untouched': (lambda name, data: data, True),  # the rewriting alone breaks nothing
        'file': (lambda name, data: flip(data) if name == model else data, False),
        'file and SHA256SUMS': (lambda name, data: flip(data) if name == model else data, True),
        'provenance and SHA256SUMS': (lambda name, data: tamper_payload(data) if name == 'provenance.intoto.jsonl' else data, True),
    }
    for label, (change, resum) in copies.items():
        try:
            verify_package(rewrite(verified.path, SCRATCH / f'tampered-{label.replace(" ", "-")}.tar.gz', change, resum), keys)
            refused[label] = 'accepted'
        except PackageVerificationError as e:
            refused[label] = str(e)

    # A webhook endpoint (the secret is in this answer only) and a test event, verified by standardwebhooks.
    url, got, server = receiver()
    try:
        endpoint = pat.post('/v1/webhook-endpoints', json={'url': url, 'events': ['edge_package.ready']}).data['data']
        pat.post('/v1/webhook-endpoints/{endpointId}/test-events', params={'endpointId': endpoint['endpoint']['id']})
        raw, headers = eventually('the test event delivered', lambda: got[0] if got else None)
        event = verify_webhook(endpoint['secret'], raw, headers)
        check(event['type'] == 'webhook_endpoint.test' and event['tenantId'] == tenant.data['data']['tenant']['id'], f'event: {event}')
        try:
            verify_webhook(endpoint['secret'], raw.replace(b'webhook_endpoint.test', b'webhook_endpoint.tesT'), headers)
            webhook_tampered = 'accepted'
        except WebhookVerificationError:
            webhook_tampered = 'refused'
    finally:
        server.shutdown()

    print(
        json.dumps(
            {
                'email': email,
                'token': token,
                'profileId': profile['id'],
                'packageId': ordered['id'],
                'keyId': verified.key_id,
                'files': len(verified.files),
                'tampered': refused,
                'webhookTampered': webhook_tampered,
                'async': asyncio.run(async_flow(email, token)),
            }
        )
    )


async def async_flow(email: str, token: str) -> dict[str, Any]:
    """The async client on the platform: a cookie session signed in, profiles created concurrently (each with its
    own key), walked a page of one at a time, changed under If-Match and refused with a stale ETag, a typed 404."""
    session = SessionJar()
    async with AsyncRcpClient(URL, session=session) as person:
        await person.post('/v1/sessions', json={'email': email, 'password': PASSWORD})
        me = (await person.get('/v1/users/me')).data['data']['user']['email']
    async with AsyncRcpClient(URL, token=token) as rcp:
        bodies = [
            {'name': f'async arm {i}', 'robotType': 'so100', 'controlRateHz': 30, 'observationFeatures': [STATE], 'actionFeatures': [ACTIONS]}
            for i in range(3)
        ]
        made = await asyncio.gather(*(rcp.post('/v1/embodiment-profiles', json=b) for b in bodies))
        keys = {a.response.request.headers['idempotency-key'] for a in made}
        ids = [a.data['data']['id'] for a in made]
        listed = [p['id'] async for p in aitems(rcp, '/v1/embodiment-profiles', query={'pageSize': 1})]
        params = {'profileId': ids[0]}
        data, etag = await aread(rcp, '/v1/embodiment-profiles/{profileId}', params=params)
        changed = await rcp.patch('/v1/embodiment-profiles/{profileId}', params=params, json={'controlRateHz': 50}, headers=if_match(etag))
        errors: dict[str, list[object]] = {}
        for label, call in {
            'stale': rcp.patch('/v1/embodiment-profiles/{profileId}', params=params, json={'controlRateHz': 40}, headers=if_match(etag)),
            'missing': rcp.get('/v1/model-versions/{modelVersionId}', params={'modelVersionId': str(uuid.uuid4())}),
        }.items():
            try:
                await call
            except RcpError as e:
                errors[label] = [e.status, e.code, bool(e.request_id)]
    return {
        'me': me,
        'keys': len(keys),
        'listedAll': set(ids) <= set(listed) and len(listed) == len(set(listed)),
        'listed': len(listed),
        'etagChanged': data['data']['controlRateHz'] == 30 and changed.etag not in (None, etag),
        'errors': errors,
    }


def tamper_payload(data: bytes) -> bytes:
    envelope = json.loads(data)
    payload = base64.b64decode(envelope['payload'])
    envelope['payload'] = base64.b64encode(payload + b' ').decode()
    return json.dumps(envelope).encode()


if __name__ == '__main__':
    main()
    sys.stdout.flush()
