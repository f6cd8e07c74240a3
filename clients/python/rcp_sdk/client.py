"""The SDK's client: httpx under the conventions of the API (bearer or cookie-session auth, an Idempotency-Key on the
operations the document lists, retries of 429 and 503), every non-2xx raised as an RcpError, so a call that returns
has succeeded. Paths are the document's templates ('/v1/model-versions/{modelVersionId}'), filled from ``params``:
the template is what names the operation, as in the TypeScript SDK."""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any
from urllib.parse import quote

import httpx

from .auth import SessionJar
from .errors import error_of
from .operations_gen import IDEMPOTENT_OPERATIONS
from .retry import RetryPolicy, backoff, retryable

_PARAM = re.compile(r'\{([^}]+)\}')


@dataclass(frozen=True)
class Answer:
    """A successful answer: its JSON body (None for 204) and the response, for its headers."""

    data: Any
    response: httpx.Response

    @property
    def etag(self) -> str | None:
        return self.response.headers.get('etag')


def fill(template: str, params: Mapping[str, object] | None) -> str:
    """The template with each {name} replaced by its parameter, percent-encoded as one path segment."""

    def one(m: re.Match[str]) -> str:
        name = m.group(1)
        if not params or name not in params:
            raise ValueError(f'{template} needs the path parameter {name}')
        return quote(str(params[name]), safe='')

    return _PARAM.sub(one, template)


class RcpClient:
    """A client of the API at ``base_url`` (its origin, e.g. https://rcp.example.com; paths start with /v1)."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        session: SessionJar | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if token is not None and session is not None:
            raise ValueError('a client authenticates with a token or a session, not both')
        self.base_url = base_url.rstrip('/')
        self.token = token
        self.session = session
        self.retry = retry or RetryPolicy()
        # The session's cookie is the jar's to keep: httpx's own cookie store would send it on after a sign-out.
        self._http = httpx.Client(timeout=timeout, transport=transport, follow_redirects=False)

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, object] | None = None,
        query: Mapping[str, Any] | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> Answer:
        method = method.upper()
        request = self._http.build_request(
            method,
            self.base_url + fill(path, params),
            params={k: _query_value(v) for k, v in (query or {}).items() if v is not None},
            json=json,
            headers=dict(headers or {}),
        )
        if self.token is not None:
            request.headers['Authorization'] = f'Bearer {self.token}'
        if self.session is not None:
            self.session.on_request(request)
        # Set once, before the first attempt: every retry of this call carries the same key, so the API applies it once.
        if f'{method} {path}' in IDEMPOTENT_OPERATIONS and 'idempotency-key' not in request.headers:
            request.headers['Idempotency-Key'] = str(uuid.uuid4())
        response = self._send(request)
        if self.session is not None:
            self.session.on_response(response)
        if not response.is_success:
            raise error_of(response)
        data = response.json() if response.content and 'json' in response.headers.get('content-type', '') else None
        return Answer(data, response)

    def _send(self, request: httpx.Request) -> httpx.Response:
        policy = self.retry
        attempt = 0
        while True:
            self._http.cookies.clear()
            response = self._http.send(request)
            response.read()
            if attempt >= policy.retries or not retryable(request, response):
                return response
            delay = backoff(policy, attempt, response)
            if delay > policy.max_delay:
                return response
            policy.sleep(delay)
            attempt += 1

    def get(self, path: str, **kw: Any) -> Answer:
        return self.request('GET', path, **kw)

    def post(self, path: str, **kw: Any) -> Answer:
        return self.request('POST', path, **kw)

    def put(self, path: str, **kw: Any) -> Answer:
        return self.request('PUT', path, **kw)

    def patch(self, path: str, **kw: Any) -> Answer:
        return self.request('PATCH', path, **kw)

    def delete(self, path: str, **kw: Any) -> Answer:
        return self.request('DELETE', path, **kw)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RcpClient:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def _query_value(value: Any) -> Any:
    if isinstance(value, bool):
        return 'true' if value else 'false'
    return value
