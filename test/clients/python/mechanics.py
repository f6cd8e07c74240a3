"""The Python SDK's mechanics against a stub server on 127.0.0.1 (run by test/clients/python-sdk.test.ts): what it
retries and with which key, what it refuses to retry, pages, problem+json, the session jar, ETags and a streamed
upload that never carries the client's credentials to storage; then the same conventions through AsyncRcpClient,
and that its waits leave the event loop free."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import unittest
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from tempfile import TemporaryDirectory
from urllib.parse import parse_qs, urlsplit

from typing_extensions import override

from rcp_sdk import Answer, AsyncRcpClient, RcpClient, RcpError, RetryPolicy, SessionJar, aitems, aread, if_match, items, read, upload_checkpoint
from rcp_sdk.retry import retry_after

UUID4 = re.compile(r'^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$')


class Seen:
    def __init__(self, method: str, path: str, query: dict[str, list[str]], headers: dict[str, str], body: bytes) -> None:
        self.method, self.path, self.query, self.headers, self.body = method, path, query, headers, body


Reply = tuple[int, dict[str, str], bytes]


class Stub:
    """Answers each request with the next reply of a script; records what it was sent."""

    def __init__(self, replies: list[Reply] | Callable[[Seen], Reply]) -> None:
        self.seen: list[Seen] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            @override
            def log_message(self, *args: object) -> None:
                pass

            def handle_one(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get('content-length') or 0)
                seen = Seen(self.command, parts.path, parse_qs(parts.query), {k.lower(): v for k, v in self.headers.items()}, self.rfile.read(length))
                stub.seen.append(seen)
                status, headers, body = replies(seen) if callable(replies) else replies[len(stub.seen) - 1]
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_one

        self.server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f'http://127.0.0.1:{self.server.server_address[1]}'

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def problem(status: int, code: str, request_id: str = 'req-1', **extra: object) -> Reply:
    body = {'type': f'https://errors/{code}', 'title': code.title(), 'status': status, 'code': code, 'message': f'{code} said', 'requestId': request_id, **extra}
    return status, {'Content-Type': 'application/problem+json'}, json.dumps(body).encode()


def ok(data: object, status: int = 200, **headers: str) -> Reply:
    return status, {'Content-Type': 'application/json', **headers}, json.dumps({'data': data, 'meta': {'requestId': 'r'}}).encode()


def paged(pages: dict[str | None, tuple[list[str], str | None]]) -> Callable[[Seen], Reply]:
    """A list answering pages by their token."""

    def answer(s: Seen) -> Reply:
        data, following = pages[s.query.get('pageToken', [None])[0]]
        body = {'data': [{'id': x} for x in data], **({'nextPageToken': following} if following else {})}
        return 200, {'Content-Type': 'application/json'}, json.dumps(body).encode()

    return answer



THREE_PAGES: dict[str | None, tuple[list[str], str | None]] = {None: (['a', 'b'], 'p2'), 'p2': (['c', 'd'], 'p3'), 'p3': (['e'], None)}


def limited_twice_then_created() -> list[Reply]:
    limited = problem(429, 'RATE_LIMITED')
    return [(429, {**limited[1], 'Retry-After': '2'}, limited[2]), (429, {**limited[1], 'Retry-After': '1'}, limited[2]), ok({'id': 't1'}, 201)]


def check_one_key_across_retries(t: unittest.TestCase, stub: Stub, answer: Answer, slept: list[float]) -> None:
    """The three attempts of limited_twice_then_created carried one UUIDv4 key and the token; the waits were the
    Retry-After headers'."""
    t.assertEqual(answer.data['data']['id'], 't1')
    keys = [s.headers.get('idempotency-key') for s in stub.seen]
    t.assertEqual(len(keys), 3)
    t.assertRegex(keys[0] or '', UUID4)
    t.assertEqual(set(keys), {keys[0]})
    t.assertEqual(slept, [2.0, 1.0])
    t.assertEqual({s.headers['authorization'] for s in stub.seen}, {'Bearer rcp_pat_test'})

class Mechanics(unittest.TestCase):
    def client(self, stub: Stub, **kw: object) -> tuple[RcpClient, list[float]]:
        slept: list[float] = []
        policy = RetryPolicy(sleep=slept.append, **kw)  # type: ignore[arg-type]
        return RcpClient(stub.url, token='rcp_pat_test', retry=policy), slept

    def test_429_is_retried_after_its_retry_after_with_the_same_idempotency_key(self) -> None:
        stub = Stub(limited_twice_then_created())
        rcp, slept = self.client(stub)
        answer = rcp.post('/v1/tenants', json={'name': 'a', 'slug': 'a'})
        stub.close()
        check_one_key_across_retries(self, stub, answer, slept)

    def test_each_call_gets_its_own_key_and_a_callers_key_is_kept(self) -> None:
        stub = Stub(lambda s: ok({'id': 'x'}, 201))
        rcp, _ = self.client(stub)
        rcp.post('/v1/tenants', json={})
        rcp.post('/v1/tenants', json={})
        rcp.post('/v1/tenants', json={}, headers={'Idempotency-Key': 'mine'})
        rcp.post('/v1/sessions', json={})  # the document lists no key for signing in
        stub.close()
        keys = [s.headers.get('idempotency-key') for s in stub.seen]
        self.assertNotEqual(keys[0], keys[1])
        self.assertEqual(keys[2:], ['mine', None])

    def test_500_is_not_retried(self) -> None:
        stub = Stub(lambda s: problem(500, 'INTERNAL_ERROR', 'req-500'))
        rcp, slept = self.client(stub)
        with self.assertRaises(RcpError) as raised:
            rcp.post('/v1/tenants', json={})
        stub.close()
        self.assertEqual((raised.exception.status, raised.exception.code, raised.exception.request_id), (500, 'INTERNAL_ERROR', 'req-500'))
        self.assertEqual((len(stub.seen), slept), (1, []))

    def test_503_is_retried_on_get_and_keyed_posts_but_not_on_a_post_without_a_key(self) -> None:
        down = problem(503, 'SERVICE_UNAVAILABLE')
        stub = Stub([down, ok({'ok': True})])
        rcp, _ = self.client(stub)
        rcp.get('/v1/users/me')
        stub.close()
        self.assertEqual(len(stub.seen), 2)

        stub = Stub(lambda s: down)
        rcp, _ = self.client(stub)
        with self.assertRaises(RcpError) as raised:
            rcp.post('/v1/model-versions/{modelVersionId}/validations', params={'modelVersionId': 'm1'})
        stub.close()
        self.assertEqual((raised.exception.code, len(stub.seen)), ('SERVICE_UNAVAILABLE', 1))

        stub = Stub([down, ok({'id': 't'}, 201)])
        rcp, _ = self.client(stub)
        rcp.post('/v1/tenants', json={})
        stub.close()
        self.assertEqual(len(stub.seen), 2)

    def test_a_replayed_answer_and_a_retry_after_beyond_the_ceiling_end_the_retries(self) -> None:
        limited = problem(429, 'RATE_LIMITED')
        stub = Stub(lambda s: (429, {**limited[1], 'Retry-After': '120'}, limited[2]))
        rcp, slept = self.client(stub, max_delay=60.0)
        with self.assertRaises(RcpError):
            rcp.get('/v1/users/me')
        stub.close()
        self.assertEqual((len(stub.seen), slept), (1, []))

        down = problem(503, 'SERVICE_UNAVAILABLE')
        stub = Stub(lambda s: (503, {**down[1], 'Idempotent-Replayed': 'true'}, down[2]))
        rcp, _ = self.client(stub)
        with self.assertRaises(RcpError):
            rcp.post('/v1/tenants', json={})
        stub.close()
        self.assertEqual(len(stub.seen), 1)

    def test_retries_stop_after_the_policys_count_with_jittered_backoff_when_no_retry_after(self) -> None:
        stub = Stub(lambda s: problem(503, 'SERVICE_UNAVAILABLE'))
        rcp, slept = self.client(stub, retries=3, base_delay=0.25)
        with self.assertRaises(RcpError):
            rcp.get('/v1/users/me')
        stub.close()
        self.assertEqual(len(stub.seen), 4)
        for attempt, delay in enumerate(slept):
            self.assertTrue(0 <= delay <= 0.25 * 2**attempt, (attempt, delay))

    def test_retry_after_reads_seconds_and_http_dates(self) -> None:
        self.assertEqual(retry_after('7'), 7.0)
        self.assertEqual(retry_after('Wed, 21 Oct 2015 07:28:10 GMT', now=1445412480.0), 10.0)
        self.assertIsNone(retry_after('soon'))
        self.assertIsNone(retry_after(None))

    def test_items_follows_next_page_token_through_three_pages_with_the_same_filters(self) -> None:
        stub = Stub(paged(THREE_PAGES))
        rcp, _ = self.client(stub)
        walked = items(rcp, '/v1/tenants/current/memberships', query={'pageSize': 2, 'status': 'active'})
        first = next(walked)
        self.assertEqual((first['id'], len(stub.seen)), ('a', 1))  # the next page only once this one is taken
        rest = [m['id'] for m in walked]
        stub.close()
        self.assertEqual(rest, ['b', 'c', 'd', 'e'])
        self.assertEqual([s.query.get('pageToken') for s in stub.seen], [None, ['p2'], ['p3']])
        self.assertEqual({(s.query['pageSize'][0], s.query['status'][0]) for s in stub.seen}, {('2', 'active')})
        with self.assertRaises(ValueError):
            next(items(rcp, '/v1/users/me'))

    def test_problem_json_becomes_an_rcp_error_and_other_bodies_an_http_code(self) -> None:
        stub = Stub([problem(400, 'VALIDATION_ERROR', 'req-400', errors=[{'path': 'body.name', 'message': 'too short'}]), (502, {'Content-Type': 'text/html', 'X-Request-Id': 'proxy-1'}, b'<h1>bad gateway</h1>')])
        rcp, _ = self.client(stub, retries=0)
        with self.assertRaises(RcpError) as invalid:
            rcp.post('/v1/embodiment-profiles', json={'name': ''})
        with self.assertRaises(RcpError) as proxied:
            rcp.get('/v1/users/me')
        stub.close()
        e = invalid.exception
        self.assertEqual((e.status, e.code, e.request_id, e.message), (400, 'VALIDATION_ERROR', 'req-400', 'VALIDATION_ERROR said'))
        self.assertEqual([(f.path, f.message) for f in e.errors], [('body.name', 'too short')])
        p = proxied.exception
        self.assertEqual((p.status, p.code, p.request_id), (502, 'HTTP_502', 'proxy-1'))

    def test_path_parameters_are_filled_and_encoded(self) -> None:
        stub = Stub(lambda s: ok({}))
        rcp, _ = self.client(stub)
        rcp.get('/v1/model-versions/{modelVersionId}', params={'modelVersionId': '../x y'})
        stub.close()
        self.assertEqual(stub.seen[0].path, '/v1/model-versions/..%2Fx%20y')
        with self.assertRaises(ValueError):
            rcp.get('/v1/model-versions/{modelVersionId}')

    def test_the_session_jar_keeps_the_cookie_sends_csrf_on_writes_only_and_forgets_both_at_sign_out(self) -> None:
        signed_in = {'session': {'state': 'active', 'csrfToken': 'csrf-1'}}
        stub = Stub([
            (201, {'Content-Type': 'application/json', 'Set-Cookie': 'rcp_session=rcp_ses_abc; Path=/; HttpOnly'}, json.dumps({'data': signed_in}).encode()),
            ok({'user': {}}),
            ok({'id': 't'}, 201),
            (204, {'Set-Cookie': 'rcp_session=; Path=/; Max-Age=0'}, b''),
            ok({}),
        ])
        jar = SessionJar()
        rcp = RcpClient(stub.url, session=jar)
        rcp.post('/v1/sessions', json={})
        self.assertEqual((jar.cookie, jar.csrf_token, jar.signed_in), ('rcp_ses_abc', 'csrf-1', True))
        rcp.get('/v1/users/me')
        rcp.post('/v1/tenants', json={})
        rcp.delete('/v1/sessions/current')
        rcp.get('/v1/users/me')
        stub.close()
        sent = [(s.headers.get('cookie'), s.headers.get('x-csrf-token')) for s in stub.seen]
        self.assertEqual(sent[1:], [('rcp_session=rcp_ses_abc', None), ('rcp_session=rcp_ses_abc', 'csrf-1'), ('rcp_session=rcp_ses_abc', 'csrf-1'), (None, None)])
        self.assertEqual((jar.cookie, jar.csrf_token), (None, None))

    def test_read_answers_the_etag_and_refuses_a_resource_without_one(self) -> None:
        stub = Stub([ok({'id': 'p'}, ETag='"v3"'), ok({'id': 'q'})])
        rcp, _ = self.client(stub)
        data, etag = read(rcp, '/v1/embodiment-profiles/{profileId}', params={'profileId': 'p'})
        self.assertEqual((data['data']['id'], etag, if_match(etag)), ('p', '"v3"', {'If-Match': '"v3"'}))
        with self.assertRaises(TypeError):
            read(rcp, '/v1/embodiment-profiles/{profileId}', params={'profileId': 'q'})
        stub.close()

    def test_upload_streams_parts_with_progress_and_sends_no_credentials_to_storage(self) -> None:
        storage = Stub(lambda s: (200, {}, b''))
        api = Stub(lambda s: ok({'bucket': 'b', 'expiresAt': 'x', 'uploads': [{'key': 'ckpt/params.bin', 'method': 'PUT', 'url': f'{storage.url}/b/ckpt/params.bin?sig=1'}]}))
        rcp, _ = self.client(api)
        with TemporaryDirectory() as tmp:
            file = Path(tmp) / 'params.bin'
            file.write_bytes(bytes(range(256)) * 100)
            seen: list[tuple[int, int]] = []
            keys = upload_checkpoint(rcp, 'mv1', file, chunk_size=10_000, progress=lambda p: seen.append((p.sent, p.total)))
        api.close()
        storage.close()
        self.assertEqual(keys, ['ckpt/params.bin'])
        self.assertEqual([s.path for s in api.seen], ['/v1/model-versions/mv1/upload-urls'])
        put = storage.seen[0]
        self.assertEqual((put.method, put.body, put.headers.get('content-length')), ('PUT', bytes(range(256)) * 100, '25600'))
        self.assertNotIn('authorization', put.headers)
        self.assertNotIn('transfer-encoding', put.headers)
        self.assertEqual(seen, [(10_000, 25_600), (20_000, 25_600), (25_600, 25_600)])



class AsyncMechanics(unittest.IsolatedAsyncioTestCase):
    """AsyncRcpClient: each convention of RcpClient's above, awaited."""

    @override
    async def asyncSetUp(self) -> None:
        # unittest runs these in asyncio's debug mode, which reports the stub's own blocking shutdown as slow callbacks.
        asyncio.get_running_loop().set_debug(False)

    def client(self, stub: Stub, **kw: object) -> tuple[AsyncRcpClient, list[float]]:
        slept: list[float] = []
        policy = RetryPolicy(sleep=slept.append, **kw)  # type: ignore[arg-type]
        return AsyncRcpClient(stub.url, token='rcp_pat_test', retry=policy), slept

    async def test_429_is_retried_after_its_retry_after_with_the_same_idempotency_key(self) -> None:
        stub = Stub(limited_twice_then_created())
        rcp, slept = self.client(stub)
        async with rcp:
            answer = await rcp.post('/v1/tenants', json={'name': 'a', 'slug': 'a'})
        stub.close()
        check_one_key_across_retries(self, stub, answer, slept)

    async def test_each_call_gets_its_own_key_and_a_callers_key_is_kept(self) -> None:
        stub = Stub(lambda s: ok({'id': 'x'}, 201))
        rcp, _ = self.client(stub)
        await rcp.post('/v1/tenants', json={})
        await rcp.post('/v1/tenants', json={})
        await rcp.post('/v1/tenants', json={}, headers={'Idempotency-Key': 'mine'})
        await rcp.post('/v1/sessions', json={})
        await rcp.aclose()
        stub.close()
        keys = [s.headers.get('idempotency-key') for s in stub.seen]
        self.assertNotEqual(keys[0], keys[1])
        self.assertEqual(keys[2:], ['mine', None])

    async def test_503_is_retried_on_get_and_keyed_posts_but_not_on_a_post_without_a_key(self) -> None:
        down = problem(503, 'SERVICE_UNAVAILABLE')
        stub = Stub([down, ok({'ok': True}), down, ok({'id': 't'}, 201)])
        rcp, slept = self.client(stub, retries=3, base_delay=0.25)
        await rcp.get('/v1/users/me')
        await rcp.post('/v1/tenants', json={})
        stub.close()
        self.assertEqual([s.method for s in stub.seen], ['GET', 'GET', 'POST', 'POST'])
        self.assertEqual(stub.seen[2].headers['idempotency-key'], stub.seen[3].headers['idempotency-key'])
        self.assertTrue(all(0 <= d <= 0.25 for d in slept) and len(slept) == 2, slept)

        stub = Stub(lambda s: down)
        rcp, _ = self.client(stub)
        with self.assertRaises(RcpError) as raised:
            await rcp.post('/v1/model-versions/{modelVersionId}/validations', params={'modelVersionId': 'm1'})
        stub.close()
        self.assertEqual((raised.exception.status, raised.exception.code, len(stub.seen)), (503, 'SERVICE_UNAVAILABLE', 1))

    async def test_other_5xx_are_not_retried_and_every_failure_is_a_typed_error(self) -> None:
        stub = Stub([
            problem(500, 'INTERNAL_ERROR', 'req-500'),
            (502, {'Content-Type': 'text/html', 'X-Request-Id': 'proxy-1'}, b'<h1>bad gateway</h1>'),
            problem(504, 'GATEWAY_TIMEOUT', 'req-504'),
            problem(400, 'VALIDATION_ERROR', 'req-400', errors=[{'path': 'body.name', 'message': 'too short'}]),
        ])
        rcp, slept = self.client(stub)
        raised: list[RcpError] = []
        for call in (rcp.get('/v1/users/me'), rcp.get('/v1/users/me'), rcp.post('/v1/tenants', json={}), rcp.post('/v1/embodiment-profiles', json={'name': ''})):
            with self.assertRaises(RcpError) as caught:
                await call
            raised.append(caught.exception)
        stub.close()
        self.assertEqual((len(stub.seen), slept), (4, []))
        self.assertEqual(
            [(e.status, e.code, e.request_id) for e in raised],
            [(500, 'INTERNAL_ERROR', 'req-500'), (502, 'HTTP_502', 'proxy-1'), (504, 'GATEWAY_TIMEOUT', 'req-504'), (400, 'VALIDATION_ERROR', 'req-400')],
        )
        self.assertEqual([(f.path, f.message) for f in raised[3].errors], [('body.name', 'too short')])

    async def test_aitems_follows_next_page_token_through_three_pages_with_the_same_filters(self) -> None:
        stub = Stub(paged(THREE_PAGES))
        rcp, _ = self.client(stub)
        walked = aitems(rcp, '/v1/tenants/current/memberships', query={'pageSize': 2, 'status': 'active'})
        first = await anext(walked)
        self.assertEqual((first['id'], len(stub.seen)), ('a', 1))  # the next page only once this one is taken
        rest = [m['id'] async for m in walked]
        stub.close()
        self.assertEqual(rest, ['b', 'c', 'd', 'e'])
        self.assertEqual([s.query.get('pageToken') for s in stub.seen], [None, ['p2'], ['p3']])
        self.assertEqual({(s.query['pageSize'][0], s.query['status'][0]) for s in stub.seen}, {('2', 'active')})
        with self.assertRaises(ValueError):
            await anext(aitems(rcp, '/v1/users/me'))

    async def test_aread_answers_the_etag_and_the_session_jar_works_as_in_the_sync_client(self) -> None:
        signed_in = {'session': {'state': 'active', 'csrfToken': 'csrf-1'}}
        stub = Stub([
            (201, {'Content-Type': 'application/json', 'Set-Cookie': 'rcp_session=rcp_ses_abc; Path=/; HttpOnly'}, json.dumps({'data': signed_in}).encode()),
            ok({'id': 'p'}, ETag='"v3"'),
            ok({'id': 'p'}),
            ok({'id': 'q'}),
        ])
        jar = SessionJar()
        async with AsyncRcpClient(stub.url, session=jar) as rcp:
            await rcp.post('/v1/sessions', json={})
            data, etag = await aread(rcp, '/v1/embodiment-profiles/{profileId}', params={'profileId': 'p'})
            await rcp.patch('/v1/embodiment-profiles/{profileId}', params={'profileId': 'p'}, json={}, headers=if_match(etag))
            with self.assertRaises(TypeError):
                await aread(rcp, '/v1/embodiment-profiles/{profileId}', params={'profileId': 'q'})
        stub.close()
        self.assertEqual((data['data']['id'], etag), ('p', '"v3"'))
        sent = [(s.method, s.headers.get('cookie'), s.headers.get('x-csrf-token'), s.headers.get('if-match')) for s in stub.seen[1:3]]
        self.assertEqual(sent, [('GET', 'rcp_session=rcp_ses_abc', None, None), ('PATCH', 'rcp_session=rcp_ses_abc', 'csrf-1', '"v3"')])

    async def test_waiting_out_a_retry_after_leaves_the_event_loop_to_other_calls(self) -> None:
        # The default policy's wait: a call made while another waits out its 429 is answered in the meantime. A wait
        # that blocked the loop would hold the second call until the first's retry had been sent.
        limited = problem(429, 'RATE_LIMITED')
        replies = {'/v1/users/me': [(429, {**limited[1], 'Retry-After': '2'}, limited[2]), ok({'me': True})], '/v1/tokens/self': [ok({'self': True})]}
        stub = Stub(lambda s: replies[s.path].pop(0))
        async with AsyncRcpClient(stub.url, token='rcp_pat_test') as rcp:

            async def later() -> object:
                await asyncio.sleep(0.1)
                return (await rcp.get('/v1/tokens/self')).data

            waited, other = await asyncio.gather(rcp.get('/v1/users/me'), later())
        stub.close()
        self.assertEqual((waited.data['data'], other), ({'me': True}, {'data': {'self': True}, 'meta': {'requestId': 'r'}}))
        self.assertEqual([s.path for s in stub.seen], ['/v1/users/me', '/v1/tokens/self', '/v1/users/me'])


if __name__ == '__main__':
    result = unittest.main(exit=False, verbosity=2).result
    print(json.dumps({'ran': result.testsRun, 'failures': len(result.failures) + len(result.errors)}))
    raise SystemExit(0 if result.wasSuccessful() else 1)
