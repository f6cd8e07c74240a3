"""An edge inference package, downloaded and checked with nothing but the API's public signing keys: the archive's
size and SHA-256 as the API states them, every file against SHA256SUMS (which lists every file but itself), and the
provenance's DSSE envelope (Ed25519 over the pre-authentication encoding) whose in-toto subjects name the same
digests. The archive is read as a stream of tar members, never extracted, so a hostile entry name writes nothing."""

from __future__ import annotations

import base64
import hashlib
import json
import tarfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from .client import RcpClient

SUMS = 'SHA256SUMS'
PROVENANCE = 'provenance.intoto.jsonl'
_CHUNK = 1 << 20


class PackageVerificationError(Exception):
    """The package is not what its signer built: the message says which check failed."""


@dataclass(frozen=True)
class VerifiedPackage:
    path: Path
    key_id: str
    files: dict[str, str]
    """Every file of the archive by its path, with its SHA-256."""
    statement: dict[str, Any]
    """The signed in-toto statement (its SLSA predicate names the build's parameters and model objects)."""


def signing_keys(client: RcpClient) -> list[dict[str, Any]]:
    """The published public keys (no credentials needed): [{keyId, publicKeyPem, ...}]."""
    data: list[dict[str, Any]] = client.get('/v1/edge-inference-packages/signing-keys').data['data']
    return data


def _pae(payload_type: str, body: bytes) -> bytes:
    kind = payload_type.encode('utf-8')
    return b'DSSEv1 %d %s %d ' % (len(kind), kind, len(body)) + body


def verify_package(archive: str | Path, keys: Sequence[dict[str, Any]]) -> VerifiedPackage:
    """Every check of the module docstring, on a downloaded archive; PackageVerificationError names the first that fails."""
    digests: dict[str, str] = {}
    small: dict[str, bytes] = {}
    try:
        with tarfile.open(archive, mode='r|gz') as tar:
            for member in tar:
                if not member.isfile():
                    continue
                name = member.name.removeprefix('./')
                if name in digests:
                    raise PackageVerificationError(f'{name} is in the archive twice')
                stream = tar.extractfile(member)
                assert stream is not None
                h = hashlib.sha256()
                keep = name in (SUMS, PROVENANCE)
                kept = bytearray()
                while chunk := stream.read(_CHUNK):
                    h.update(chunk)
                    if keep:
                        kept += chunk
                digests[name] = h.hexdigest()
                if keep:
                    small[name] = bytes(kept)
    except (tarfile.TarError, OSError, EOFError) as e:
        raise PackageVerificationError(f'not a readable .tar.gz: {e}') from e
    for required in (SUMS, PROVENANCE):
        if required not in small:
            raise PackageVerificationError(f'{required} is missing')

    listed: dict[str, str] = {}
    for line in small[SUMS].decode('utf-8').splitlines():
        digest, sep, name = line.partition('  ')
        if not sep or len(digest) != 64:
            raise PackageVerificationError(f'{SUMS} has a malformed line: {line!r}')
        listed[name] = digest
    others = {n: d for n, d in digests.items() if n != SUMS}
    if sorted(listed) != sorted(others):
        raise PackageVerificationError(f'{SUMS} does not list exactly the files of the archive')
    for name, digest in listed.items():
        if others[name] != digest:
            raise PackageVerificationError(f'{name} does not match its SHA-256 in {SUMS}')

    try:
        envelope = json.loads(small[PROVENANCE])
        payload = base64.b64decode(envelope['payload'], validate=True)
        payload_type = str(envelope['payloadType'])
        signatures = list(envelope['signatures'])
    except (ValueError, KeyError, TypeError) as e:
        raise PackageVerificationError(f'{PROVENANCE} is not a DSSE envelope: {e}') from e
    by_id = {k['keyId']: k for k in keys}
    verified_by: str | None = None
    for signature in signatures:
        key = by_id.get(signature.get('keyid'))
        if key is None:
            continue
        public = load_pem_public_key(key['publicKeyPem'].encode('ascii'))
        if not isinstance(public, Ed25519PublicKey):
            raise PackageVerificationError(f'key {key["keyId"]} is not an Ed25519 key')
        try:
            public.verify(base64.b64decode(signature['sig']), _pae(payload_type, payload))
        except (InvalidSignature, ValueError):
            continue
        verified_by = key['keyId']
        break
    if verified_by is None:
        raise PackageVerificationError('no signature verifies with a published key')

    statement = json.loads(payload)
    for subject in statement.get('subject', []):
        if digests.get(subject['name']) != subject['digest']['sha256']:
            raise PackageVerificationError(f'the signed statement names {subject["name"]} with another SHA-256')
    return VerifiedPackage(Path(archive), verified_by, digests, statement)


def download_package(
    client: RcpClient,
    package_id: str,
    dest: str | Path,
    *,
    progress: Callable[[int, int], object] | None = None,
    attempts: int = 5,
) -> VerifiedPackage:
    """Download a ready package to ``dest`` and verify it (verify_package). A connection lost half way resumes with a
    ranged GET of the same presigned URL, keeping the bytes already written; ``progress(received, total)`` is called
    per chunk."""
    pkg = client.get('/v1/edge-inference-packages/{packageId}', params={'packageId': package_id}).data['data']
    artifact = pkg.get('artifact')
    if pkg.get('status') != 'ready' or not artifact:
        raise PackageVerificationError(f'package {package_id} is {pkg.get("status")}, not ready')
    total = int(artifact['sizeBytes'])
    path = Path(dest)
    path.write_bytes(b'')
    received = 0
    # The presigned URL carries its own authority: the client's credentials are never sent to storage.
    with httpx.Client(timeout=httpx.Timeout(30.0, read=120.0)) as http:
        for attempt in range(attempts):
            try:
                headers = {'Range': f'bytes={received}-'} if received else {}
                with http.stream('GET', artifact['downloadUrl'], headers=headers) as response, path.open('ab') as out:
                    if response.status_code not in (200, 206) or (received and response.status_code != 206):
                        raise PackageVerificationError(f'storage answered {response.status_code}')
                    for chunk in response.iter_bytes(_CHUNK):
                        out.write(chunk)
                        received += len(chunk)
                        if progress:
                            progress(received, total)
                break
            except httpx.TransportError:
                if attempt == attempts - 1:
                    raise
    h = hashlib.sha256()
    with path.open('rb') as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    if received != total or h.hexdigest() != artifact['sha256']:
        raise PackageVerificationError('the archive is not the size and SHA-256 the API states')
    return verify_package(path, signing_keys(client))
