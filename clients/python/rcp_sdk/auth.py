"""The two ways a client authenticates: a bearer token (a personal access token rcp_pat_..., or a session token
rcp_ses_...), or a cookie session as a browser holds one (the rcp_session cookie, and its CSRF token on writes)."""

from __future__ import annotations

import json
import re

import httpx

COOKIE = 'rcp_session'
_UNSAFE = {'POST', 'PUT', 'PATCH', 'DELETE'}
_EXPIRED = re.compile(r'max-age=0', re.IGNORECASE)


class SessionJar:
    """A session the client keeps from the answers it reads: the cookie a sign-in or registration sets, and the CSRF
    token its body carries (data.session.csrfToken). Cleared when the API clears the cookie (sign-out)."""

    def __init__(self) -> None:
        self.cookie: str | None = None
        self.csrf_token: str | None = None

    @property
    def signed_in(self) -> bool:
        return self.cookie is not None

    def on_request(self, request: httpx.Request) -> None:
        if self.cookie:
            request.headers['Cookie'] = f'{COOKIE}={self.cookie}'
            if self.csrf_token and request.method in _UNSAFE:
                request.headers['X-CSRF-Token'] = self.csrf_token

    def on_response(self, response: httpx.Response) -> None:
        for line in response.headers.get_list('set-cookie'):
            pair = line.split(';', 1)[0]
            name, _, value = pair.partition('=')
            if name.strip() != COOKIE:
                continue
            value = value.strip()
            self.cookie = None if value == '' or _EXPIRED.search(line) else value
            if self.cookie is None:
                self.csrf_token = None
        if response.is_success and 'json' in response.headers.get('content-type', ''):
            try:
                body = json.loads(response.content)
            except ValueError:
                return
            session = (body.get('data') or {}).get('session') if isinstance(body, dict) and isinstance(body.get('data'), dict) else None
            csrf = session.get('csrfToken') if isinstance(session, dict) else None
            if isinstance(csrf, str):
                self.csrf_token = csrf
