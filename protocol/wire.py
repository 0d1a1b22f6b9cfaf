# Facedown serial protocol v1: framing, CRC, argument codec and the command table.
#
# One module for both ends of the link: it runs unchanged under CPython (the host) and under
# MicroPython (the shoe's RP2040), and the shoe's image holds it as it is. SPEC.md is the
# normative description; its tables are generated from COMMANDS, EVENTS, ERRORS, CAPABILITIES
# and FRAME_TYPES with the prose host/facedown/spec.py keeps (`python -m facedown.spec
# --update-spec`).
#
# Frame: SYNC 0x7E | LEN u8 | TYPE u8 | SEQ u16 LE | BODY (LEN bytes) | CRC16 u16 LE
# CRC-16/CCITT-FALSE over LEN, TYPE, SEQ and BODY. No byte stuffing: a receiver resynchronises by
# hunting for SYNC and verifying the CRC (Decoder).
import struct

from caps import CAP_SIM, CAP_JOURNAL, CAP_AUTH, CAPABILITIES  # noqa: F401 (identify's bits)
from crc import crc16, crc16_range  # noqa: F401 (crc16 is the codec's API too)

try:
    from micropython import const
except ImportError:  # CPython

    def const(x):
        return x


PROTOCOL_VERSION = const(1)
BAUD = const(115200)

# --- framing -----------------------------------------------------------------------------------
SYNC = const(0x7E)
HEADER = const(5)  # SYNC, LEN, TYPE, SEQ (2)
TRAILER = const(2)  # CRC (2)
OVERHEAD = const(7)
MAX_BODY = const(200)
MAX_FRAME = const(207)  # OVERHEAD + MAX_BODY
TYPE_MAX = const(15)  # TYPE 1..15 is a frame; 0 and 16..255 never are (resync)

# frame types
CMD = const(1)  # host -> device: a command; SEQ = command sequence number
REPLY = const(2)  # device -> host: the reply; SEQ = the command's SEQ
EVENT = const(3)  # device -> host: engine log entries; SEQ = low 16 bits of the first event number
ACK = const(4)  # host -> device: body u32 = highest event number received contiguously
NAK = const(5)  # either way: a corrupt frame was received; body empty (or a u8 hint)
ACMD = const(6)  # host -> device: an authenticated command (SPEC.md, "Sessions")

FRAME_TYPES = ((CMD, "CMD", "host -> device"), (REPLY, "REPLY", "device -> host"),
               (EVENT, "EVENT", "device -> host"), (ACK, "ACK", "host -> device"),
               (NAK, "NAK", "either"), (ACMD, "ACMD", "host -> device"))

# NAK hints (optional one-byte NAK body; receivers must accept and ignore any NAK body)
NAK_CRC = const(1)  # a candidate frame failed its CRC
NAK_HEADER = const(2)  # impossible LEN or TYPE after a SYNC
NAK_TRUNCATED = const(3)  # the line went idle in the middle of a frame

# reliability parameters (SPEC.md, "Reliability")
REPLY_CACHE = const(8)  # replies the device keeps, by command SEQ
EVENT_WINDOW = const(8)  # EVENT frames the device may have unACKed on the line
RTO_INITIAL_MS = const(250)
RTO_MIN_MS = const(25)
RTO_MAX_MS = const(5000)
IDLE_TIMEOUT_MS = const(100)  # a partial frame older than this is given up (Decoder.expire)
LINK_TIMEOUT_MS = const(10000)  # the host gives up when nothing valid arrived for this long

# EVENT body: u32 first event number, u16 hand number, then entries of 4 bytes (op, a, b, c)
EVENT_HEADER = const(6)
EVENT_ENTRY = const(4)
MAX_EVENTS = const(48)  # (MAX_BODY - EVENT_HEADER) // EVENT_ENTRY

# reply status / error codes
OK = const(0)
BAD_FRAME = const(1)
UNKNOWN_COMMAND = const(2)
BAD_ARGUMENT = const(3)
WRONG_STATE = const(4)
VERSION = const(5)
BUSY = const(6)
DENIED = const(7)
FAULT = const(8)
MECHANISM = const(9)
SESSION = const(10)

ERRORS = ((OK, "OK"), (BAD_FRAME, "BAD_FRAME"), (UNKNOWN_COMMAND, "UNKNOWN_COMMAND"),
          (BAD_ARGUMENT, "BAD_ARGUMENT"), (WRONG_STATE, "WRONG_STATE"), (VERSION, "VERSION"),
          (BUSY, "BUSY"), (DENIED, "DENIED"), (FAULT, "FAULT"), (MECHANISM, "MECHANISM"),
          (SESSION, "SESSION"))  # (code, name); what each means: SPEC.md

NO_AMOUNT = const(0xFFFFFFFF)  # the bet command's amount when the action has none


# --- sessions (SPEC.md, "Sessions") --------------------------------------------------------------
# Roles, lowest first; a session of a role may run the commands of the roles below it.
ROLE_PUBLIC = const(0)  # anyone on the link: what the table sees
ROLE_TABLE = const(1)  # the dealer's console: also the down cards; runs the hand
ROLE_MAINTENANCE = const(2)  # a technician: configuration, histories, audit, deploy
ROLES = ("public", "table", "maintenance")
NONCE = const(16)  # bytes of a challenge or login nonce
TAG = const(32)  # bytes of an HMAC-SHA256 tag (never truncated)
ACMD_HEADER = const(36)  # u32 counter + tag before the CMD body
HIDDEN = const(63)  # the card code a role that may not see a card gets in its place


# --- the command table: every command declared once ---------------------------------------------
# Everything the two ends know of a command is its row here: the codec (encode_command,
# decode_command, the reply's format), the shoe's dispatch and checks (firmware/device.py: the
# role it needs, what its flags say), the host's classification (facedown.client: which replies
# wait on the mechanism) and the catalogue identify serves (protocol/catalogue.py) all read it;
# SPEC.md's tables are generated from it with the prose host/facedown/spec.py keeps by name
# (`python -m facedown.spec --update-spec`). Rows are tuples of constants: a Pico holds them in
# a few hundred bytes, with no dict or object per command.
#
# Row: (id, name, role, flags, argument format, argument names, reply format, reply names);
# ids run 1, 2, 3... in order (a row's index is its id - 1); names are space-separated, one per
# format letter. Format alphabet: B u8, H u16 LE, I u32 LE, s string (u8 length + UTF-8),
# y bytes (u8 length + raw). To add a command: a row at the end (the next id), its handler
# (a method cmd_<name> on the device, or a function <name> in firmware/rare.py when no hand
# needs it resident), its prose in host/facedown/spec.py, then regenerate SPEC.md.
READ_ONLY = const(1)  # changes nothing the journal keeps: no flash write after it
DEALS = const(2)  # deals: stopped by a stopping fault, a card to recover or a failed random
#                   source; the engine's invariants are checked after it
PLAY = const(4)  # changes the play: refused while a fault is latched (end, and report
#                  misdeal, are how the floor clears it)
SIM_ONLY = const(8)  # the simulator's (CAP_SIM); a shoe answers DENIED
MOVES = const(16)  # may move cards (and write flash) before it replies: the host waits longer
TIMED = const(32)  # its reply never waits on the mechanism: the host takes it as an RTT sample
FLAGS = ((READ_ONLY, "read_only"), (DEALS, "deals"), (PLAY, "play"), (SIM_ONLY, "sim_only"),
         (MOVES, "moves"), (TIMED, "timed"))

COMMANDS = (
    (1, "identify", ROLE_PUBLIC, READ_ONLY | TIMED,
     "H", "offset", "BssIy", "protocol_version firmware_version device_id capabilities chunk"),
    (2, "config", ROLE_MAINTENANCE, PLAY | MOVES,
     "sHBss", "game seats button rules house", "", ""),
    (3, "status", ROLE_PUBLIC, READ_ONLY | TIMED,
     "H", "offset", "HIy", "hand next_event chunk"),
    (4, "deal", ROLE_TABLE, DEALS | PLAY | MOVES,
     "B", "count", "", ""),
    (5, "street", ROLE_TABLE, DEALS | PLAY | MOVES,
     "", "", "", ""),
    (6, "draw", ROLE_TABLE, DEALS | PLAY | MOVES,
     "y", "discards", "", ""),
    (7, "action", ROLE_TABLE, DEALS | PLAY,
     "BB", "seat kind", "", ""),
    (8, "report", ROLE_TABLE, DEALS | PLAY | MOVES,
     "BBB", "what seat card_index", "", ""),
    (9, "end", ROLE_TABLE, DEALS | PLAY | MOVES,
     "", "", "", ""),
    (10, "hand", ROLE_TABLE, PLAY | MOVES,
     "B", "button", "", ""),
    (11, "resume", ROLE_PUBLIC, TIMED,
     "I", "from_event", "II", "first next"),
    (12, "sim_fault", ROLE_TABLE, SIM_ONLY,
     "sBBB", "kind at card flags", "HH", "pending feeds"),
    (13, "sim_deck", ROLE_MAINTENANCE, READ_ONLY | SIM_ONLY,
     "yBI", "cards flags seed", "", ""),
    (14, "ping", ROLE_PUBLIC, READ_ONLY | TIMED,
     "I", "token", "I", "token"),
    (15, "recover", ROLE_TABLE, MOVES,
     "B", "card", "", ""),
    (16, "history", ROLE_MAINTENANCE, READ_ONLY,
     "HH", "hand offset", "Hy", "size chunk"),
    (17, "maintenance", ROLE_MAINTENANCE, READ_ONLY,
     "", "", "", ""),
    (18, "challenge", ROLE_PUBLIC, READ_ONLY,
     "B", "role", "y", "nonce"),
    (19, "login", ROLE_PUBLIC, READ_ONLY,
     "yyI", "nonce proof time", "yI", "proof session"),
    (20, "logout", ROLE_TABLE, READ_ONLY,
     "", "", "", ""),
    (21, "audit", ROLE_MAINTENANCE, READ_ONLY,
     "IH", "first offset", "Hy", "size chunk"),
    (22, "telemetry", ROLE_PUBLIC, READ_ONLY,
     "H", "offset", "Hy", "size chunk"),
    (23, "raw", ROLE_MAINTENANCE, READ_ONLY,
     "BB", "source count", "y", "data"),
    (24, "bet", ROLE_TABLE, DEALS | PLAY,
     "BBI", "seat kind amount", "", ""),
    (25, "chips", ROLE_TABLE, DEALS | PLAY,
     "BBIIIB", "seat kind amount put smallest flags", "", ""),
    (26, "stacks", ROLE_TABLE, DEALS | PLAY,
     "y", "stacks", "", ""),
)
# the columns of a row
C_ID = const(0)
C_NAME = const(1)
C_ROLE = const(2)
C_FLAGS = const(3)
C_ARGS = const(4)
C_ARG_NAMES = const(5)
C_REPLY = const(6)
C_REPLY_NAMES = const(7)

# Event entry kinds (op) in EVENT bodies: (op, name, format of bytes a, b, c, field names);
# unused trailing bytes are 0. The host decodes an entry by its field names (event_fields).
EVENTS = (
    (1, "move", "BBB", "card src dst"),
    (2, "shuffle", "BB", "mixed count"),
    (3, "cut", "B", "count"),
    (4, "procedure", "BB", "procedure seat"),
    (5, "action", "BB", "seat kind"),
    (6, "remove", "B", "card"),
    (7, "pick", "BB", "zone candidates"),
    (8, "status", "B", "status"),
    (9, "fault", "BBB", "kind dest retries"),
    (10, "bet", "BBB", "lo mid hi"),
    (11, "stack", "B", "seat"),
)

# catalogue directions (the identify document's message rows)
DIR_CMD = "cmd"
DIR_REPLY = "reply"
DIR_EVENT = "event"


def command(cid):
    """The table's row of command id cid, or None."""
    if _is_int(cid) and 1 <= cid <= len(COMMANDS):
        return COMMANDS[cid - 1]
    return None


def command_row(name):
    """The table's row of the command called name, or None."""
    for row in COMMANDS:
        if row[C_NAME] == name:
            return row
    return None


def __getattr__(name):
    """The host's half (protocol/wirehost.py: commands out, replies and events in, the lookups by
    name), reached as wire.<name>; a shoe's image does not carry it."""
    try:
        import wirehost
    except ImportError:
        raise AttributeError(name)
    return getattr(wirehost, name)


class WireError(ValueError):
    """A frame, body or value that does not follow the protocol. `code` is the reply error code
    a device answers with (BAD_ARGUMENT unless said otherwise)."""

    def __init__(self, message, code=BAD_ARGUMENT):
        super().__init__(message)
        self.code = code


# --- CRC-16/CCITT-FALSE: crc.py beside this file, the house's one CRC (frames, journal, reader) -


# --- frames -------------------------------------------------------------------------------------
def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _check_frame(ftype, seq, n):
    if not _is_int(ftype) or ftype < 1 or ftype > TYPE_MAX:
        raise WireError("frame type %r is not 1..%d" % (ftype, TYPE_MAX))
    if not _is_int(seq) or seq < 0 or seq > 0xFFFF:
        raise WireError("frame seq %r is not 0..65535" % (seq,))
    if n > MAX_BODY:
        raise WireError("frame body of %d bytes is over the %d-byte maximum" % (n, MAX_BODY))


def encode_into(buf, ftype, seq, body=b""):
    """Write the frame into buf (a bytearray of at least MAX_FRAME bytes, or len(body) + 7);
    return its length. Allocates nothing beyond what a bytes-like body's copy needs."""
    n = len(body)
    _check_frame(ftype, seq, n)
    if len(buf) < n + OVERHEAD:
        raise WireError("buffer of %d bytes is too small for a %d-byte frame" % (len(buf), n + 7))
    buf[0] = SYNC
    buf[1] = n
    buf[2] = ftype
    buf[3] = seq & 0xFF
    buf[4] = seq >> 8
    buf[HEADER:HEADER + n] = body
    end = HEADER + n
    crc = crc16_range(buf, 1, end, 0xFFFF)
    buf[end] = crc & 0xFF
    buf[end + 1] = crc >> 8
    return end + TRAILER


def encode(ftype, seq, body=b""):
    """The frame carrying body (bytes-like, at most MAX_BODY bytes), as bytes."""
    buf = bytearray(len(body) + OVERHEAD)
    encode_into(buf, ftype, seq, body)
    return bytes(buf)


class Decoder:
    """Turns a byte stream into frames (ftype, seq, body).

    Feed it bytes as they arrive: feed(data) with bytes/bytearray/memoryview, or feed_byte(b).
    Without a callback, complete frames collect in `frames`; feed() returns (and clears) that
    list, feed_byte() returns how many frames the byte completed. With a callback
    on_frame(ftype, seq, body), frames go to it as they complete and both return the count (an
    exception from the callback propagates; the decoder stays consistent, the rest of that
    feed() call's data is not read).

    Resync: bytes are skipped until SYNC; a candidate whose LEN or TYPE is impossible, or whose
    CRC is wrong, is rejected and the hunt restarts at the byte after its SYNC, over the bytes
    already buffered, so a real frame starting inside the rejected one is still found. Call
    expire() when the line has been idle for IDLE_TIMEOUT_MS: it gives up a partial frame (which
    would otherwise wait for its LEN bytes) and delivers any frame buffered behind it.

    Per byte it allocates nothing; per frame it allocates the body and the tuple. Counters:
    frames_ok, frames_bad (candidates rejected: impossible header, bad CRC, expired), and
    bytes_skipped; every byte fed ends up in a good frame, in bytes_skipped or in pending().
    """

    def __init__(self, on_frame=None):
        self._buf = bytearray(MAX_FRAME)
        self._n = 0  # bytes buffered; when > 0, _buf[0] is SYNC
        self._need = HEADER  # examine the buffer when it holds this many bytes
        self.on_frame = on_frame
        self.frames = []
        self.frames_ok = 0
        self.frames_bad = 0
        self.bytes_skipped = 0
        self.last_error = 0  # NAK hint of the last rejection (NAK_CRC, ...), 0 = none yet

    def pending(self):
        """Bytes buffered in a frame not complete yet."""
        return self._n

    def reset(self):
        """Drop the partial frame (its bytes count as skipped) and hunt for SYNC again."""
        self.bytes_skipped += self._n
        self._n = 0
        self._need = HEADER

    def _result(self, ok_before):
        if self.on_frame is not None:
            return self.frames_ok - ok_before
        out = self.frames
        self.frames = []
        return out

    def feed(self, data):
        ok_before = self.frames_ok
        buf = self._buf
        n = self._n
        need = self._need
        for b in data:
            if n == 0 and b != SYNC:
                self.bytes_skipped += 1
                continue
            buf[n] = b
            n += 1
            if n == need:
                self._n = n
                self._scan()
                n = self._n
                need = self._need
        self._n = n
        return self._result(ok_before)

    def feed_byte(self, b):
        n = self._n
        if n == 0 and b != SYNC:
            self.bytes_skipped += 1
            return 0
        ok_before = self.frames_ok
        self._buf[n] = b
        n += 1
        self._n = n
        if n == self._need:
            self._scan()
        return self.frames_ok - ok_before

    def expire(self):
        """The line is idle: reject what is buffered as truncated, delivering any complete frame
        found behind it. Returns like feed()."""
        ok_before = self.frames_ok
        while self._n:
            self._reject(NAK_TRUNCATED)
            self._scan()
        return self._result(ok_before)

    def _scan(self):
        # Examine the buffer (which starts with SYNC) until it needs more bytes.
        buf = self._buf
        while True:
            n = self._n
            if n < HEADER:
                self._need = HEADER
                return
            ln = buf[1]
            t = buf[2]
            if ln > MAX_BODY or t == 0 or t > TYPE_MAX:
                self._reject(NAK_HEADER)
                continue
            end = HEADER + ln
            total = end + TRAILER
            if n < total:
                self._need = total
                return
            if crc16_range(buf, 1, end, 0xFFFF) != buf[end] | (buf[end + 1] << 8):
                self._reject(NAK_CRC)
                continue
            frame = (t, buf[3] | (buf[4] << 8), bytes(buf[HEADER:end]))
            self.frames_ok += 1
            self._shift(total)
            if self.on_frame is not None:
                self.on_frame(frame[0], frame[1], frame[2])
            else:
                self.frames.append(frame)

    def _reject(self, why):
        # The candidate at 0 is not a frame: drop its SYNC and hunt from the next byte.
        self.frames_bad += 1
        self.last_error = why
        self.bytes_skipped += 1
        self._shift(1)

    def _shift(self, start):
        # Keep the buffered bytes from the first SYNC at or after start; skip those before it.
        buf = self._buf
        n = self._n
        j = start
        while j < n and buf[j] != SYNC:
            j += 1
        self.bytes_skipped += j - start
        m = n - j
        if m:
            buf[0:m] = buf[j:n]
        self._n = m
        self._need = HEADER


# --- argument formats ---------------------------------------------------------------------------
_INT_SIZE = {"B": 1, "H": 2, "I": 4}
_INT_MAX = {"B": 0xFF, "H": 0xFFFF, "I": 0xFFFFFFFF}
_BYTES_TYPES = (bytes, bytearray, memoryview)


def pack(fmt, values):
    """Encode values by fmt (letters B H I s y) as bytes. Raises WireError."""
    if not isinstance(values, (list, tuple)):
        raise WireError("values for format %r must be a list or tuple, not %r" % (fmt, values))
    if len(values) != len(fmt):
        raise WireError("format %r takes %d values, got %d" % (fmt, len(fmt), len(values)))
    out = bytearray()
    for i in range(len(fmt)):
        c = fmt[i]
        v = values[i]
        if c in _INT_SIZE:
            if not _is_int(v) or v < 0 or v > _INT_MAX[c]:
                raise WireError("value %d of format %r: %r is not an integer 0..%d" % (
                    i + 1, fmt, v, _INT_MAX[c]))
            out += struct.pack("<" + c, v)
        elif c == "s" or c == "y":
            if c == "s":
                if not isinstance(v, str):
                    raise WireError("value %d of format %r: %r is not a string" % (i + 1, fmt, v))
                v = v.encode("utf-8")
            elif not isinstance(v, _BYTES_TYPES):
                raise WireError("value %d of format %r: %r is not bytes" % (i + 1, fmt, v))
            if len(v) > 255:
                raise WireError("value %d of format %r: %d bytes, over 255" % (i + 1, fmt, len(v)))
            out.append(len(v))
            out += v
        else:
            raise WireError("format %r: unknown letter %r" % (fmt, c))
    return bytes(out)


def unpack(fmt, body, start=0):
    """Decode body[start:] by fmt as a list (ints, str for s, bytes for y). The body must hold
    exactly the fields: short or overlong bodies, bad UTF-8 or an unknown letter raise
    WireError."""
    n = len(body)
    i = start
    out = []
    for k in range(len(fmt)):
        c = fmt[k]
        if c in _INT_SIZE:
            size = _INT_SIZE[c]
            if i + size > n:
                raise WireError("format %r field %d (%s): body too short (%d bytes)" % (
                    fmt, k + 1, c, n - start))
            v = body[i]
            if size > 1:
                v |= body[i + 1] << 8
                if size > 2:
                    v |= (body[i + 2] << 16) | (body[i + 3] << 24)
            out.append(v)
            i += size
        elif c == "s" or c == "y":
            if i >= n:
                raise WireError("format %r field %d (%s): body too short (%d bytes)" % (
                    fmt, k + 1, c, n - start))
            size = body[i]
            i += 1
            if i + size > n:
                raise WireError("format %r field %d (%s): length %d runs past the body end" % (
                    fmt, k + 1, c, size))
            v = bytes(body[i:i + size])
            i += size
            if c == "s":
                try:
                    v = v.decode("utf-8")
                except (UnicodeError, ValueError):
                    raise WireError("format %r field %d (s): not UTF-8" % (fmt, k + 1))
            out.append(v)
        else:
            raise WireError("format %r: unknown letter %r" % (fmt, c))
    if i != n:
        raise WireError("format %r: %d unexpected bytes after the fields" % (fmt, n - i))
    return out


# --- commands and replies -----------------------------------------------------------------------
def command_id(cmd):
    """The id of a command given by name or id; WireError(UNKNOWN_COMMAND) if there is none."""
    row = command_row(cmd) if isinstance(cmd, str) else command(cmd)
    if row is None:
        raise WireError("unknown command %r" % (cmd,), UNKNOWN_COMMAND)
    return row[C_ID]


def decode_command(body):
    """(command id, argument list) of a CMD body. WireError.code is the error to reply with."""
    if not len(body):
        raise WireError("empty command body", BAD_FRAME)
    row = command(body[0])
    if row is None:
        raise WireError("unknown command %d" % body[0], UNKNOWN_COMMAND)
    try:
        return row[C_ID], unpack(row[C_ARGS], body, 1)
    except WireError as e:
        raise WireError("%s: %s" % (row[C_NAME], e))


def encode_reply_ok(fmt, values=()):
    """REPLY body for success: status 0, then values packed by fmt (the command's reply format)."""
    return b"\x00" + pack(fmt, values)


def encode_reply_error(code, message):
    """REPLY body for an error: the code (1..255), then the message, shortened to fit a frame
    (at a UTF-8 character boundary)."""
    if not _is_int(code) or code < 1 or code > 255:
        raise WireError("error code %r is not 1..255" % (code,))
    text = str(message).encode("utf-8")
    room = MAX_BODY - 2
    if len(text) > room:
        cut = room
        while cut and (text[cut] & 0xC0) == 0x80:  # do not split a character
            cut -= 1
        text = text[:cut]
    return bytes([code, len(text)]) + text


# --- sessions: the bytes each MAC covers (SPEC.md, "Sessions") ----------------------------------
def _u32(n):
    return bytes((n & 0xFF, (n >> 8) & 0xFF, (n >> 16) & 0xFF, (n >> 24) & 0xFF))


def login_message(role, device_id, device_nonce, host_nonce, time):
    """What the host's login proof authenticates."""
    return b"facedown login" + bytes((role,)) + device_id.encode() + bytes(device_nonce) + \
        bytes(host_nonce) + _u32(time)


def device_message(device_nonce, host_nonce):
    """What the device's proof authenticates (the host checks it: the shoe holds the key)."""
    return b"facedown device" + bytes(device_nonce) + bytes(host_nonce)


def session_message(device_nonce, host_nonce):
    """HMAC(role key, this) is the session key."""
    return b"facedown session" + bytes(device_nonce) + bytes(host_nonce)


def role_message(role):
    """HMAC(device key, this) is the role's key: a table console can hold its own key without
    holding the maintenance one."""
    return b"facedown role " + ROLES[role].encode()


def acmd_message(seq, counter, cmd_body):
    """What an ACMD frame's tag authenticates: its SEQ, its counter and its command."""
    return b"C" + bytes((seq & 0xFF, seq >> 8)) + _u32(counter) + bytes(cmd_body)


def decode_acmd(body):
    """(counter, tag, CMD body) of an ACMD body."""
    if len(body) <= ACMD_HEADER:
        raise WireError("ACMD body of %d bytes is too short" % len(body), BAD_FRAME)
    counter = body[0] | (body[1] << 8) | (body[2] << 16) | (body[3] << 24)
    return counter, bytes(body[4:ACMD_HEADER]), bytes(body[ACMD_HEADER:])


# --- events and ACKs ---------------------------------------------------------------------------
def encode_events(first, hand, entries):
    """EVENT body: first event number (u32), hand number (u16), entries (bytes-like, 4 bytes
    each: op, a, b, c; 1..MAX_EVENTS of them)."""
    n = len(entries)
    if n == 0 or n % EVENT_ENTRY or n > MAX_EVENTS * EVENT_ENTRY:
        raise WireError("event entries: %d bytes is not 1..%d entries of 4 bytes" % (
            n, MAX_EVENTS))
    if not _is_int(first) or first < 1 or first + n // EVENT_ENTRY - 1 > 0xFFFFFFFF:
        raise WireError("first event number %r out of range" % (first,))
    if not _is_int(hand) or hand < 0 or hand > 0xFFFF:
        raise WireError("hand number %r is not 0..65535" % (hand,))
    return struct.pack("<IH", first, hand) + bytes(entries)


def decode_ack(body):
    return unpack("I", body)[0]


# --- draw discards ------------------------------------------------------------------------------
def unpack_discards(data):
    """[(seat, [card codes]), ...] from the draw command's argument. Raises WireError."""
    out = []
    i = 0
    n = len(data)
    while i < n:
        if i + 2 > n or i + 2 + data[i + 1] > n:
            raise WireError("discards: seat %d's entry runs past the end" % data[i])
        k = data[i + 1]
        out.append((data[i], list(data[i + 2:i + 2 + k])))
        i += 2 + k
    return out


def unpack_stacks(data):
    """{seat: chips} from the stacks command's argument. Raises WireError."""
    if len(data) % 5:
        raise WireError("stacks: %d bytes is not a whole number of [seat u8, chips u32] entries"
                        % len(data))
    out = {}
    for i in range(0, len(data), 5):
        if data[i] in out:
            raise WireError("stacks: seat %d given twice" % data[i])
        out[data[i]] = data[i + 1] | (data[i + 2] << 8) | (data[i + 3] << 16) | (data[i + 4] << 24)
    return out


# --- sequence numbers and retransmission timer ---------------------------------------------------
class Rto:
    """Retransmission timeout per RFC 6298 (integer milliseconds): SRTT/RTTVAR with gains 1/8
    and 1/4, RTO = SRTT + max(1, 4 RTTVAR) clamped to RTO_MIN_MS..RTO_MAX_MS, doubled by each
    timeout (backoff). Sample only frames sent once (Karn)."""

    def __init__(self):
        self.srtt = -1  # no sample yet
        self.rttvar = 0
        self.rto = RTO_INITIAL_MS

    def sample(self, rtt_ms):
        if self.srtt < 0:
            self.srtt = rtt_ms
            self.rttvar = rtt_ms // 2
        else:
            d = self.srtt - rtt_ms
            if d < 0:
                d = -d
            self.rttvar = (3 * self.rttvar + d) // 4
            self.srtt = (7 * self.srtt + rtt_ms) // 8
        self.rto = min(max(self.srtt + max(1, 4 * self.rttvar), RTO_MIN_MS), RTO_MAX_MS)
        return self.rto

    def backoff(self):
        self.rto = min(self.rto * 2, RTO_MAX_MS)
        return self.rto
