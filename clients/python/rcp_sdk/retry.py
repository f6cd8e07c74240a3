"""Retries of refused attempts: 429 (the API's budgets) and 503 (its database or Temporal away) only. Every other
answer, and a network failure, goes straight back to the caller: a 500 or a lost connection may have done the work.
The same rules as the TypeScript SDK's clients/ts/retry.ts."""

from __future__ import annotations

import asyncio
import inspect
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime

import httpx


@dataclass
class RetryPolicy:
    retries: int = 4
    """Attempts after the first."""
    base_delay: float = 0.25
    """The first backoff in seconds when the answer names no Retry-After, doubled each attempt, full jitter."""
    max_delay: float = 60.0
    """The longest wait the client accepts; a Retry-After beyond it ends the retries."""
    sleep: Callable[[float], object] | None = field(default=None)
    """How the client waits: time.sleep for RcpClient and asyncio.sleep for AsyncRcpClient when None; a coroutine
    function for the async client, or a plain function (tests pass a recorder) for either."""


_SAFE_METHODS = {'GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'}


def retry_after(header: str | None, now: float | None = None) -> float | None:
    """Retry-After in seconds: delta-seconds or an HTTP date (RFC 9110 section 10.2.3); None when absent or unreadable."""
    if header is None:
        return None
    value = header.strip()
    if value.isdigit():
        return float(value)
    try:
        at = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, at - (time.time() if now is None else now))


def retryable(request: httpx.Request, response: httpx.Response) -> bool:
    """Whether this answer may be asked again. A 429 is refused before any work, so always. A 503 only when repeating
    cannot double the work: a method idempotent by HTTP's rules, or a request carrying an Idempotency-Key (the API then
    answers the first effect). An answer the API replayed from its idempotency store is final."""
    if response.headers.get('idempotent-replayed') == 'true':
        return False
    if response.status_code == 429:
        return True
    if response.status_code != 503:
        return False
    return request.method in _SAFE_METHODS or 'idempotency-key' in request.headers


def backoff(policy: RetryPolicy, attempt: int, response: httpx.Response) -> float:
    named = retry_after(response.headers.get('retry-after'))
    return named if named is not None else random.random() * policy.base_delay * 2**attempt


def next_delay(policy: RetryPolicy, attempt: int, request: httpx.Request, response: httpx.Response) -> float | None:
    """How long to wait before asking again after this answer to attempt ``attempt`` (0 for the first), or None when
    the answer is final: not retryable, the policy's retries spent, or a Retry-After beyond ``max_delay``."""
    if attempt >= policy.retries or not retryable(request, response):
        return None
    delay = backoff(policy, attempt, response)
    return None if delay > policy.max_delay else delay


def wait(policy: RetryPolicy, delay: float) -> None:
    (policy.sleep or time.sleep)(delay)


async def async_wait(policy: RetryPolicy, delay: float) -> None:
    waited = (policy.sleep or asyncio.sleep)(delay)
    if inspect.isawaitable(waited):
        await waited
