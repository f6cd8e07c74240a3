"""The Robot Control Plane API from Python: RcpClient (auth, Idempotency-Key, retries of 429/503, RcpError), items()
over pages, read()/if_match() for ETags, the same for asyncio (AsyncRcpClient, aitems(), aread()), and the robot
engineer's helpers: download_package (verified against SHA256SUMS and the DSSE signature), verify_webhook
(standardwebhooks), upload_checkpoint (streamed, with progress).
The API's models are the TypedDicts of rcp_sdk.schema_gen, generated from /v1/openapi.json."""

from .async_client import AsyncRcpClient
from .auth import SessionJar
from .client import Answer, RcpClient
from .edge import PackageVerificationError, VerifiedPackage, download_package, signing_keys, verify_package
from .errors import FieldError, RcpError
from .etag import aread, if_match, read
from .operations_gen import IDEMPOTENT_OPERATIONS, LIST_PATHS
from .pages import aitems, items
from .retry import RetryPolicy
from .uploads import UploadProgress, upload_checkpoint
from .webhooks import WebhookVerificationError, verify_webhook

__all__ = [
    'Answer',
    'AsyncRcpClient',
    'FieldError',
    'IDEMPOTENT_OPERATIONS',
    'LIST_PATHS',
    'PackageVerificationError',
    'RcpClient',
    'RcpError',
    'RetryPolicy',
    'SessionJar',
    'UploadProgress',
    'VerifiedPackage',
    'WebhookVerificationError',
    'aitems',
    'aread',
    'download_package',
    'if_match',
    'items',
    'read',
    'signing_keys',
    'upload_checkpoint',
    'verify_package',
    'verify_webhook',
]
