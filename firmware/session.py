# Sessions: who may do what on the link. A host opens a session of a role (table or maintenance)
# by challenge-response with the device's own key, provisioned once at installation (the file
# device.key, written over the REPL by `facedown provision`; no two shoes share one). Then every
# command it sends as an ACMD frame carries a counter and an HMAC-SHA256 tag under the session
# key: a changed, forged or replayed command is refused. Nothing here ever puts a key in a
# reply or a log line. Failed logins make the next challenge wait, doubling each time, and the
# count survives a power cycle.
import wire
from hal.store import KEY_FILE

FAIL_FILE = "auth.fail"
IDLE_MS = (0, 12 * 3600 * 1000, 30 * 60 * 1000)  # a session ends after this long unused, by role


class AuthError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def equal(a, b):
    """Constant-time comparison of two byte strings."""
    if len(a) != len(b):
        return False
    d = 0
    for i in range(len(a)):
        d |= a[i] ^ b[i]
    return d == 0


def parse_key(text):
    """The 32-byte key in a device.key file (64 hex digits), or None."""
    if text is None:
        return None
    text = text.strip()
    if len(text) != 64:
        return None
    try:
        key = bytes(int(text[i:i + 2], 16) for i in range(0, 64, 2))
    except ValueError:
        return None
    return key


class Sessions:
    def __init__(self, store, device_id, clock, entropy, audit):
        self.store = store
        self.device_id = device_id
        self.clock = clock
        self.entropy = entropy     # entropy(n) -> n unpredictable bytes (nonces)
        self.audit = audit
        self.key = parse_key(store.read(KEY_FILE))
        if self.key is None and store.read(KEY_FILE) is not None:
            audit.add("device", "key-unreadable", KEY_FILE)
        self.role = wire.ROLE_PUBLIC
        self.skey = None
        self.ended = None          # the session key before (its commands get SESSION, not DENIED)
        self.counter = 0
        self.number = 0
        self.used = 0
        self.challenge = None      # (role, nonce, when)
        self.failures = 0
        try:
            self.failures = int(store.read(FAIL_FILE) or "0")
        except ValueError:
            self.failures = 0
        # after a power cycle the wait starts again from boot: cutting power does not skip it
        self.wait_from = clock.ticks_ms()
        self.forged = 0

    def provisioned(self):
        return self.key is not None

    def actor(self):
        return "%s#%d" % (wire.ROLES[self.role], self.number) if self.skey else "public"

    # the challenge and login commands are login.py's (imported for a login, let go after)

    def logout(self, why="logout"):
        if self.skey is not None:
            self.audit.add(self.actor(), why, "")
            self.ended = self.skey
        self.skey = None
        self.role = wire.ROLE_PUBLIC
        self.counter = 0

    # ------------------------------------------------------------------ ACMD frames

    def verify(self, seq, body):
        """(counter, command body) of an ACMD frame whose tag is right. Raises AuthError."""
        counter, tag, cmd = wire.decode_acmd(body)
        if self.skey is not None and IDLE_MS[self.role] and self.clock.ticks_diff(
                self.clock.ticks_ms(), self.used) > IDLE_MS[self.role]:
            self.logout("session-expired")
        if self.skey is None:
            raise AuthError(wire.SESSION, "no session (none opened, expired, ended or the shoe "
                                          "restarted): log in")
        msg = wire.acmd_message(seq, counter, cmd)
        if not equal(self.skey.mac(msg), tag):
            if self.ended is not None and equal(self.ended.mac(msg), tag):
                raise AuthError(wire.SESSION, "this session ended (a newer login replaced it, "
                                              "or it logged out): log in")
            self.forged += 1
            if self.forged & (self.forged - 1) == 0:  # 1, 2, 4, 8...: a flood fills no log
                self.audit.add("public", "forged-command", "%d so far" % self.forged)
            raise AuthError(wire.DENIED, "the command's tag is wrong: not from this session")
        return counter, cmd

    def accept(self, counter):
        """A verified command that is not a retry: its counter must be new."""
        if counter <= self.counter:
            raise AuthError(wire.DENIED, "replayed command (counter %d, last %d)" % (
                counter, self.counter))
        self.counter = counter
        self.used = self.clock.ticks_ms()
