"""The client end of `facedown serve`: where a served port's socket is, the JSON requests, and
RemoteClient, which the CLI uses in place of a serial Client when a server owns the port.

The API (docs/serve.md): one JSON object per line over the Unix socket (or per message over
the WebSocket), each request with an "id" that its answer carries; events are pushed as
{"event": [number, hand, [op, a, b, c]]}. Bytes travel as {"b": "hex"}."""

import hashlib
import hmac
import json
import os
import re
import socket
import time

from .engine import wire
from .errors import UserError

W = wire()
ENV_RUN = "FACEDOWN_RUN"  # where servers put their sockets (default: FACEDOWN_HOME/run)
LOGIN_TAG = b"facedown serve login"
SERVER_TAG = b"facedown serve"


def run_dir():
    from . import keys

    return os.environ.get(ENV_RUN) or os.path.join(keys.home(), "run")


def _name(port):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.realpath(port) if port.startswith("/")
                  else port)


def socket_path(port):
    """The Unix socket of the server for port (the same path for every spelling of it)."""
    return os.path.join(run_dir(), _name(port) + ".sock")


def token_path(port):
    return os.path.join(run_dir(), _name(port) + ".token")


def login_proof(table_key, role, device, server_nonce, client_nonce):
    """What a client sends the server to prove it holds the table key (HMAC-SHA256)."""
    return hmac.new(table_key, LOGIN_TAG + bytes((role,)) + device.encode() + server_nonce +
                    client_nonce, hashlib.sha256).digest()


def server_proof(table_key, server_nonce, client_nonce):
    """The server's answer: it holds the same key (it is the shoe's server, not an impostor)."""
    return hmac.new(table_key, SERVER_TAG + server_nonce + client_nonce,
                    hashlib.sha256).digest()


def to_json(value):
    """Reply values for JSON: bytes as {"b": hex}, tuples as lists."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"b": bytes(value).hex()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    return value


def from_json(value):
    if isinstance(value, dict) and set(value) == {"b"}:
        return bytes.fromhex(value["b"])
    if isinstance(value, list):
        return [from_json(v) for v in value]
    return value


def server_for(port):
    """A connected socket to the server that owns port, or None when none runs (a socket file
    left by a server that died is removed)."""
    if not port:
        return None
    path = socket_path(port)
    if not os.path.exists(path):
        return None
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
    except OSError:
        s.close()
        return None
    return s


class RemoteClient:
    """The Client interface (call, status, pump, sync, info, session, on_event) over a server's
    socket. Commands run in the server's table session when this client has proven the table
    role to the server, as public commands otherwise; a maintenance session (opened through
    the server with the maintenance key, which the server never holds) signs its own ACMD
    frames here, the server only relays them."""

    def __init__(self, port, sock, on_event=None, timeout=30.0):
        self.path = port
        self.sock = sock
        self.sock.settimeout(None)
        self.on_event = on_event
        self.timeout = timeout
        self.buf = b""
        self.next_id = 0
        self.pushed = []
        self.session = None      # keys.Session of a relayed maintenance session
        self.on_session = None
        self.role = "public"     # what this connection has proven to the server
        self.last_event = 0
        self.stats = {"events": 0}
        hello = self.request("hello")
        self.nonce = bytes.fromhex(hello["nonce"])
        self.info = hello["info"]
        self.server = hello

    # ------------------------------------------------------------------ the socket

    def _send(self, obj):
        self.sock.sendall(json.dumps(obj, separators=(",", ":")).encode() + b"\n")

    def _read(self, deadline):
        while b"\n" not in self.buf:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return None
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                return None
            except OSError as e:
                raise UserError("the server for %s went away: %s" % (self.path, e))
            if not data:
                raise UserError("the server for %s closed the connection" % self.path,
                                hint="is `facedown serve --port %s` still running?" % self.path)
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def request(self, op, **fields):
        self.next_id += 1
        rid = self.next_id
        fields.update(op=op, id=rid)
        self._send(fields)
        deadline = time.monotonic() + self.timeout
        while True:
            msg = self._read(deadline)
            if msg is None:
                raise UserError("the server for %s did not answer %s in %d s" % (
                    self.path, op, self.timeout))
            if "event" in msg:
                self._event(msg["event"])
                continue
            if msg.get("id") != rid:
                continue
            if "error" in msg:
                self._raise(msg, op)
            return msg

    def _raise(self, msg, what):
        from .client import ShoeError

        if "code" in msg:
            raise ShoeError(msg["code"], msg["error"], msg.get("command", what))
        raise UserError(msg["error"], hint=msg.get("hint"))

    def _event(self, ev):
        number, hand, entry = ev
        if number <= self.last_event:
            return
        self.last_event = number
        self.stats["events"] += 1
        if self.on_event is not None:
            self.on_event(number, hand, bytes(entry))

    # ------------------------------------------------------------------ the Client interface

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def use_token(self, token):
        """Take up a session the server gave an earlier `facedown login` (False if it ended)."""
        try:
            self.role = self.request("token", token=token)["role"]
            return True
        except UserError:
            return False

    def login_table(self, key):
        """Prove the table role to the server with the table (or device) key."""
        rkey = key.for_role(W.ROLE_TABLE)
        cnonce = os.urandom(16)
        proof = login_proof(rkey, W.ROLE_TABLE, self.info["device_id"], self.nonce, cnonce)
        reply = self.request("login", role="table", nonce=cnonce.hex(), proof=proof.hex())
        if not hmac.compare_digest(bytes.fromhex(reply["proof"]),
                                   server_proof(rkey, self.nonce, cnonce)):
            raise UserError("the server for %s did not prove it holds this shoe's table key"
                            % self.path, hint="check which server owns the port")
        self.role = "table"
        self.nonce = bytes.fromhex(reply["nonce"])
        return reply["token"]

    def login_relayed(self, key, role):
        """A shoe session of role opened through the server (challenge and login relayed: the
        shoe checks the proof, the key stays here). Returns the keys.Session."""
        from . import keys as K

        rkey = key.for_role(K.ROLES[role])
        self.session = K.open_session(self.call, rkey, role, self.info["device_id"], self.path)
        self.role = role
        return self.session

    def call(self, name, *args, seq=None):
        from .client import ShoeError

        if self.session is not None and name not in ("identify", "challenge", "login"):
            body = W.encode_command(name, args)
            lease = self.request("acmd", name=name)
            frame = self.session.frame_body(lease["seq"], body)
            reply = bytes.fromhex(self.request("frame", seq=lease["seq"], name=name,
                                               body=frame.hex())["reply"])
            if self.on_session is not None:
                self.on_session(self.session)
            code, values = W.decode_reply(reply, W.COMMAND_REPLY[W.command_id(name)])
            if code != W.OK:
                raise ShoeError(code, values, name)
            return tuple(values)
        reply = self.request("call", name=name, args=to_json(list(args)))
        return tuple(from_json(reply["values"]))

    def logout(self):
        if self.session is not None:
            try:
                self.call("logout")
            finally:
                self.session = None
        else:
            self.request("logout")
        self.role = "public"

    @property
    def sees_down_cards(self):
        return self.role in ("table", "maintenance")

    def identify(self, catalogue=False):
        return self.info

    def status(self):
        return self.request("status")["status"]

    def watch(self, backlog=False):
        self.last_event = self.request("watch", backlog=bool(backlog))["last"]
        return self.last_event

    def pump(self, wait=0.0):
        deadline = time.monotonic() + wait
        handled = 0
        while True:
            msg = self._read(deadline)
            if msg is None:
                return handled
            if "event" in msg:
                self._event(msg["event"])
                handled += 1
            deadline = time.monotonic()  # take what is already here, then return

    def sync(self, timeout=10.0):
        upto = self.request("sync", timeout=timeout)["upto"]
        end = time.monotonic() + timeout
        while self.last_event < upto and time.monotonic() < end:
            self.pump(0.05)
        return upto


def connect(port, backlog=False, on_event=None, watch=False, stored=True):
    """A RemoteClient for port if a server owns it, else None. stored: take up the session a
    `facedown login` through this server left (a table token, or a relayed maintenance
    session)."""
    from . import keys

    sock = server_for(port)
    if sock is None:
        return None
    client = RemoteClient(port, sock, on_event=on_event)
    try:
        if stored:
            session = keys.load_session(port)
            if session is not None and session.device == client.info["device_id"]:
                client.session = session
                client.role = session.role
                client.on_session = lambda s: keys.save_session(port, s)
            else:
                token = read_token(port)
                if token and not client.use_token(token):
                    drop_token(port)
        if watch or on_event is not None:
            client.watch(backlog)
    except BaseException:
        client.close()
        raise
    return client


def save_token(port, token):
    from .keys import _private_write

    _private_write(token_path(port), token + "\n")


def read_token(port):
    try:
        with open(token_path(port)) as f:
            return f.read().strip()
    except OSError:
        return None


def drop_token(port):
    try:
        os.remove(token_path(port))
    except OSError:
        pass


def login_command(client, args):
    """`facedown login` when a server owns the port: a table login to the server (a token kept
    for the commands that follow), or a maintenance session on the shoe, relayed."""
    from . import keys

    try:
        device = client.info["device_id"]
        key = keys.find_key(device, args.key_file)
        if key is None:
            raise UserError("no key for %s" % device,
                            hint="give --key-file FILE or set $FACEDOWN_KEY_FILE (facedown "
                                 "provision wrote the shoe's key file)")
        if args.role == "table":
            save_token(args.port, client.login_table(key))
            keys.drop_session(args.port)
            number = "-"
        else:
            session = client.login_relayed(key, args.role)
            keys.save_session(args.port, session)
            drop_token(args.port)
            number = session.number
    finally:
        client.close()
    print("%s session %s open on %s (%s, through the server)" % (args.role, number, device,
                                                                 args.port))
    return 0
