# The audit log: configuration changes, deploys and maintenance, logins (and failed ones), mode
# changes, firmware checks, faults and misdeals, each with its time and actor. JSON lines in
# audit.log on the shoe's filesystem, hash-chained: each record holds the SHA-256 of the one
# before it and its own, so a changed, inserted or removed record breaks the chain. Never any
# card. A record torn by a power cut is dropped at boot (and that is logged); when the file
# passes MAX_BYTES it becomes audit.old (the one before is dropped) and the chain goes on.
import hashlib
import json
from binascii import hexlify

LOG = "audit.log"
OLD = "audit.old"
MAX_BYTES = 16384
EXPORT_BYTES = 4096
ZERO = "0" * 64


def record_hash(body):
    return hexlify(hashlib.sha256(body.encode()).digest()).decode()


def check_line(line, prev):
    """(record dict, its hash) if line is a whole record chained to prev, else None."""
    i = line.rfind(', "hash": "')
    if i < 0 or not line.endswith('"}'):
        return None
    try:
        rec = json.loads(line)
    except ValueError:
        return None
    h = record_hash(line[:i])
    if rec.get("hash") != h or (prev is not None and rec.get("prev") != prev):
        return None
    return rec, h


class Audit:
    def __init__(self, store, clock, boot=0):
        self.store = store
        self.clock = clock
        self.boot = boot
        self.t0 = 0            # Unix seconds at ticks 0, once a host told the time (login)
        self.n = 0
        self.prev = ZERO
        self.torn = 0
        self._load()

    def _load(self):
        """The last good record of the log: its number and hash. A torn tail is cut off."""
        good = 0
        for name in (OLD, LOG):
            pos = 0
            for line in self.store.lines(name):
                got = check_line(line.rstrip("\n"), None) if line.endswith("\n") else None
                if got is None:
                    if name == LOG:
                        self.torn += 1
                        break
                    continue
                self.n = got[0]["n"]
                self.prev = got[1]
                pos += len(line)
                if name == LOG:
                    good = pos
        if self.torn:  # keep the whole records before the tear
            data = self.store.read(LOG, "rb") or b""
            self.store.write(LOG, data[:good])
            self.add("device", "audit-torn", "a record cut by a power cut was dropped")

    def set_time(self, unix):
        if unix:
            self.t0 = unix - self.clock.ticks_ms() // 1000

    def add(self, actor, what, detail=""):
        ms = self.clock.ticks_ms()
        body = '{"n": %d, "time": %d, "boot": %d, "ms": %d, "actor": %s, "what": %s, ' \
               '"detail": %s, "prev": "%s"' % (
                   self.n + 1, self.t0 + ms // 1000 if self.t0 else 0, self.boot, ms,
                   json.dumps(actor), json.dumps(what), json.dumps(detail), self.prev)
        h = record_hash(body)
        if self.store.size(LOG) > MAX_BYTES:
            self.store.rename(LOG, OLD)
        self.store.append(LOG, (body + ', "hash": "%s"}\n' % h).encode())
        self.n += 1
        self.prev = h

    def export(self, first):
        """The records from number first on (0: the oldest kept), whole lines, at most
        EXPORT_BYTES (the host asks again from the next number)."""
        out = bytearray()
        for name in (OLD, LOG):
            for line in self.store.lines(name):
                i = line.find('"n": ')
                if i < 0:
                    continue
                try:
                    n = int(line[i + 5:line.find(",", i)])
                except ValueError:
                    continue
                if n < first:
                    continue
                if len(out) + len(line) > EXPORT_BYTES:
                    return bytes(out)
                out += line.encode()
        return bytes(out)
