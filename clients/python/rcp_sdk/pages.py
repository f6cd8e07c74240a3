"""Every list of the API is keyset pages: {"data": [...], "nextPageToken"?}. items() walks one to its end, asking for
the next page only when the caller has taken the current one, with the same filters (the token is bound to them)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .client import RcpClient
from .operations_gen import LIST_PATHS


def items(
    client: RcpClient,
    path: str,
    *,
    params: Mapping[str, object] | None = None,
    query: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
) -> Iterator[dict[str, Any]]:
    """Each item of a list, page after page, following nextPageToken until a page has none."""
    if path not in LIST_PATHS:
        raise ValueError(f'{path} is not a list operation of the API')
    base = {k: v for k, v in (query or {}).items() if k != 'pageToken'}
    token: str | None = None
    while True:
        page = client.get(path, params=params, query={**base, **({'pageToken': token} if token else {})}, headers=headers).data
        yield from page['data']
        token = page.get('nextPageToken')
        if not token:
            return
