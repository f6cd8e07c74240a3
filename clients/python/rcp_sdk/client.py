"""The SDK's client: httpx under the conventions of the API (bearer or cookie-session auth, an Idempotency-Key on the
operations the document lists, retries of 429 and 503), every non-2xx raised as an RcpError, so a call that returns
has succeeded. Paths are the document's templates ('/v1/model-versions/{modelVersionId}'), filled from ``params``:
the template is what names the operation, as in the TypeScript SDK. The conventions live in Conventions, once, for
RcpClient here and AsyncRcpClient (async_client.py): the two differ only in how they send and wait."""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx
from typing_extensions import TypedDict, Unpack, override

from .auth import SessionJar
from .errors import error_of
from .operations_gen import IDEMPOTENT_OPERATIONS
from .retry import RetryPolicy, next_delay, wait

_PARAM = re.compile(r'\{([^}]+)\}')


class Read(TypedDict, total=False):
    """What a call names besides its method and path: ``params`` fill the path template, ``query`` is the query string
    (None values left out, booleans as true/false)."""

    params: Mapping[str, object] | None
    query: Mapping[str, Any] | None
    headers: Mapping[str, str] | None


class Call(Read, total=False):
    json: Any
    """The body, sent as JSON."""


@dataclass(frozen=True)
class Answer:
    """A successful answer: its JSON body (None for 204) and the response, for its headers."""

    data: Any
    response: httpx.Response

    @property
    def etag(self) -> str | None:
        etag: str | None = self.response.headers.get('etag')
        return etag


def fill(template: str, params: Mapping[str, object] | None) -> str:
    """The template with each {name} replaced by its parameter, percent-encoded as one path segment."""

    def one(m: re.Match[str]) -> str:
        name = m.group(1)
        if not params or name not in params:
            raise ValueError(f'{template} needs the path parameter {name}')
        return quote(str(params[name]), safe='')

    return _PARAM.sub(one, template)


class Options(TypedDict, total=False):
    """A client's settings besides its URL and transport."""

    token: str | None
    """A bearer token (rcp_pat_... or rcp_ses_...); or ``session``, not both."""
    session: SessionJar | None
    retry: RetryPolicy | None
    """RetryPolicy() when not given."""
    timeout: float
    """Seconds per request (httpx's connect, read, write and pool timeouts); 30 when not given."""


R = TypeVar('R')


class Conventions(Generic[R]):
    """The API's conventions, shared by both clients: ``R`` is what a call returns (an Answer, or a coroutine of one)."""

    def __init__(self, base_url: str, options: Options) -> None:
        self.token = options.get('token')
        self.session = options.get('session')
        if self.token is not None and self.session is not None:
            raise ValueError('a client authenticates with a token or a session, not both')
        self.base_url = base_url.rstrip('/')
        self.retry = options.get('retry') or RetryPolicy()
        self.timeout = options.get('timeout', 30.0)

    def _build(self, http: httpx.Client | httpx.AsyncClient, method: str, path: str, call: Call) -> httpx.Request:
        method = method.upper()
        request = http.build_request(
            method,
            self.base_url + fill(path, call.get('params')),
            params={k: _query_value(v) for k, v in (call.get('query') or {}).items() if v is not None},
            json=call.get('json'),
            headers=dict(call.get('headers') or {}),
        )
        if self.token is not None:
            request.headers['Authorization'] = f'Bearer {self.token}'
        if self.session is not None:
            self.session.on_request(request)
        # Set once, before the first attempt: every retry of this call carries the same key, so the API applies it once.
        if f'{method} {path}' in IDEMPOTENT_OPERATIONS and 'idempotency-key' not in request.headers:
            request.headers['Idempotency-Key'] = str(uuid.uuid4())
        return request

    def _answer(self, response: httpx.Response) -> Answer:
        """The final answer of a call, read: kept by the session jar, raised as an RcpError unless 2xx."""
        if self.session is not None:
            self.session.on_response(response)
        if not response.is_success:
            raise error_of(response)
        data = response.json() if response.content and 'json' in response.headers.get('content-type', '') else None
        return Answer(data, response)

    def request(self, method: str, path: str, **call: Unpack[Call]) -> R:
        raise NotImplementedError

    def get(self, path: str, **call: Unpack[Call]) -> R:
        return self.request('GET', path, **call)

    def post(self, path: str, **call: Unpack[Call]) -> R:
        return self.request('POST', path, **call)

    def put(self, path: str, **call: Unpack[Call]) -> R:
        return self.request('PUT', path, **call)

    def patch(self, path: str, **call: Unpack[Call]) -> R:
        return self.request('PATCH', path, **call)

    def delete(self, path: str, **call: Unpack[Call]) -> R:
        return self.request('DELETE', path, **call)


class RcpClient(Conventions[Answer]):
    """A client of the API at ``base_url`` (its origin, e.g. https://rcp.example.com; paths start with /v1)."""

    def __init__(self, base_url: str, *, transport: httpx.BaseTransport | None = None, **options: Unpack[Options]) -> None:
        super().__init__(base_url, options)
        # The session's cookie is the jar's to keep: httpx's own cookie store would send it on after a sign-out.
        self._http = httpx.Client(timeout=self.timeout, transport=transport, follow_redirects=False)

    @override
    def request(self, method: str, path: str, **call: Unpack[Call]) -> Answer:
        request = self._build(self._http, method, path, call)
        attempt = 0
        while True:
            self._http.cookies.clear()
            response = self._http.send(request)
            response.read()
            delay = next_delay(self.retry, attempt, request, response)
            if delay is None:
                return self._answer(response)
            wait(self.retry, delay)
            attempt += 1

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
