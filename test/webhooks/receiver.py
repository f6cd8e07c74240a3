"""A webhook receiver as a Python team would write one: HTTPS, verified with the stock PyPI `standardwebhooks`.

Usage: receiver.py CERT KEY SECRETS_FILE  -- SECRETS_FILE holds one secret a line, read at every request (so a
test can register the endpoint after the receiver listens, and rotate). Prints its port, then one JSON line per request:
{"webhookId", "type", "verifiedBy": [indexes of the secrets that verified it]}. Answers 204 if any verified, else 401.
"""
import json
import ssl
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

from standardwebhooks.webhooks import Webhook

CERT, KEY, SECRETS_FILE = sys.argv[1], sys.argv[2], sys.argv[3]


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        headers = {k.lower(): v for k, v in self.headers.items()}
        with open(SECRETS_FILE) as f:
            secrets = [line.strip() for line in f if line.strip()]
        verified = []
        for i, secret in enumerate(secrets):
            try:
                Webhook(secret).verify(body, headers)
                verified.append(i)
            except Exception:  # any verification failure: not this secret
                pass
        print(json.dumps({"webhookId": headers.get("webhook-id"), "type": json.loads(body)["type"], "verifiedBy": verified}), flush=True)
        self.send_response(204 if verified else 401)
        self.end_headers()

    def log_message(self, *args):
        pass


server = HTTPServer(("127.0.0.1", 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(CERT, KEY)
server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
