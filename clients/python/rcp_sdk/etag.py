"""Optimistic concurrency: a read hands back the resource's ETag ("v<version>"), a change sends it as If-Match and is
refused with 412 PRECONDITION_FAILED when someone changed the resource in between."""

from __future__ import annotations

from typing import Any

from typing_extensions import Unpack

from .async_client import AsyncRcpClient
from .client import Answer, Call, RcpClient


def _with_etag(path: str, answer: Answer) -> tuple[Any, str]:
    # A GET without one raises: a helper that sends nothing would silently skip the check.
    if not answer.etag:
        raise TypeError(f'{path} answered without an ETag')
    return answer.data, answer.etag


def read(client: RcpClient, path: str, **call: Unpack[Call]) -> tuple[Any, str]:
    """GET a resource with its ETag: (data, etag)."""
    return _with_etag(path, client.get(path, **call))


async def aread(client: AsyncRcpClient, path: str, **call: Unpack[Call]) -> tuple[Any, str]:
    """read() for the async client."""
    return _with_etag(path, await client.get(path, **call))


def if_match(etag: str) -> dict[str, str]:
    """The header a conditional change sends."""
    return {'If-Match': etag}
