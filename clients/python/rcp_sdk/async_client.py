"""The client for asyncio code, over httpx.AsyncClient: RcpClient's conventions (client.Conventions: auth, the
Idempotency-Key, which answers are retried and how long to wait, RcpError), with its sends and waits awaited, so a
call waiting out a 429's Retry-After never holds the event loop."""

from __future__ import annotations

from collections.abc import Coroutine
from types import TracebackType
from typing import Any

import httpx
from typing_extensions import Unpack, override

from .client import Answer, Call, Conventions, Options
from .retry import async_wait, next_delay


class AsyncRcpClient(Conventions[Coroutine[Any, Any, Answer]]):
    """RcpClient for asyncio: ``await client.get(...)``; ``async with`` closes it."""

    def __init__(self, base_url: str, *, transport: httpx.AsyncBaseTransport | None = None, **options: Unpack[Options]) -> None:
        super().__init__(base_url, options)
        self._http = httpx.AsyncClient(timeout=self.timeout, transport=transport, follow_redirects=False)

    @override
    async def request(self, method: str, path: str, **call: Unpack[Call]) -> Answer:
        request = self._build(self._http, method, path, call)
        attempt = 0
        while True:
            self._http.cookies.clear()
            response = await self._http.send(request)
            await response.aread()
            delay = next_delay(self.retry, attempt, request, response)
            if delay is None:
                return self._answer(response)
            await async_wait(self.retry, delay)
            attempt += 1

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncRcpClient:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        await self.aclose()
