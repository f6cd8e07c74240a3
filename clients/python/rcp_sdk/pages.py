"""Every list of the API is keyset pages: {"data": [...], "nextPageToken"?}. items() (and aitems() for the async
client) walks one to its end, asking for the next page only when the caller has taken the current one, with the same
filters (the token is bound to them)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from typing_extensions import Unpack

from .async_client import AsyncRcpClient
from .client import Answer, RcpClient, Read
from .operations_gen import LIST_PATHS


class _Walk:
    """One walk's state, the same for both clients: the call for the next page, and what a page answered."""

    def __init__(self, path: str, call: Read) -> None:
        if path not in LIST_PATHS:
            raise ValueError(f'{path} is not a list operation of the API')
        self.call = call
        self.base = {k: v for k, v in (call.get('query') or {}).items() if k != 'pageToken'}
        self.token: str | None = None
        self.done = False

    def next_call(self) -> Read:
        return {**self.call, 'query': {**self.base, **({'pageToken': self.token} if self.token else {})}}

    def page(self, answer: Answer) -> list[dict[str, Any]]:
        """The page's items; the walk ends at a page without nextPageToken."""
        self.token = answer.data.get('nextPageToken')
        self.done = not self.token
        data: list[dict[str, Any]] = answer.data['data']
        return data


def items(client: RcpClient, path: str, **call: Unpack[Read]) -> Iterator[dict[str, Any]]:
    """Each item of a list, page after page, following nextPageToken until a page has none."""
    walk = _Walk(path, call)
    while not walk.done:
        yield from walk.page(client.get(path, **walk.next_call()))


async def aitems(client: AsyncRcpClient, path: str, **call: Unpack[Read]) -> AsyncIterator[dict[str, Any]]:
    """items() for the async client: ``async for item in aitems(client, path, ...)``."""
    walk = _Walk(path, call)
    while not walk.done:
        for item in walk.page(await client.get(path, **walk.next_call())):
            yield item
