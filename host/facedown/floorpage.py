"""The floor page: a read-only map of the room in the browser, served on loopback by default
(stdlib http.server). GET / is the page, GET /floor?since=V the view as JSON (a long poll: it
answers as soon as something newer than V has happened), POST /ack acknowledges an alert
(the one thing a floor person does here; logged in the ledger by Floor);
GET /api/ledger/NAME?shoe=... answers the ledger's read-only floor queries (ledger.py)."""

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

PAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "floor.html")
POLL_S = 10.0
# the floor's read-only ledger queries (finished hands only; no export from the floor page)
LEDGER_QUERIES = ("shoes", "hands", "card", "rates", "settings")


class FloorPage:
    def __init__(self, floor, host="127.0.0.1", port=0):
        self.floor = floor
        with open(PAGE, "rb") as f:
            self.html = f.read()
        self.httpd = ThreadingHTTPServer((host, port), self._handler())
        self.httpd.daemon_threads = True
        self.thread = None

    @property
    def url(self):
        host, port = self.httpd.server_address[:2]
        return "http://%s:%d/" % (host, port)

    def _handler(self):
        page = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, code, body, kind="application/json"):
                if not isinstance(body, bytes):
                    body = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the browser went away (closed, reloaded) before the answer

            def do_GET(self):
                url = urlparse(self.path)
                if url.path == "/":
                    return self._send(200, page.html, "text/html; charset=utf-8")
                if url.path == "/floor":
                    try:
                        since = int(parse_qs(url.query).get("since", ["-1"])[0])
                    except ValueError:
                        return self._send(400, {"error": "since is a number"})
                    page.floor.wait(since, POLL_S)
                    return self._send(200, page.floor.view())
                if url.path.startswith("/api/ledger/"):
                    return self._ledger(url.path[len("/api/ledger/"):], url.query)
                self._send(404, {"error": "no such page"})

            def _ledger(self, name, query):
                from .errors import UserError
                from .ledger import run_query

                if name not in LEDGER_QUERIES or page.floor.ledger is None:
                    return self._send(404, {"error": "ledger queries here: %s" %
                                            ", ".join(LEDGER_QUERIES)})
                params = {k: v[-1] for k, v in parse_qs(query).items()}
                try:
                    self._send(200, run_query(page.floor.ledger, name, params))
                except UserError as e:
                    self._send(400, {"error": str(e), "hint": e.hint})

            def do_POST(self):
                if urlparse(self.path).path != "/ack":
                    return self._send(404, {"error": "no such page"})
                try:
                    n = int(self.headers.get("Content-Length") or 0)
                    req = json.loads(self.rfile.read(min(n, 4096)))
                    shoe, t, kind = str(req["shoe"]), float(req["t"]), str(req["kind"])
                    who = str(req.get("who") or "floor")[:40]
                except (ValueError, KeyError, TypeError):
                    return self._send(400, {"error": "ack takes shoe, t, kind and who"})
                ok = page.floor.acknowledge(shoe, t, kind, who)
                self._send(200 if ok else 404, {"acked": ok})

        return Handler

    def start(self):
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True,
                                       name="floor-page")
        self.thread.start()
        return self

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
