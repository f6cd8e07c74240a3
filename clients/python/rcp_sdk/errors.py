"""A failed call as one exception type: the API's problem+json (status, code, request id, and the fields a validation
error names), so a caller branches on ``code`` rather than parsing bodies."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import httpx
from typing_extensions import override


@dataclass(frozen=True)
class FieldError:
    path: str
    message: str


class RcpError(Exception):
    """Every answer that is not 2xx. ``code`` is the catalogue's (``VALIDATION_ERROR``, ``RATE_LIMITED``, ...), or
    ``HTTP_<status>`` when the answer was not problem+json (a proxy's page)."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        request_id: str | None = None,
        title: str | None = None,
        type: str | None = None,
        errors: list[FieldError] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        # What to quote to an operator: the problem's requestId, else the X-Request-Id header.
        self.request_id = request_id
        self.title = title
        self.type = type
        self.errors = errors or []

    @override
    def __repr__(self) -> str:
        return f'RcpError(status={self.status}, code={self.code!r}, request_id={self.request_id!r})'


_JSON = re.compile(r'^application/(problem\+)?json')


def error_of(response: httpx.Response) -> RcpError:
    """The error a non-2xx response stands for."""
    problem: dict[str, object] = {}
    if _JSON.match(response.headers.get('content-type', '')):
        try:
            parsed = json.loads(response.content)
            if isinstance(parsed, dict):
                problem = parsed
        except ValueError:
            pass  # a body that is not JSON after all: the status alone speaks
    status = response.status_code

    def text(key: str) -> str | None:
        value = problem.get(key)
        return value if isinstance(value, str) else None

    raw_errors = problem.get('errors')
    errors = [
        FieldError(str(e.get('path', '')), str(e.get('message', '')))
        for e in (raw_errors if isinstance(raw_errors, list) else [])
        if isinstance(e, dict)
    ]
    return RcpError(
        status=status,
        code=text('code') or f'HTTP_{status}',
        message=text('message') or text('title') or f'HTTP {status}',
        request_id=text('requestId') or response.headers.get('x-request-id'),
        title=text('title'),
        type=text('type'),
        errors=errors,
    )
