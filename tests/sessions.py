"""Test helper: a Device in this process, provisioned and driven through a session, the way
the host's client does it over the wire (facedown/keys.py does the host's half)."""

import json
import os

from facedown import keys


def provision(folder, device_id, code_files=(), rom=None):
    """Give the shoe whose filesystem is folder a key and a signed manifest of code_files
    (paths relative to folder, or "/rom/..." in the folder rom that plays its ROMFS). Returns
    the keys.Key."""
    import hashlib

    key = keys.Key.generate(device_id)
    with open(os.path.join(folder, "device.key"), "w") as f:
        f.write(key.key.hex())
    files = {}
    for rel in code_files:
        path = os.path.join(rom, rel[5:]) if rel.startswith("/rom/") else os.path.join(folder, rel)
        with open(path, "rb") as f:
            files[rel] = {"sha256": hashlib.sha256(f.read()).hexdigest()}
    data = json.dumps({"files": files}).encode()
    with open(os.path.join(folder, "manifest.json"), "wb") as f:
        f.write(data)
    with open(os.path.join(folder, "manifest.mac"), "w") as f:
        f.write(key.manifest_mac(data))
    return key


class InProcess:
    """run(name, *values) -> reply body, as an ACMD of a session opened with key."""

    def __init__(self, dev, wire, key=None, role="maintenance"):
        self.dev = dev
        self.W = wire
        self.seq = 0
        self.session = None
        dev.run(0, wire.encode_command("ping", (0,)))  # a numbering of its own (no old replies)
        if key is not None:
            self.login(key, role)

    def raw(self, name, *values, ftype=None):
        self.seq += 1
        body = self.W.encode_command(name, values)
        if self.session is not None and ftype is None and name not in ("challenge", "login"):
            return self.dev.run(self.seq, self.session.frame_body(self.seq, body), self.W.ACMD)
        return self.dev.run(self.seq, body, ftype or self.W.CMD)

    def call(self, name, *values):
        body = self.raw(name, *values)
        code, got = self.W.decode_reply(body, self.W.COMMAND_REPLY[self.W.COMMAND_IDS[name]])
        if code:
            raise AssertionError("%s: %s" % (name, got))
        return got

    def login(self, key, role="maintenance"):
        r = keys.ROLES[role]
        rk = key.for_role(r)
        self.session = None
        (dn,) = self.call("challenge", r)
        hn = os.urandom(16)
        proof = keys.login_proof(rk, r, key.device, dn, hn, 1700000000)
        dproof, number = self.call("login", hn, proof, 1700000000)
        assert keys.check_device_proof(rk, dn, hn, dproof)
        self.session = keys.Session(key.device, role, keys.session_key(rk, dn, hn), number)
        return self.session
