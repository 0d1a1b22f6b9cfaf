# Facedown serial protocol v1: framing, CRC, argument codec and the message catalogue.
#
# One module for both ends of the link: it runs unchanged under CPython (the host) and under
# MicroPython (the shoe's RP2040). SPEC.md is the normative description; its message tables are
# generated from MESSAGES by catalogue_markdown() (run `python protocol/wire.py --update-spec`).
#
# Frame: SYNC 0x7E | LEN u8 | TYPE u8 | SEQ u16 LE | BODY (LEN bytes) | CRC16 u16 LE
# CRC-16/CCITT-FALSE over LEN, TYPE, SEQ and BODY. No byte stuffing: a receiver resynchronises by
# hunting for SYNC and verifying the CRC (Decoder).
import struct
from array import array

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

FRAME_TYPES = (
    (CMD, "CMD", "host -> device", "command: u8 command id, then its arguments"),
    (REPLY, "REPLY", "device -> host",
     "reply to the command with the same SEQ: u8 status, then data"),
    (EVENT, "EVENT", "device -> host", "events: u32 first event number, u16 hand number, entries"),
    (ACK, "ACK", "host -> device",
     "u32 highest event number received contiguously; never answered"),
    (NAK, "NAK", "either", "a corrupt frame was received; empty or a u8 hint; never answered"),
    (ACMD, "ACMD", "host -> device", "u32 session counter, 32-byte tag, then a CMD body"),
)

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

ERRORS = (
    (OK, "OK", "success: the reply data follows"),
    (BAD_FRAME, "BAD_FRAME",
     "the CMD frame is valid on the wire but its body is malformed (empty)"),
    (UNKNOWN_COMMAND, "UNKNOWN_COMMAND", "no command has this id"),
    (BAD_ARGUMENT, "BAD_ARGUMENT",
     "the arguments do not match the command's format, or a value is out of range"),
    (WRONG_STATE, "WRONG_STATE", "the command is not allowed now (e.g. deal before config)"),
    (VERSION, "VERSION", "the frame type or protocol version is not supported by the device"),
    (BUSY, "BUSY", "the device cannot take the command now (event buffer full, mechanism busy)"),
    (DENIED, "DENIED", "not permitted: a simulator command on a shoe, a higher role needed, a "
     "failed login, a forged or replayed ACMD"),
    (FAULT, "FAULT", "the mechanism or the engine failed; the message says why"),
    (MECHANISM, "MECHANISM",
     "a stopping fault (section 6.5): the message is its kind, a colon, and what the operator "
     "must do; once it is cleared, the same command (a new SEQ) finishes the step"),
    (SESSION, "SESSION", "an ACMD but no session (none, expired, ended, or a restart): log in"),
)

NO_AMOUNT = const(0xFFFFFFFF)  # the bet command's amount when the action has none

# capability bits (identify reply)
CAP_SIM = const(1)
CAP_JOURNAL = const(2)
CAP_AUTH = const(4)

CAPABILITIES = (
    (CAP_SIM, "CAP_SIM", "simulated mechanism: the sim_* commands are available"),
    (CAP_JOURNAL, "CAP_JOURNAL",
     "events are journalled in flash: resume works across a power cycle"),
    (CAP_AUTH, "CAP_AUTH", "the shoe has its key: commands need a session of their role"),
)

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


# --- message catalogue -------------------------------------------------------------------------
# Rows (id, name, direction, args_format, doc). direction: "cmd" = a command's arguments
# (host -> device), "reply" = that command's reply data after status OK (device -> host),
# "event" = an event entry kind (op) in EVENT bodies, whose format covers bytes a, b, c (unused
# trailing bytes are 0). When the format is not empty, doc starts with one field name per format
# letter: "name1, name2: text". Docs are ASCII and contain no "|".
# Format alphabet: B u8, H u16 LE, I u32 LE, s string (u8 length + UTF-8),
# y bytes (u8 length + raw).
DIR_CMD = "cmd"
DIR_REPLY = "reply"
DIR_EVENT = "event"

MESSAGES = (
    (1, "identify", DIR_CMD, "H",
     "offset: read the catalogue document (JSON: protocol version, this table, error codes, "
     "capabilities) from this byte offset. The first command of a session. Its id, its argument "
     "and the first field of its reply are the same in every protocol version"),
    (1, "identify", DIR_REPLY, "BssIy",
     "protocol_version, firmware_version, device_id, capabilities, chunk: capabilities is the "
     "CAP_* bitmask; chunk is the document from offset on, as much as fits the frame; the host "
     "concatenates chunks until an empty one"),
    (2, "config", DIR_CMD, "sHBss",
     "game, seats, button, rules, house: set up the table: game name; seats bitmask (bit n = seat "
     "n); dealer button seat (0 = none, stud games); rules name; house rules as JSON text (it "
     "must fit the frame); its key \"_profile\", if any, is the house profile's name, kept "
     "with the configuration and in each hand's history, not a setting"),
    (2, "config", DIR_REPLY, "", "no data"),
    (3, "status", DIR_CMD, "H",
     "offset: read the table snapshot from this byte offset; offset 0 takes a new snapshot, "
     "65535 asks for the counters only"),
    (3, "status", DIR_REPLY, "HIy",
     "hand, next_event, chunk: the hand number, the number the next new event will get, and "
     "the snapshot (JSON text, format defined by the firmware; never the stub's cards or their "
     "order) from offset on; the host concatenates chunks until an empty one"),
    (4, "deal", DIR_CMD, "B",
     "count: deal count cards now; 0 = the whole rest of the initial deal"),
    (4, "deal", DIR_REPLY, "", "no data"),
    (5, "street", DIR_CMD, "", "deal the next street (board cards, or the next stud card)"),
    (5, "street", DIR_REPLY, "", "no data"),
    (6, "draw", DIR_CMD, "y",
     "discards: repeated [seat u8, n u8, n card codes], the cards each seat discards (n = 0: "
     "stands pat); the replacements are dealt"),
    (6, "draw", DIR_REPLY, "", "no data"),
    (7, "action", DIR_CMD, "BB",
     "seat, kind: record a betting action; kind 0 check, 1 call, 2 bet, 3 raise, 4 fold, "
     "5 all-in, 6 complete (stud), 7 bring-in (stud). On a table configured with betting the "
     "action is checked as the bet command checks it, with no amount"),
    (7, "action", DIR_REPLY, "", "no data"),
    (8, "report", DIR_CMD, "BBB",
     "what, seat, card_index: report an irregularity; what 1 exposed card, 2 premature street, "
     "3 misdeal; seat and card_index (1-based) where they apply, else 0"),
    (8, "report", DIR_REPLY, "", "no data"),
    (9, "end", DIR_CMD, "", "end the hand"),
    (9, "end", DIR_REPLY, "", "no data"),
    (10, "hand", DIR_CMD, "B",
     "button: start the next hand (the deck is shuffled) with the button on this seat; 0 = move "
     "the button to the next occupied seat"),
    (10, "hand", DIR_REPLY, "", "no data"),
    (11, "resume", DIR_CMD, "I",
     "from_event: retransmit the held events from this number on (after a reconnect: the last "
     "ACKed number + 1; 1 = all held events, 4294967295 = none, only new ones); the events "
     "before the start are taken as ACKed"),
    (11, "resume", DIR_REPLY, "II",
     "first, next: the oldest event number the device holds (= next when it holds none) and the "
     "number the next new event will get; retransmission starts at from_event clamped to "
     "first..next"),
    (12, "sim_fault", DIR_CMD, "sBBB",
     "kind, at, card, flags: arm a fault in the simulated mechanism: kind double_feed, boxed, "
     "foreign, duplicate, no_burn, jam, or power_cut (at = the journal record, counted from the "
     "next command on, whose writing the power cut interrupts); at = the upcoming card it hits (1-based); card = the "
     "card code for foreign and duplicate; flags for jam: 1 mixed with the muck, 2 mixed with the "
     "burns, 4 order kept; kind pending only asks for the counters. Stopping faults (6.5): "
     "feed_jam (card = times the card sticks, 255 until cleared), empty, lid_open, "
     "reader_silent. Latching faults (6.6): internal (the at-th dealing command from now fails "
     "inside, after its handler ran), journal_fail (the at-th journal record from now fails to "
     "write), invariant (a card vanishes from the zones: the next dealing command's check "
     "fails). Simulator only (CAP_SIM), else DENIED"),
    (12, "sim_fault", DIR_REPLY, "HH",
     "pending, feeds: faults armed and not hit yet, and cards fed in this hand (kind pending; "
     "0, 0 for the others)"),
    (13, "sim_deck", DIR_CMD, "yBI",
     "cards, flags, seed: for the next hand, load the deck in this order (card codes, first "
     "dealt first; empty = shuffle) and, if flags bit 0 is set, seed the shuffle with seed "
     "(else a fresh random seed). Simulator only (CAP_SIM), else DENIED"),
    (13, "sim_deck", DIR_REPLY, "", "no data"),
    (14, "ping", DIR_CMD, "I", "token: any value; also a keep-alive and an RTT sample"),
    (14, "ping", DIR_REPLY, "I", "token: the same value"),
    (15, "recover", DIR_CMD, "B",
     "card: after a power cut caught a card in flight and the shoe could not tell where it went: "
     "the card the operator found at the output (card code; 255 = none). Until then dealing "
     "commands answer WRONG_STATE"),
    (15, "recover", DIR_REPLY, "", "no data"),
    (16, "history", DIR_CMD, "HH",
     "hand, offset: read a stored hand history from the journal in chunks (hand 0: the number "
     "of damaged areas the journal has (u16), then the stored hand numbers, u16 each). A hand's document: hand u16, first event u32, flags u8 "
     "(1 closed, 2 damaged), previous hash (32), hash (32, zeros while open), the HAND record's "
     "payload (u8 length + bytes), then its 4-byte entries"),
    (16, "history", DIR_REPLY, "Hy",
     "size, chunk: the document's size in bytes, and the chunk from offset on"),
    (17, "maintenance", DIR_CMD, "",
     "leave the protocol for maintenance: the device replies OK, then its main loop ends and "
     "the serial line (the USB CDC) belongs to the MicroPython REPL, where mpremote copies and "
     "checks the firmware files (facedown deploy, facedown verify); a reset returns to the "
     "protocol. WRONG_STATE while a hand is in progress. Needs a maintenance session (or, on the "
     "reference shoe, the maintenance key switch turned); logged in the audit log"),
    (17, "maintenance", DIR_REPLY, "", "no data"),
    (18, "challenge", DIR_CMD, "B", "role: open a session of role 1 table or 2 maintenance"),
    (18, "challenge", DIR_REPLY, "y", "nonce: 16 random bytes for one login attempt"),
    (19, "login", DIR_CMD, "yyI", "nonce, proof, time: host nonce, HMAC proof, Unix time"),
    (19, "login", DIR_REPLY, "yI", "proof, session: the device's HMAC proof, session number"),
    (20, "logout", DIR_CMD, "", "end the session"),
    (20, "logout", DIR_REPLY, "", "no data"),
    (21, "audit", DIR_CMD, "IH", "first, offset: audit records from number first, in chunks"),
    (21, "audit", DIR_REPLY, "Hy", "size, chunk: JSON lines, at most 4096 bytes"),
    (22, "telemetry", DIR_CMD, "H", "offset: counters and faults as JSON, in chunks"),
    (22, "telemetry", DIR_REPLY, "Hy", "size, chunk: the document's size and the chunk"),
    (23, "raw", DIR_CMD, "BB",
     "source, count: for an outside lab, between hands: 0 raw entropy bytes (the health-tested "
     "source, before the generator), 1 generator output; count bytes (1..180)"),
    (23, "raw", DIR_REPLY, "y", "data: the bytes"),
    (24, "bet", DIR_CMD, "BBI",
     "seat, kind, amount: a betting action with its amount, on a table configured with betting "
     "(else WRONG_STATE): kind as in the action command, + 128 when the dealer reports it as "
     "an action out of turn (the house setting out_of_turn deals with it); amount the seat's "
     "total for the "
     "round after a bet, raise, completion or all-in (raise to N), a call's chips or its total; "
     "4294967295 = none (a check, a fold, a fixed-limit bet). The shoe checks whose turn it is "
     "and what the seat may do; a refused action changes nothing (BAD_ARGUMENT or "
     "WRONG_STATE naming the rule)"),
    (24, "bet", DIR_REPLY, "", "no data"),
    (25, "chips", DIR_CMD, "BBIIIB",
     "seat, kind, amount, put, smallest, flags: a betting action with the chips the seat put "
     "out, on a table configured with betting (else WRONG_STATE): kind and amount the "
     "declaration as in the bet command (ignored when flags bit 0 says nothing was declared); "
     "put the chips pushed out by this action; smallest the smallest chip among them (0 = the "
     "table's chip); flags 1 not declared (the chips make the action), 2 one chip, 4 a string "
     "bet, 8 the player noticed the excess first. The shoe applies the procedure (TDA 40-41, "
     "43-B, 44, 45, 56; seed 003 by house settings no_chips and excess_chips), logs the action "
     "and then the procedure (its chips left in the pot in a bet event after it); a declared "
     "bet with no chips under no_chips void logs only the procedure. Refused like bet"),
    (25, "chips", DIR_REPLY, "", "no data"),
    (26, "stacks", DIR_CMD, "y",
     "stacks: repeated [seat u8, chips u32 LE], every seat's stack at the start of this hand, "
     "on a table configured with betting, after hand and before the first card (else "
     "WRONG_STATE); they replace the configuration's stacks for this hand: an action beyond a "
     "stack is refused, an all-in is the stack; each is logged as a stack event"),
    (26, "stacks", DIR_REPLY, "", "no data"),
    (1, "move", DIR_EVENT, "BBB",
     "card, src, dst: a card moved from zone src to zone dst; card code = rank * 4 + suit (ranks "
     "2..A = 0..12, suits c d h s = 0..3, 52 = joker) in the low 6 bits; zones 0 stub, 1 board, "
     "2 burns, 3 muck, 4 aside, 16 + n seat n, 255 nowhere; bit 7 of dst = face up"),
    (2, "shuffle", DIR_EVENT, "BB",
     "mixed, count: the stub was shuffled, mixed with (bits) 1 the stub, 2 the muck, 4 the "
     "burns; count cards"),
    (3, "cut", DIR_EVENT, "B", "count: the deck was cut, count cards moved"),
    (4, "procedure", DIR_EVENT, "BB",
     "procedure, seat: a rules procedure was applied (firmware procedure number), for seat "
     "(0 = none)"),
    (5, "action", DIR_EVENT, "BB", "seat, kind: a betting action (kinds as in the action command)"),
    (6, "remove", DIR_EVENT, "B",
     "card: this card code was removed from play (e.g. a foreign card)"),
    (7, "pick", DIR_EVENT, "BB", "zone, candidates: a card was picked at random from zone among "
     "candidates cards"),
    (8, "status", DIR_EVENT, "B",
     "status: the hand's status became 0 dealing, 1 complete, 2 misdeal, 3 void"),
    (9, "fault", DIR_EVENT, "BBB",
     "kind, dest, retries: a stopping fault (6.5) or a latched one (6.6); kind 1 jam, 2 empty, "
     "3 lid_open, 4 reader_silent, 5 reader_fault, 6 motor_power, 7 double_feed_unresolved, "
     "8 entropy, 9 carousel_lost_steps, 10 carousel_no_index, 11 carousel_pocket, 12 latched; "
     "dest = the zone the card in flight was going to (255 none); retries = the jam's tries"),
    (10, "bet", DIR_EVENT, "BBB",
     "lo, mid, hi: follows an action event on a table that is bet: the seat's total bet for "
     "the round after that action, lo + 256 * mid + 65536 * hi chips; after a procedure event "
     "(chips-excess-pot): the chips it left in the pot; after a stack event: the stack"),
    (11, "stack", DIR_EVENT, "B",
     "seat: the seat's stack at the start of the hand (the stacks command), its chips in the "
     "bet event after it"),
)

COMMAND_IDS = {}  # name -> id
COMMAND_NAMES = {}  # id -> name
COMMAND_ARGS = {}  # id -> args format
COMMAND_REPLY = {}  # id -> reply data format
EVENT_KINDS = {}  # op -> name
EVENT_ARGS = {}  # op -> format of a, b, c
for _row in MESSAGES:
    if _row[2] == DIR_CMD:
        COMMAND_IDS[_row[1]] = _row[0]
        COMMAND_NAMES[_row[0]] = _row[1]
        COMMAND_ARGS[_row[0]] = _row[3]
    elif _row[2] == DIR_REPLY:
        COMMAND_REPLY[_row[0]] = _row[3]
    else:
        EVENT_KINDS[_row[0]] = _row[1]
        EVENT_ARGS[_row[0]] = _row[3]
del _row

# the least role each command needs; the others are ROLE_PUBLIC
_NEEDS = (("config", ROLE_MAINTENANCE), ("history", ROLE_MAINTENANCE),
          ("maintenance", ROLE_MAINTENANCE), ("sim_fault", ROLE_TABLE),
          ("sim_deck", ROLE_MAINTENANCE), ("audit", ROLE_MAINTENANCE), ("raw", ROLE_MAINTENANCE),
          ("hand", ROLE_TABLE), ("deal", ROLE_TABLE), ("street", ROLE_TABLE),
          ("draw", ROLE_TABLE), ("action", ROLE_TABLE), ("bet", ROLE_TABLE),
          ("chips", ROLE_TABLE), ("stacks", ROLE_TABLE),
          ("report", ROLE_TABLE),
          ("end", ROLE_TABLE), ("recover", ROLE_TABLE), ("logout", ROLE_TABLE))
COMMAND_ROLE = {}  # id -> the least role that may run it
for _id in COMMAND_NAMES:
    COMMAND_ROLE[_id] = ROLE_PUBLIC
for _row in _NEEDS:
    COMMAND_ROLE[COMMAND_IDS[_row[0]]] = _row[1]
del _row, _id


class WireError(ValueError):
    """A frame, body or value that does not follow the protocol. `code` is the reply error code
    a device answers with (BAD_ARGUMENT unless said otherwise)."""

    def __init__(self, message, code=BAD_ARGUMENT):
        super().__init__(message)
        self.code = code


# --- CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, no final xor -----------------
def _make_table():
    t = array("H", [0] * 256)
    for i in range(256):
        c = i << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else (c << 1)
        t[i] = c & 0xFFFF
    return t


_CRC_TABLE = _make_table()


def _crc(buf, start, end, crc):
    t = _CRC_TABLE
    for i in range(start, end):
        crc = ((crc << 8) & 0xFFFF) ^ t[(crc >> 8) ^ buf[i]]
    return crc


def crc16(data, crc=0xFFFF):
    """CRC-16/CCITT-FALSE of data (bytes-like), continuing from crc. crc16(b"123456789") ==
    0x29B1."""
    return _crc(data, 0, len(data), crc)


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
    crc = _crc(buf, 1, end, 0xFFFF)
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
            if _crc(buf, 1, end, 0xFFFF) != buf[end] | (buf[end + 1] << 8):
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
    if isinstance(cmd, str):
        if cmd in COMMAND_IDS:
            return COMMAND_IDS[cmd]
    elif cmd in COMMAND_NAMES:
        return cmd
    raise WireError("unknown command %r" % (cmd,), UNKNOWN_COMMAND)


def encode_command(cmd, values=()):
    """CMD body: the command (name or id) and its arguments."""
    cid = command_id(cmd)
    try:
        return bytes([cid]) + pack(COMMAND_ARGS[cid], values)
    except WireError as e:
        raise WireError("%s: %s" % (COMMAND_NAMES[cid], e))


def decode_command(body):
    """(command id, argument list) of a CMD body. WireError.code is the error to reply with."""
    if not len(body):
        raise WireError("empty command body", BAD_FRAME)
    cid = body[0]
    if cid not in COMMAND_ARGS:
        raise WireError("unknown command %d" % cid, UNKNOWN_COMMAND)
    try:
        return cid, unpack(COMMAND_ARGS[cid], body, 1)
    except WireError as e:
        raise WireError("%s: %s" % (COMMAND_NAMES[cid], e))


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


def decode_reply(body, fmt):
    """(OK, values) or (error code, message) from a REPLY body; fmt is the command's reply
    format. Raises WireError if the body does not follow it."""
    if not len(body):
        raise WireError("empty reply body", BAD_FRAME)
    code = body[0]
    if code == OK:
        return OK, unpack(fmt, body, 1)
    return code, unpack("s", body, 1)[0]


def error_name(code):
    for row in ERRORS:
        if row[0] == code:
            return row[1]
    return "ERROR_%d" % code


# --- identify and the catalogue document ---------------------------------------------------------
_catalogue = None


def arg_names(fmt, doc):
    """The field names a catalogue doc starts with (one per format letter)."""
    if not fmt:
        return []
    return doc.split(": ", 1)[0].split(", ")


def catalogue_rows():
    """The catalogue's message rows: (id, name, direction, format, field names). The prose of
    each message lives in SPEC.md; a device has little RAM to serve it from."""
    return [[r[0], r[1], r[2], r[3], arg_names(r[3], r[4])] for r in MESSAGES]


def catalogue_json():
    """The catalogue document served by identify, as UTF-8 bytes (built once, then cached).
    Byte for byte the same under CPython and MicroPython."""
    global _catalogue
    if _catalogue is None:
        import json
        _catalogue = ('{"protocol": %d, "max_body": %d, "frame_types": %s, "messages": %s, '
                      '"errors": %s, "capabilities": %s}' % (
                          PROTOCOL_VERSION, MAX_BODY,
                          json.dumps([[r[0], r[1], r[2]] for r in FRAME_TYPES]),
                          json.dumps(catalogue_rows()),
                          json.dumps([[r[0], r[1]] for r in ERRORS]),
                          json.dumps([[r[0], r[1]] for r in CAPABILITIES]))).encode("utf-8")
    return _catalogue


def identify_reply(offset, firmware_version, device_id, capabilities):
    """The device's REPLY body to identify(offset): status OK, the fixed fields, and the
    catalogue chunk at offset filling the rest of the frame (empty past the end)."""
    head = pack("BssI", (PROTOCOL_VERSION, firmware_version, device_id, capabilities))
    room = MAX_BODY - 2 - len(head)  # status byte, chunk length byte
    if room < 1:
        raise WireError("firmware_version and device_id leave no room for the catalogue")
    doc = catalogue_json()
    chunk = doc[offset:offset + min(room, 255)]
    return b"\x00" + head + bytes([len(chunk)]) + chunk


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


def encode_acmd(counter, tag, cmd_body):
    """ACMD body: u32 counter, the 32-byte tag, the CMD body."""
    if len(tag) != TAG:
        raise WireError("a tag is %d bytes, not %d" % (TAG, len(tag)))
    if not _is_int(counter) or counter < 1 or counter > 0xFFFFFFFF:
        raise WireError("session counter %r out of range" % (counter,))
    return _u32(counter) + bytes(tag) + bytes(cmd_body)


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


def decode_events(body):
    """(first event number, hand number, list of 4-byte entries) of an EVENT body."""
    n = len(body)
    if n < EVENT_HEADER + EVENT_ENTRY or (n - EVENT_HEADER) % EVENT_ENTRY:
        raise WireError("event body of %d bytes is not 6 + 4k (k >= 1)" % n, BAD_FRAME)
    first = body[0] | (body[1] << 8) | (body[2] << 16) | (body[3] << 24)
    if first == 0 or first + (n - EVENT_HEADER) // EVENT_ENTRY - 1 > 0xFFFFFFFF:
        raise WireError("event numbers %d.. are not 1..4294967295" % first, BAD_FRAME)
    hand = body[4] | (body[5] << 8)
    entries = []
    for i in range(EVENT_HEADER, n, EVENT_ENTRY):
        entries.append(bytes(body[i:i + EVENT_ENTRY]))
    return first, hand, entries


def event_frame(first, hand, entries):
    """A whole EVENT frame (SEQ = low 16 bits of first)."""
    return encode(EVENT, first & 0xFFFF, encode_events(first, hand, entries))


def encode_ack(number):
    """ACK body: the highest event number received contiguously (0 = none yet)."""
    return pack("I", (number,))


def decode_ack(body):
    return unpack("I", body)[0]


# --- draw discards ------------------------------------------------------------------------------
def pack_discards(discards):
    """The draw command's argument from [(seat, [card codes]), ...]."""
    out = bytearray()
    for item in discards:
        seat, cards = item
        for c in cards:
            if not _is_int(c) or c < 0 or c > 255:
                raise WireError("discards: card code %r is not 0..255" % (c,))
        out += pack("By", (seat, bytes(cards)))
    return bytes(out)


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


def pack_stacks(stacks):
    """The stacks command's argument from {seat: chips}."""
    out = bytearray()
    for seat in sorted(stacks):
        out += pack("BI", (seat, stacks[seat]))
    return bytes(out)


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
def next_seq(seq):
    """The command SEQ after seq: 1, 2, ..., 65535, 1, ... (0 only opens a session)."""
    return seq % 0xFFFF + 1


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


# --- SPEC.md tables (host only: a device's image ends here, host/facedown/build.py) -------------
def _fields(fmt, doc):
    if not fmt:
        return "-"
    names = arg_names(fmt, doc)
    return ", ".join("`%s` %s" % (fmt[i], names[i]) for i in range(len(fmt)))


def _text(fmt, doc):
    return doc.split(": ", 1)[1] if fmt else doc


def catalogue_markdown():
    """The message tables of SPEC.md (between <!-- messages --> and <!-- /messages -->)."""
    out = ["### Commands (CMD body: u8 id, then the arguments)", "",
           "| id | command | role | arguments | reply data (after status 0) | description |",
           "|---:|---|---|---|---|---|"]
    for row in MESSAGES:
        if row[2] != DIR_CMD:
            continue
        cid, name, _, fmt, doc = row
        rfmt = COMMAND_REPLY[cid]
        rdoc = ""
        for r in MESSAGES:
            if r[0] == cid and r[2] == DIR_REPLY:
                rdoc = r[4]
        desc = _text(fmt, doc)
        if rfmt:
            desc += ". Reply: " + _text(rfmt, rdoc)
        out.append("| %d | `%s` | %s | %s | %s | %s |" % (
            cid, name, ROLES[COMMAND_ROLE[cid]], _fields(fmt, doc), _fields(rfmt, rdoc), desc))
    out += ["", "### Event entries (EVENT body: 4 bytes op, a, b, c each; unused bytes are 0)", "",
            "| op | event | a, b, c | description |", "|---:|---|---|---|"]
    for row in MESSAGES:
        if row[2] == DIR_EVENT:
            out.append("| %d | `%s` | %s | %s |" % (row[0], row[1], _fields(row[3], row[4]),
                                                    _text(row[3], row[4])))
    out += ["", "### Reply status codes", "", "| code | name | meaning |", "|---:|---|---|"]
    for code, name, doc in ERRORS:
        out.append("| %d | `%s` | %s |" % (code, name, doc))
    out += ["", "### Capability bits (identify reply)", "", "| bit | name | meaning |",
            "|---:|---|---|"]
    for bit, name, doc in CAPABILITIES:
        out.append("| 0x%02X | `%s` | %s |" % (bit, name, doc))
    out += ["", "### Frame types", "", "| TYPE | name | direction | body |", "|---:|---|---|---|"]
    for t, name, way, doc in FRAME_TYPES:
        out.append("| %d | `%s` | %s | %s |" % (t, name, way, doc))
    return "\n".join(out) + "\n"


def update_spec(path):
    """Rewrite the generated part of SPEC.md at path; True if it changed."""
    with open(path) as f:
        text = f.read()
    a = text.index(SPEC_BEGIN) + len(SPEC_BEGIN)
    b = text.index(SPEC_END)
    new = text[:a] + "\n" + catalogue_markdown() + text[b:]
    if new != text:
        with open(path, "w") as f:
            f.write(new)
    return new != text


SPEC_BEGIN = "<!-- messages -->"
SPEC_END = "<!-- /messages -->"

if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--update-spec"]:
        import os

        spec = os.path.join(os.path.dirname(os.path.abspath(__file__)), "SPEC.md")
        print("updated" if update_spec(spec) else "up to date", spec)
    else:
        sys.stdout.write(catalogue_markdown())
