"""`facedown serve --port PORT`: one process owns a shoe's serial line (as Klipper's klippy
does) and lets any number of clients command and watch that shoe at once, over JSON lines on a
Unix socket and over HTTP/WebSocket on loopback (docs/serve.md).

Who may do what is checked as on the line itself. The server logs in to the shoe with the
table key only (a device key given to it is turned into the table key and dropped): its session
brings the down cards, which the ledger needs once a hand is over. A client is public until it
proves the table role to the server (an HMAC over the server's nonce with the table key);
public clients' commands go to the shoe as plain CMD frames, so the shoe itself masks their
status and refuses what needs a role, and the events pushed to them are masked here the way
the shoe masks them. A maintenance session is opened through the server with the maintenance
key, which stays with the client: the server relays the challenge, the login and the client's
signed ACMD frames, and logs in with its table key again when that session ends.

Events are acknowledged to the shoe only once the sink (the ledger) has saved them, so the
shoe's keep-until-acknowledged guarantee reaches the database."""

import collections
import json
import os
import queue
import secrets
import socketserver
import sys
import threading
import time

from . import served
from .client import Client, LinkDown, ShoeError
from .engine import wire
from .errors import UserError
from .events import mask  # noqa: F401  (an entry as a link without a table session sees it)

W = wire()
TABLE_TTL = 12 * 3600     # a table login to the server lasts as long as one on the shoe
MAINT_IDLE = 30 * 60      # a relayed maintenance session ends, as on the shoe, unused this long
LEASE_S = 5.0             # a relayed ACMD's frame must follow its seq within this
BACKLOG = 20000           # events kept for watchers that ask for the backlog
OUTQ = 20000              # messages queued for one slow client before it is dropped
KEEPALIVE_S = 2.0         # an idle line is pinged this often (in session: a restart shows)


class NullSink:
    """Nothing to save: every event counts as saved when it arrives (--no-ledger)."""

    def __init__(self):
        self.upto = 0

    def start(self, shoe, epoch, info):
        pass

    def offer(self, number, hand, entry, t):
        self.upto = max(self.upto, number)

    def saved(self):
        return self.upto

    def close(self):
        pass


class ServedClient(Client):
    """The server's own Client: its ACKs never run ahead of what the sink has saved."""

    saved = staticmethod(lambda: 1 << 32)

    def _write(self, ftype, seq, body):
        if ftype == W.ACK:
            body = W.encode_ack(min(W.decode_ack(body), self.saved()))
            self.acked = W.decode_ack(body)
        Client._write(self, ftype, seq, body)


class Conn:
    """One client of the server: its proven role, its outbound queue (a writer thread sends
    it: a slow client never holds up the line)."""

    def __init__(self, server, write, name):
        self.server = server
        self._write = write
        self.name = name
        self.role = "public"
        self.token = None
        self.nonce = secrets.token_bytes(16)
        self.watching = False
        self.frames = queue.Queue()  # relayed ACMD frames for a lease
        self.out = queue.Queue(OUTQ)
        self.closed = False
        self.writer = threading.Thread(target=self._drain, daemon=True)
        self.writer.start()

    def send(self, obj):
        if self.closed:
            return
        try:
            self.out.put_nowait(obj)
        except queue.Full:
            self.closed = True  # too slow to follow: dropped (it may connect again)
            self.out = queue.Queue(1)
            self.out.put_nowait(None)

    def _drain(self):
        while True:
            obj = self.out.get()
            if obj is None:
                break
            try:
                self._write(obj)
            except Exception:
                self.closed = True
                break
        self.closed = True

    def close(self):
        self.closed = True
        try:
            self.out.put_nowait(None)
        except queue.Full:
            pass

    @property
    def table(self):
        return self.role in ("table", "maintenance")


class Server:
    def __init__(self, port, key, sink=None, sock_path=None, http=None, baud=W.BAUD, log=None):
        """key: the shoe's table key (keys.Key of role table), or None for a shoe that has no
        key yet (no session: the server sees what anyone on the line sees). http: (host,
        port) for HTTP/WebSocket, or None."""
        self.port = port
        self.key = key
        self.sink = sink or NullSink()
        self.sock_path = sock_path or served.socket_path(port)
        self.http = http
        self.baud = baud
        self.log = log or (lambda text: print(text, file=sys.stderr, flush=True))
        self.jobs = queue.Queue()
        self.conns = set()
        self.lock = threading.Lock()
        self.backlog = collections.deque(maxlen=BACKLOG)
        self.tokens = {}           # token -> (role, expires)
        self.maint = None          # the time a relayed maintenance session was last used
        self.stop_flag = threading.Event()
        self.ready = threading.Event()
        self.error = None
        self.client = None
        self.info = None
        self.epoch = 0
        self.hand_seen = None
        self.counts = collections.Counter()
        self.last_ack = 0
        self.t_ping = 0.0
        self.threads = []
        self.ws = None
        self.unix = None

    # ------------------------------------------------------------------ the line

    def _open_line(self):
        c = ServedClient(self.port, on_event=self._on_event, baud=self.baud, timeout=10.0)
        c.saved = self.sink.saved
        c.open()
        self.info = c.identify(catalogue=True)
        c.call("ping", 0, seq=0)
        if self.key is not None:
            c.login(self.key, "table")
        self.client = c
        tele = self._telemetry()
        boots = tele.get("boots", 1)
        _hand, nxt, _chunk = c.call("status", 0xFFFF)
        self.epoch = self.sink.start(self.info["device_id"], boots, {"next": nxt, "info":
                                                                      self.info}) or boots
        self._hand_info(c, None)
        # the stream from the first event the sink has not saved (a new ledger: all the shoe
        # still keeps); the sink drops by key any it has
        frm = min(self.sink.saved() + 1, 0xFFFFFFFF)
        c.call("ping", 0, seq=0)
        first, nxt = c.call("resume", frm)
        c.last_event = min(max(frm, first), nxt) - 1
        self.last_ack = c.last_event
        self.sink.base = c.last_event + 1

    def _hand_info(self, c, hand):
        """The configuration and the button (public: no card) for the sink's hand records."""
        configure = getattr(self.sink, "configure", None)
        if configure is not None:
            st = self._as(c, False, c.status)
            configure(st.get("config"), (st.get("table") or {}).get("button"),
                      hand if hand is not None else st.get("hand"))
            if hasattr(self.sink, "status_from"):
                self.sink.status_from(st)

    def _telemetry(self):
        from .commands import read_chunks

        try:
            return json.loads(read_chunks(self.client, "telemetry").decode())
        except (ShoeError, ValueError):
            return {}

    def _on_event(self, number, hand, entry):
        t = time.time()
        entry = bytes(entry)
        self.counts["events"] += 1
        self.backlog.append((number, hand, entry))
        if hand != self.hand_seen:
            self.hand_seen = hand
            self.jobs.put(lambda: self._hand_info(self.client, hand))
        self.sink.offer(number, hand, entry, t)
        masked = mask(entry)
        for conn in list(self.conns):
            if conn.watching:
                conn.send({"event": [number, hand, list(entry if conn.table else masked)]})

    def line_loop(self):
        try:
            self._open_line()
        except BaseException as e:
            self.error = e
            self.ready.set()
            return
        self.ready.set()
        c = self.client
        while not self.stop_flag.is_set():
            try:
                job = self.jobs.get_nowait()
            except queue.Empty:
                job = None
            if job is not None:
                self._flush_ack()  # (a new hand needs the old ones acknowledged)
                self._run(job)
                continue
            try:
                c.pump(0.01)
                self._housekeeping()
            except LinkDown as e:
                self.log("serve: %s" % e)
            except ShoeError as e:
                self.log("serve: %s" % e)

    def _flush_ack(self):
        c = self.client
        saved = min(self.sink.saved(), c.last_event)
        if saved > self.last_ack:
            self.last_ack = saved
            c._write(W.ACK, 0, W.encode_ack(saved))

    def _housekeeping(self):
        c = self.client
        self._flush_ack()
        now = time.monotonic()
        if self.maint is not None and now - self.maint > MAINT_IDLE:
            self._end_maintenance("unused for %d minutes" % (MAINT_IDLE // 60))
        if now - self.t_ping > KEEPALIVE_S:
            self.t_ping = now
            before = c.session
            c.call("ping", 0)  # in our session: a shoe that restarted answers SESSION, and
            if c.session is not before:  # the client logs in again by itself:
                c.resume()  # take up the stream where it was

    def _end_maintenance(self, why):
        self.maint = None
        self.log("serve: the relayed maintenance session ended (%s); the table session again"
                 % why)
        if self.key is not None:
            self.client.login(self.key, "table")
            self.client.resume()
        self._hand_info(self.client, None)  # (a new configuration, perhaps)

    def submit(self, fn, conn=None):
        """Run fn(client) on the line thread; wait for its result (or its exception)."""
        done = threading.Event()
        box = {}

        def job():
            try:
                box["value"] = fn(self.client)
            except BaseException as e:
                box["error"] = e
            done.set()

        self.jobs.put(job)
        if not done.wait(60):
            raise UserError("the shoe's line is busy: no answer in 60 s")
        if "error" in box:
            raise box["error"]
        return box["value"]

    def _run(self, job):
        try:
            job()
        except (ShoeError, LinkDown) as e:  # (a job of the server's own; the clients'
            self.log("serve: %s" % e)        # report theirs)

    # ------------------------------------------------------------------ requests

    def handle(self, conn, req):
        """One request -> its answer (a dict)."""
        op = req.get("op")
        fn = getattr(self, "op_" + str(op), None)
        if fn is None:
            return {"error": "unknown request %r" % (op,),
                    "hint": "requests: " + ", ".join(sorted(
                        n[3:] for n in dir(self) if n.startswith("op_")))}
        try:
            out = fn(conn, req)
        except ShoeError as e:
            return {"error": e.message, "code": e.code, "command": e.command}
        except UserError as e:
            return {"error": str(e), "hint": e.hint}
        except (KeyError, TypeError, ValueError) as e:
            return {"error": "malformed %s request: %s" % (op, e),
                    "hint": "see docs/serve.md for the requests and their fields"}
        return out

    def op_hello(self, conn, req):
        return {"info": self.info, "nonce": conn.nonce.hex(), "pid": os.getpid(), "port": self.port,
                "role": conn.role, "epoch": self.epoch}

    def op_identify(self, conn, req):
        return {"info": self.info}

    def op_login(self, conn, req):
        import hmac

        if req.get("role") != "table":
            return {"error": "the server opens table sessions only; a maintenance session is "
                             "opened on the shoe through it",
                    "hint": "facedown --port %s login --role maintenance" % self.port}
        if self.key is None:
            return {"error": "this server holds no table key: the shoe has none yet"}
        rkey = self.key.for_role(W.ROLE_TABLE)
        cnonce = bytes.fromhex(req["nonce"])
        snonce, conn.nonce = conn.nonce, secrets.token_bytes(16)  # one try per nonce
        want = served.login_proof(rkey, W.ROLE_TABLE, self.info["device_id"], snonce, cnonce)
        if not hmac.compare_digest(want, bytes.fromhex(req["proof"])):
            self.counts["failed_logins"] += 1
            self.log("serve: a failed table login from %s" % conn.name)
            time.sleep(1)  # (as the shoe: no fast guessing)
            return {"error": "table login refused: the proof does not match this shoe's key",
                    "hint": "use the shoe's key file (--key-file FILE)"}
        token = secrets.token_hex(16)
        self.tokens[token] = ("table", time.time() + TABLE_TTL)
        conn.role = "table"
        conn.token = token
        return {"role": "table", "token": token, "nonce": conn.nonce.hex(),
                "proof": served.server_proof(rkey, snonce, cnonce).hex()}

    def op_token(self, conn, req):
        got = self.tokens.get(req["token"])
        if got is None or got[1] < time.time():
            self.tokens.pop(req["token"], None)
            return {"error": "that session with the server has ended",
                    "hint": "facedown --port %s login" % self.port}
        conn.role, conn.token = got[0], req["token"]
        return {"role": conn.role}

    def op_logout(self, conn, req):
        if conn.token:
            self.tokens.pop(conn.token, None)
        conn.role, conn.token = "public", None
        return {"role": "public"}

    def _busy_maint(self, name):
        return ShoeError(W.BUSY, "a maintenance session is open on the shoe through this "
                                 "server; it ends with `facedown --port %s logout` or after "
                                 "%d minutes unused" % (self.port, MAINT_IDLE // 60), name)

    def op_call(self, conn, req):
        name = req["name"]
        args = served.from_json(req.get("args") or [])
        W.command_id(name)  # an unknown command: one clear line

        def run(c):
            if name in ("challenge", "login"):
                return self._relay_handshake(c, name, args)
            role = W.COMMAND_ROLE[W.command_id(name)]
            in_session = conn.table and c.session is not None and self.maint is None
            if self.maint is not None and role >= W.ROLE_TABLE:
                raise self._busy_maint(name)
            return self._as(c, in_session, lambda: c.call(name, *args))

        return {"values": served.to_json(list(self.submit(run)))}

    def _as(self, c, in_session, fn):
        """Run fn with the server's session (in_session) or as a public command."""
        if in_session:
            return fn()
        session, creds = c.session, c.credentials
        c.session = c.credentials = None
        try:
            return fn()
        finally:
            c.session, c.credentials = session, creds

    def _relay_handshake(self, c, name, args):
        out = self._as(c, False, lambda: c.call(name, *args))
        if name == "login":  # the shoe now holds the client's session; ours has ended
            c.session = None
            self.maint = time.monotonic()
            self.log("serve: a maintenance session was opened on the shoe through the server")
        return out

    def op_acmd(self, conn, req):
        """A relayed ACMD, step one: the seq its tag must cover. The line waits (pumping) for
        the frame (op frame) up to LEASE_S; nothing else is sent meanwhile."""
        name = req["name"]
        W.command_id(name)
        got = threading.Event()
        box = {}

        def run(c):
            c.seq = W.next_seq(c.seq)
            box["seq"] = c.seq
            got.set()
            end = time.monotonic() + LEASE_S
            while time.monotonic() < end:
                try:
                    frame = conn.frames.get_nowait()
                except queue.Empty:
                    c.pump(0.005)
                    continue
                if frame["seq"] != box["seq"]:
                    continue
                body = bytes.fromhex(frame["body"])
                reply = c._exchange(W.ACMD, box["seq"], body, name)
                if self.maint is not None:
                    self.maint = time.monotonic()
                code = reply[0] if reply else W.BAD_FRAME
                if code == W.SESSION or (name == "logout" and code == W.OK):
                    if self.maint is not None:
                        self._end_maintenance("logout" if code == W.OK else "the shoe ended it")
                frame["reply"] = reply.hex()
                frame["done"].set()
                return
            box["late"] = True

        threading.Thread(target=lambda: self.submit(run), daemon=True).start()
        if not got.wait(60):
            raise UserError("the shoe's line is busy: no answer in 60 s")
        conn.lease = box
        return {"seq": box["seq"]}

    def op_frame(self, conn, req):
        frame = {"seq": int(req["seq"]), "body": req["body"], "done": threading.Event()}
        conn.frames.put(frame)
        if not frame["done"].wait(60):
            raise UserError("the relayed command timed out")
        return {"reply": frame["reply"]}

    def op_status(self, conn, req):
        def run(c):
            return self._as(c, conn.table and self.maint is None and c.session is not None,
                            c.status)
        return {"status": self.submit(run)}

    def op_watch(self, conn, req):
        backlog = bool(req.get("backlog"))

        def run(c):  # on the line thread: no event slips between the backlog and the stream
            last = c.last_event
            if backlog:
                for number, hand, entry in self.backlog:
                    conn.send({"event": [number, hand, list(entry if conn.table else
                                                            mask(entry))]})
                last = self.backlog[0][0] - 1 if self.backlog else last
            conn.watching = True
            return last
        return {"last": self.submit(run)}

    def op_sync(self, conn, req):
        def run(c):
            return c.sync(float(req.get("timeout", 10)))
        return {"upto": self.submit(run)}

    def op_server(self, conn, req):
        """The server's own figures (no card data)."""
        return {"pid": os.getpid(), "port": self.port, "clients": len(self.conns),
                "events": self.counts["events"], "saved": self.sink.saved(),
                "acked": getattr(self.client, "acked", 0), "epoch": self.epoch,
                "maintenance": self.maint is not None,
                "failed_logins": self.counts["failed_logins"],
                "line": dict(self.client.stats)}

    # ------------------------------------------------------------------ transports

    def serve_forever(self):
        t = threading.Thread(target=self.line_loop, daemon=True, name="line")
        t.start()
        self.threads.append(t)
        self.ready.wait()
        if self.error is not None:
            raise self.error
        self._start_unix()
        if self.http:
            self._start_ws()

    def _start_unix(self):
        path = self.sock_path
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        try:
            os.remove(path)
        except OSError:
            pass
        server = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self):
                sock = self.request
                lock = threading.Lock()

                def write(obj):
                    data = json.dumps(obj, separators=(",", ":")).encode() + b"\n"
                    with lock:
                        sock.sendall(data)

                server._serve_conn(write, lambda: self.rfile.readline(), "unix")

        class Unix(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
            daemon_threads = True

        old = os.umask(0o177)  # the socket: its owner only (a console of the same user)
        try:
            self.unix = Unix(path, Handler)
        finally:
            os.umask(old)
        t = threading.Thread(target=self.unix.serve_forever, daemon=True, name="unix")
        t.start()
        self.threads.append(t)

    def _serve_conn(self, write, readline, name):
        conn = Conn(self, write, name)
        with self.lock:
            self.conns.add(conn)
        try:
            while not conn.closed:
                line = readline()
                if not line:
                    break
                try:
                    req = json.loads(line)
                    if not isinstance(req, dict):
                        raise ValueError("not an object")
                except ValueError as e:
                    conn.send({"error": "not a JSON request: %s" % e,
                               "hint": 'one JSON object a line, e.g. {"id": 1, "op": "hello"}'})
                    continue
                if req.get("op") == "frame":  # the lease waits for it: answer on its own
                    threading.Thread(target=lambda r=req: self._answer(conn, r),
                                     daemon=True).start()
                    continue
                self._answer(conn, req)
        finally:
            with self.lock:
                self.conns.discard(conn)
            conn.close()

    def _answer(self, conn, req):
        out = self.handle(conn, req)
        out["id"] = req.get("id")
        conn.send(out)

    def _start_ws(self):
        from websockets.http11 import Response
        from websockets.datastructures import Headers
        from websockets.sync.server import serve

        server = self

        def process_request(connection, request):
            if request.headers.get("Upgrade", "").lower() == "websocket":
                return None
            path = request.path.split("?")[0]
            if path == "/status":  # what anyone may see (public)
                body = json.dumps(server.submit(lambda c: server._as(c, False, c.status)))
            elif path == "/server":
                body = json.dumps(server.op_server(None, {}))
            else:
                return connection.respond(404, "GET /status, /server, or a WebSocket\n")
            return Response(200, "OK", Headers([("Content-Type", "application/json"),
                                                ("Content-Length", str(len(body)))]),
                            body.encode())

        def handler(ws):
            def write(obj):
                ws.send(json.dumps(obj, separators=(",", ":")))

            def readline():
                try:
                    return ws.recv()
                except Exception:
                    return ""

            server._serve_conn(write, readline, "ws %s" % (ws.remote_address,))

        host, port = self.http
        self.ws = serve(handler, host, port, process_request=process_request)
        t = threading.Thread(target=self.ws.serve_forever, daemon=True, name="ws")
        t.start()
        self.threads.append(t)

    def close(self):
        self.stop_flag.set()
        if self.unix is not None:
            self.unix.shutdown()
            self.unix.server_close()
            try:
                os.remove(self.sock_path)
            except OSError:
                pass
        if self.ws is not None:
            self.ws.shutdown()
        for t in self.threads:
            if t.name == "line":
                t.join(5)
        if self.client is not None:
            self.client.close()
        self.sink.close()


def table_key(device, path=None):
    """The table key the server logs in with, from a key file or the key store; a device key
    is turned into the table key here and not kept."""
    from . import keys

    key = keys.find_key(device, path)
    if key is None:
        return None
    if key.role == "maintenance":
        raise UserError("the server needs the shoe's table key, not a maintenance key",
                        hint="facedown keys derive --role table --device %s --out FILE" % device)
    return key if key.role == "table" else key.derive("table")


def add_command(sub):
    p = sub.add_parser("serve", help="own the shoe's serial line and serve it to many clients "
                                     "(JSON over a Unix socket, HTTP/WebSocket on loopback)")
    p.add_argument("--key-file", metavar="FILE",
                   help="the shoe's table key (a device key is turned into the table key and "
                        "dropped); default: $FACEDOWN_KEY_FILE, $FACEDOWN_KEY, the key store")
    p.add_argument("--http", default="127.0.0.1:0", metavar="HOST:PORT",
                   help="HTTP/WebSocket address (default 127.0.0.1 and a free port; 'off': none)")
    p.add_argument("--ledger", default=None, metavar="URL",
                   help="the hand ledger: a SQLite file (default FACEDOWN_HOME/ledger.sqlite), "
                        "postgresql://... , or 'off' (events acknowledged on arrival)")
    p.add_argument("--mqtt", default=None, metavar="HOST:PORT",
                   help="publish to the room's MQTT broker (the room's ledger acknowledges)")
    p.add_argument("--mqtt-password-file", metavar="FILE",
                   help="this shoe's broker password (its user is the shoe's id; "
                        "docs/room.md); default $FACEDOWN_MQTT_PASSWORD")
    p.add_argument("--table", default=None, help="the table's name on the floor page")
    p.add_argument("--dealer", default=None, help="the dealer's name on the floor page")
    p.add_argument("--name", default=None, help="the shoe's name in the room (default: its id)")
    p.add_argument("--seconds", type=float, default=0, help="stop after this long (0: never)")
    p.set_defaults(func=run)


def _http_address(text):
    if text == "off":
        return None
    host, _, port = text.rpartition(":")
    try:
        return (host or "127.0.0.1", int(port))
    except ValueError:
        raise UserError("--http takes HOST:PORT (or off), not %r" % text)


def _device_of(port):
    c = Client(port, timeout=5.0).open()
    try:
        return c.identify()["device_id"]
    finally:
        c.close()


def run(args):
    if not args.port:
        raise UserError("serve owns a shoe's port: give --port PORT",
                        hint="`facedown sim` starts a virtual shoe and prints its port")
    sock = served.server_for(args.port)
    if sock is not None:
        sock.close()
        raise UserError("a server already owns %s (its socket: %s)" % (
            args.port, served.socket_path(args.port)))
    http = _http_address(args.http)
    device = _device_of(args.port)
    key = table_key(device, args.key_file)
    sink = make_sink(args, device)
    server = Server(args.port, key, sink=sink, http=http)
    try:
        server.serve_forever()
        where = ""
        if server.ws is not None:
            host, port = server.ws.socket.getsockname()[:2]
            where = ", http://%s:%d (WebSocket /)" % (host, port)
        print("serving %s (%s) on %s%s; %s" % (
            args.port, device, server.sock_path, where,
            "table session" if key is not None else "no key: public view only"), flush=True)
        end = time.monotonic() + args.seconds if args.seconds else None
        while (end is None or time.monotonic() < end) and not server.stop_flag.is_set():
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


def make_sink(args, device):
    if args.mqtt:
        from .broker import user_name
        from .mqtt import MqttSink

        host, port = _http_address(args.mqtt)
        password = os.environ.get("FACEDOWN_MQTT_PASSWORD")
        if args.mqtt_password_file:
            try:
                with open(args.mqtt_password_file) as f:
                    password = f.read().strip()
            except OSError as e:
                raise UserError("cannot read %s: %s" % (args.mqtt_password_file, e.strerror))
        if not password:
            raise UserError("the broker needs this shoe's password",
                            hint="--mqtt-password-file FILE or $FACEDOWN_MQTT_PASSWORD")
        return MqttSink(host, port, user_name(device), password, name=args.name,
                        table=args.table, dealer=args.dealer)
    if args.ledger == "off":
        return NullSink()
    from .ledger import Ledger, LedgerSink

    return LedgerSink(Ledger(args.ledger), name=args.name)
