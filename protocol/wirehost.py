# The host's half of the protocol codec (protocol/wire.py): what only the host sends or reads:
# commands out, replies and events in, ACKs, the draw's and stacks' arguments it packs, the lookups
# by name. The shoe's image does not carry it (each byte of bytecode a Pico imports is heap:
# docs/deploy.md, "The memory budget"); wire.py's module __getattr__ reaches it, so the host and
# the tests name all of it as wire.<name> and the format of each message stays beside its other
# half (wire.py packs and unpacks; this file only calls it).
from wire import (BAD_FRAME, COMMANDS, C_ARGS, C_FLAGS, C_ID, C_NAME, C_REPLY, C_ROLE, ERRORS,
                  EVENT, EVENTS, EVENT_ENTRY, EVENT_HEADER, OK, TAG, WireError, _is_int, _u32,
                  command_id, encode, encode_events, pack, unpack)

# the lookups by id and name the host and the tests use
COMMAND_IDS = {row[C_NAME]: row[C_ID] for row in COMMANDS}
COMMAND_NAMES = {row[C_ID]: row[C_NAME] for row in COMMANDS}
COMMAND_ARGS = {row[C_ID]: row[C_ARGS] for row in COMMANDS}
COMMAND_REPLY = {row[C_ID]: row[C_REPLY] for row in COMMANDS}
COMMAND_ROLE = {row[C_ID]: row[C_ROLE] for row in COMMANDS}
EVENT_KINDS = {row[0]: row[1] for row in EVENTS}
EVENT_ARGS = {row[0]: row[2] for row in EVENTS}


def commands_with(flag):
    """The names of the commands whose flags hold flag (a tuple, in id order)."""
    return tuple(row[C_NAME] for row in COMMANDS if row[C_FLAGS] & flag)


def event_row(op):
    if _is_int(op) and 1 <= op <= len(EVENTS):
        return EVENTS[op - 1]
    return None


def event_fields(entry):
    """(kind name, {field name: value}) of a 4-byte event entry, by the table (None for an
    unknown op)."""
    row = event_row(entry[0])
    if row is None:
        return None, {}
    return row[1], dict(zip(row[3].split(), entry[1:1 + len(row[2])]))


def encode_command(cmd, values=()):
    """CMD body: the command (name or id) and its arguments."""
    row = COMMANDS[command_id(cmd) - 1]
    try:
        return bytes([row[C_ID]]) + pack(row[C_ARGS], values)
    except WireError as e:
        raise WireError("%s: %s" % (row[C_NAME], e))


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


def encode_acmd(counter, tag, cmd_body):
    """ACMD body: u32 counter, the 32-byte tag, the CMD body."""
    if len(tag) != TAG:
        raise WireError("a tag is %d bytes, not %d" % (TAG, len(tag)))
    if not _is_int(counter) or counter < 1 or counter > 0xFFFFFFFF:
        raise WireError("session counter %r out of range" % (counter,))
    return _u32(counter) + bytes(tag) + bytes(cmd_body)


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


def pack_stacks(stacks):
    """The stacks command's argument from {seat: chips}."""
    out = bytearray()
    for seat in sorted(stacks):
        out += pack("BI", (seat, stacks[seat]))
    return bytes(out)


def next_seq(seq):
    """The command SEQ after seq: 1, 2, ..., 65535, 1, ... (0 only opens a session)."""
    return seq % 0xFFFF + 1
