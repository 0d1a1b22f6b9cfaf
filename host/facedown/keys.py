"""Keys and sessions, host side.

A shoe's key is 32 random bytes made once, at installation (`facedown provision`), and known
only to that shoe and to key files kept by the people allowed to open sessions on it. A key file
holds the device key itself (role "device": any session) or a key derived from it for one role
(`facedown keys derive --role table`: a table console that cannot open a maintenance session).
Key files are read from a path or the environment, never from a command-line argument, and are
written readable by their owner only. A session opened by `facedown login` is kept in a session
file (the session key and its counter) so that the commands that follow can use it."""

import hashlib
import hmac
import json
import os
import re
import secrets
import time

from .engine import wire
from .errors import UserError

W = wire()
ROLES = {"table": W.ROLE_TABLE, "maintenance": W.ROLE_MAINTENANCE}
KEY_ROLES = ("device", "table", "maintenance")
ENV_KEY = "FACEDOWN_KEY"            # a key file's text (or 64 hex digits: a device key)
ENV_KEY_FILE = "FACEDOWN_KEY_FILE"  # a key file's path
ENV_HOME = "FACEDOWN_HOME"          # where key and session files live (~/.config/facedown)


def mac(key, data):
    return hmac.new(key, data, hashlib.sha256).digest()


def home():
    return os.environ.get(ENV_HOME) or os.path.join(os.path.expanduser("~"), ".config",
                                                    "facedown")


def _private_write(path, text):
    os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


class Key:
    """A key for one shoe: the device key (role "device") or one role's key."""

    def __init__(self, device, role, key):
        if role not in KEY_ROLES:
            raise UserError("a key's role is one of %s, not %r" % (", ".join(KEY_ROLES), role))
        if len(key) != 32:
            raise UserError("a key is 32 bytes, not %d" % len(key))
        self.device = device
        self.role = role
        self.key = bytes(key)

    @classmethod
    def generate(cls, device):
        return cls(device, "device", secrets.token_bytes(32))

    def for_role(self, role):
        """The key that opens a session of role (a number), or UserError."""
        if self.role == "device":
            return mac(self.key, W.role_message(role))
        if ROLES[self.role] == role:
            return self.key
        raise UserError("this key opens %s sessions only, not %s" % (self.role, W.ROLES[role]),
                        hint="use the device key or a %s key" % W.ROLES[role])

    def derive(self, role):
        """A key file for one role (given to a table console, say)."""
        return Key(self.device, role, self.for_role(ROLES[role]))

    def manifest_mac(self, data):
        """The manifest's MAC the shoe checks at boot (firmware/integrity.py)."""
        return mac(self.for_role(W.ROLE_MAINTENANCE), b"facedown manifest" + data).hex()

    def text(self):
        return ("# facedown key: keep it secret. It opens sessions on this shoe only.\n"
                "device %s\nrole %s\nkey %s\n" % (self.device, self.role, self.key.hex()))

    def save(self, path):
        _private_write(path, self.text())

    @classmethod
    def parse(cls, text, where):
        fields = {}
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, value = line.partition(" ")
            fields[name] = value.strip()
        if re.fullmatch(r"[0-9a-fA-F]{64}", text.strip()):  # bare hex: a device key
            return cls(None, "device", bytes.fromhex(text.strip()))
        try:
            return cls(fields.get("device") or None, fields.get("role", "device"),
                       bytes.fromhex(fields["key"]))
        except (KeyError, ValueError):
            raise UserError("%s is not a facedown key file" % where,
                            hint="facedown provision writes one")

    @classmethod
    def load(cls, path):
        try:
            with open(path) as f:
                return cls.parse(f.read(), path)
        except OSError as e:
            raise UserError("cannot read the key file %s: %s" % (path, e.strerror))


def keystore_path(device):
    return os.path.join(home(), "keys", re.sub(r"[^A-Za-z0-9_.-]", "_", device) + ".key")


def find_key(device=None, path=None):
    """The key to log in with: from path, else $FACEDOWN_KEY_FILE, else $FACEDOWN_KEY, else the
    key store's file for this device. None if there is none."""
    path = path or os.environ.get(ENV_KEY_FILE)
    if path:
        return Key.load(path)
    text = os.environ.get(ENV_KEY)
    if text:
        return Key.parse(text, "$" + ENV_KEY)
    if device:
        p = keystore_path(device)
        if os.path.exists(p):
            return Key.load(p)
    return None


class Session:
    """An open session: its key and the counter of the last command sent."""

    def __init__(self, device, role, skey, number, counter=0, opened=None):
        self.device = device
        self.role = role
        self.skey = bytes(skey)
        self.number = number
        self.counter = counter
        self.opened = opened if opened is not None else time.time()

    def frame_body(self, seq, cmd_body):
        """The ACMD body for a command (a new counter each call)."""
        self.counter += 1
        tag = mac(self.skey, W.acmd_message(seq, self.counter, cmd_body))
        return W.encode_acmd(self.counter, tag, cmd_body)

    def to_json(self):
        return json.dumps({"device": self.device, "role": self.role, "key": self.skey.hex(),
                           "number": self.number, "counter": self.counter,
                           "opened": self.opened})

    @classmethod
    def from_json(cls, text):
        d = json.loads(text)
        return cls(d["device"], d["role"], bytes.fromhex(d["key"]), d["number"], d["counter"],
                   d["opened"])


def session_path(port):
    return os.path.join(home(), "sessions", re.sub(r"[^A-Za-z0-9_.-]", "_", port) + ".json")


def save_session(port, session):
    _private_write(session_path(port), session.to_json())


def load_session(port):
    try:
        with open(session_path(port)) as f:
            return Session.from_json(f.read())
    except (OSError, ValueError, KeyError):
        return None


def drop_session(port):
    try:
        os.remove(session_path(port))
    except OSError:
        pass


def login_proof(rkey, role, device, device_nonce, host_nonce, when):
    return mac(rkey, W.login_message(role, device, device_nonce, host_nonce, when))


def check_device_proof(rkey, device_nonce, host_nonce, proof):
    return hmac.compare_digest(mac(rkey, W.device_message(device_nonce, host_nonce)),
                               bytes(proof))


def session_key(rkey, device_nonce, host_nonce):
    return mac(rkey, W.session_message(device_nonce, host_nonce))


def open_session(call, rkey, role, device, where):
    """The challenge-response that opens a session of role (a name) on a shoe, through
    call(name, *args) (a serial Client's, or a server's relay): the proof with the role key
    rkey, and the shoe's proof that it holds the key too. Returns the Session."""
    number = ROLES[role]
    (dnonce,) = call("challenge", number)
    hnonce = os.urandom(W.NONCE)
    when = int(time.time())
    proof = login_proof(rkey, number, device, dnonce, hnonce, when)
    dproof, session_no = call("login", hnonce, proof, when)
    if not check_device_proof(rkey, dnonce, hnonce, dproof):
        raise UserError("the shoe on %s did not prove it holds the key: it is not %s" % (
            where, device), hint="check which shoe is on this port")
    return Session(device, role, session_key(rkey, dnonce, hnonce), session_no)
