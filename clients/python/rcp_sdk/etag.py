"""Optimistic concurrency: a read hands back the resource's ETag ("v<version>"), a change sends it as If-Match and is
refused with 412 PRECONDITION_FAILED when someone changed the resource in between."""

from __future__ import annotations

from typing import Any

from .client import RcpClient


def read(client: RcpClient, path: str, **kw: Any) -> tuple[Any, str]:
    """GET a resource with its ETag: (data, etag). A GET without one raises: a helper that sends nothing would silently
    skip the check."""
    answer = client.get(path, **kw)
    if not answer.etag:
        raise TypeError(f'{path} answered without an ETag')
    return answer.data, answer.etag


def if_match(etag: str) -> dict[str, str]:
    """The header a conditional change sends."""
    return {'If-Match': etag}
