# The catalogue document identify serves (SPEC.md, "identify"): every message's id, name,
# format and field names, every command's role and flags, the frame types, errors and
# capability bits, all made from protocol/wire.py's tables, with the digest a host compares
# first (facedown.client.check_catalogue). Only identify needs it: the shoe's link imports it
# for the command and lets it go after (firmware/link.py), so its bytecode is not in a Pico's
# heap between identify calls; the host imports it as it imports wire.
import wire as W


def _names(text):
    return text.split() if text else []


def _message_rows():
    """The catalogue's message rows, [id, name, direction, format, field names], one at a time:
    each command's arguments ("cmd") and reply ("reply"), then the event kinds ("event")."""
    for r in W.COMMANDS:
        yield [r[W.C_ID], r[W.C_NAME], W.DIR_CMD, r[W.C_ARGS], _names(r[W.C_ARG_NAMES])]
        yield [r[W.C_ID], r[W.C_NAME], W.DIR_REPLY, r[W.C_REPLY], _names(r[W.C_REPLY_NAMES])]
    for r in W.EVENTS:
        yield [r[0], r[1], W.DIR_EVENT, r[2], _names(r[3])]


def _command_rows():
    """The catalogue's command rows, [id, name, role, flags], one at a time: the role's name
    (wire.ROLES) and the flags' bits (the document's "flags" table names them)."""
    for r in W.COMMANDS:
        yield [r[W.C_ID], r[W.C_NAME], W.ROLES[r[W.C_ROLE]], r[W.C_FLAGS]]


def _pairs(table):
    for r in table:
        yield [r[0], r[1]]


def _array(rows):
    """json.dumps(list(rows)), a row at a time (its separators are ", " under CPython and
    MicroPython alike): a Pico never holds the whole array."""
    import json

    sep = "["
    for r in rows:
        yield sep + json.dumps(r)
        sep = ", "
    yield "]" if sep == ", " else "[]"


def _digested():
    """The texts the digest covers: the "messages" array, then the "commands" array."""
    yield from _array(_message_rows())
    yield from _array(_command_rows())


def catalogue_digest(pieces):
    """The digest the catalogue document opens with: CRC-16 and length of its "messages" and
    "commands" JSON texts, one after the other (pieces of text, _digested). A host whose own
    digest differs reads the whole document and compares the rows of the commands it sends
    (facedown.client.check_catalogue, Klipper's format check: formats, field names, roles and
    flags)."""
    crc, n = 0xFFFF, 0
    for p in pieces:
        data = p.encode("utf-8")
        crc = W.crc16(data, crc)
        n += len(data)
    return "%04x-%d" % (crc, n)


def _document():
    """The catalogue document served by identify, in pieces of a row at most, made from the
    tables at each call: a Pico builds neither the document nor any of its arrays whole (at
    each identify it held about 10 KB of them, the peak of its heap through a hand, measured
    on the rp2 port in rp2040js)."""
    import json

    yield '{"protocol": %d, "digest": "%s", "max_body": %d, "frame_types": %s, "messages": ' % (
        W.PROTOCOL_VERSION, catalogue_digest(_digested()), W.MAX_BODY,
        json.dumps([[r[0], r[1], r[2]] for r in W.FRAME_TYPES]))
    yield from _array(_message_rows())
    yield ', "commands": '
    yield from _array(_command_rows())
    for key, table in (("flags", W.FLAGS), ("errors", W.ERRORS),
                       ("capabilities", W.CAPABILITIES)):
        yield ', "%s": ' % key
        yield from _array(_pairs(table))
    yield "}"


def catalogue_json():
    """The whole catalogue document, as UTF-8 bytes (the host's copy; identify_reply serves it
    a chunk at a time). Byte for byte the same under CPython and MicroPython."""
    return "".join(_document()).encode("utf-8")


def identify_reply(offset, firmware_version, device_id, capabilities):
    """The device's REPLY body to identify(offset): status OK, the fixed fields, and the
    catalogue chunk at offset filling the rest of the frame (empty past the end). The chunk is
    cut from the document's pieces as they are made: nothing past it is made."""
    head = W.pack("BssI", (W.PROTOCOL_VERSION, firmware_version, device_id, capabilities))
    room = W.MAX_BODY - 2 - len(head)  # status byte, chunk length byte
    if room < 1:
        raise W.WireError("firmware_version and device_id leave no room for the catalogue")
    end = offset + min(room, 255)
    chunk = bytearray()
    at = 0  # the document's bytes before this piece
    for p in _document():
        data = p.encode("utf-8")
        nxt = at + len(data)
        if nxt > offset:
            chunk.extend(data[max(offset - at, 0):end - at])
        at = nxt
        if at >= end:
            break
    return b"\x00" + head + bytes([len(chunk)]) + chunk
