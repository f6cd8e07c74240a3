"""A model version's checkpoint, uploaded the way the API takes it: one presigned PUT per object of the draft version
(POST .../upload-urls), each valid for 15 minutes and sent without credentials. The bytes are streamed from disk in
parts of ``chunk_size`` (never read whole), with ``progress`` called after each part. Storage takes one object as one
PUT, so a PUT cut off half way is sent again from its start (with a fresh URL when the first has expired)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx

from .client import RcpClient


@dataclass(frozen=True)
class UploadProgress:
    key: str
    """The object this part belongs to."""
    sent: int
    """Bytes of this object sent so far."""
    size: int
    total_sent: int
    """Bytes of every object of the version sent so far."""
    total: int


def _parts(path: Path, chunk_size: int, on_part: Callable[[int], None]) -> Iterator[bytes]:
    with path.open('rb') as f:
        while chunk := f.read(chunk_size):
            yield chunk
            on_part(len(chunk))


def _local_file(key: str, files: Path | Mapping[str, str | Path], count: int) -> Path:
    if isinstance(files, Path):
        if count != 1:
            raise ValueError(f'the version has {count} objects: pass a mapping of object path to file')
        return files
    for name, path in files.items():
        if key == name or key.endswith('/' + name.lstrip('/')):
            return Path(path)
    raise ValueError(f'no file given for the object {key}')


def upload_checkpoint(
    client: RcpClient,
    model_version_id: str,
    files: str | Path | Mapping[str, str | Path],
    *,
    progress: Callable[[UploadProgress], object] | None = None,
    chunk_size: int = 8 << 20,
    attempts: int = 3,
) -> list[str]:
    """PUT each object of a draft model version from a local file: one file for a single checkpoint, or a mapping of
    each object's path (as the version's source names it) to its file. Answers the object keys uploaded; validate the
    version next (POST /v1/model-versions/{modelVersionId}/validations)."""
    given = Path(files) if isinstance(files, (str, Path)) else files

    def urls() -> list[dict[str, str]]:
        answer = client.post('/v1/model-versions/{modelVersionId}/upload-urls', params={'modelVersionId': model_version_id})
        uploads: list[dict[str, str]] = answer.data['data']['uploads']
        return uploads

    uploads = urls()
    plan = [(u['key'], _local_file(u['key'], given, len(uploads))) for u in uploads]
    total = sum(p.stat().st_size for _, p in plan)
    done = 0
    with httpx.Client(timeout=httpx.Timeout(30.0, write=120.0)) as http:
        for index, (key, path) in enumerate(plan):
            size = path.stat().st_size
            for attempt in range(attempts):
                sent = 0

                def on_part(n: int, key: str = key, size: int = size) -> None:
                    nonlocal sent
                    sent += n
                    if progress:
                        progress(UploadProgress(key, sent, size, done + sent, total))

                try:
                    # Content-Length given, so the parts go as one body rather than chunked transfer encoding,
                    # which presigned PUTs refuse.
                    response = http.put(
                        uploads[index]['url'], content=_parts(path, chunk_size, on_part), headers={'Content-Length': str(size)}
                    )
                except httpx.TransportError:
                    if attempt == attempts - 1:
                        raise
                    uploads = urls()
                    continue
                if response.status_code == 403 and attempt < attempts - 1:
                    uploads = urls()  # the URL expired: a fresh one for the same object
                    continue
                response.raise_for_status()
                break
            done += size
    return [key for key, _ in plan]
