"""Verifying a webhook delivery is the stock standardwebhooks package's job, with the endpoint's secret (whsec_...):
the signature covers the message id, its timestamp (refused beyond five minutes either side) and the raw body."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from standardwebhooks import Webhook, WebhookVerificationError

__all__ = ['verify_webhook', 'WebhookVerificationError']


def verify_webhook(secret: str, body: bytes | str, headers: Mapping[str, str]) -> Any:
    """The event of a delivery, or WebhookVerificationError. ``body`` is the raw body as received: parse only what
    this answers."""
    raw = body.decode('utf-8') if isinstance(body, bytes) else body
    return Webhook(secret).verify(raw, {k.lower(): v for k, v in headers.items()})
