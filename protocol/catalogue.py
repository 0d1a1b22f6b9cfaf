# The catalogue document identify serves (SPEC.md, "identify"): every message's id, name,
# format and field names, every command's role and flags, the frame types, errors and
# capability bits, all made from protocol/wire.py's tables, with the digest a host compares
# first (facedown.client.check_catalogue). Only identify needs it: the shoe's link imports it
# for the command and lets it go after (firmware/link.py), so its bytecode is not in a Pico's
# heap between identify calls; the host imports it as it imports wire.
import wire as W


def _names(text):
    return text.split() if text else []


def catalogue_rows():
    """The catalogue's message rows, [id, name, direction, format, field names]: each
    command's arguments ("cmd") and reply ("reply"), then the event kinds ("event")."""
    out = []
    for r in W.COMMANDS:
        out.append([r[W.C_ID], r[W.C_NAME], W.DIR_CMD, r[W.C_ARGS], _names(r[W.C_ARG_NAMES])])
        out.append([r[W.C_ID], r[W.C_NAME], W.DIR_REPLY, r[W.C_REPLY],
                    _names(r[W.C_REPLY_NAMES])])
    for r in W.EVENTS:
        out.append([r[0], r[1], W.DIR_EVENT, r[2], _names(r[3])])
    return out


def catalogue_commands():
    """The catalogue's command rows, [id, name, role, flags]: the role's name (wire.ROLES) and the
    flags' bits (the document's "flags" table names them)."""
    return [[r[W.C_ID], r[W.C_NAME], W.ROLES[r[W.C_ROLE]], r[W.C_FLAGS]] for r in W.COMMANDS]


def catalogue_digest(text):
    """The digest the catalogue document opens with: CRC-16 and length of its "messages" and
    "commands" JSON texts, one after the other. A host whose own digest differs reads the
    whole document and compares the rows of the commands it sends (facedown.client.
    check_catalogue, Klipper's format check: formats, field names, roles and flags)."""
    data = text.encode("utf-8")
    return "%04x-%d" % (W.crc16(data), len(data))


def catalogue_json():
    """The catalogue document served by identify, as UTF-8 bytes, made from the tables at each
    call (a Pico does not keep its few KB between identify calls). Byte for byte the same under
    CPython and MicroPython."""
    import json

    messages = json.dumps(catalogue_rows())
    commands = json.dumps(catalogue_commands())
    return ('{"protocol": %d, "digest": "%s", "max_body": %d, "frame_types": %s, '
            '"messages": %s, "commands": %s, "flags": %s, "errors": %s, "capabilities": %s}' % (
                W.PROTOCOL_VERSION, catalogue_digest(messages + commands), W.MAX_BODY,
                json.dumps([[r[0], r[1], r[2]] for r in W.FRAME_TYPES]), messages, commands,
                json.dumps([[r[0], r[1]] for r in W.FLAGS]),
                json.dumps([[r[0], r[1]] for r in W.ERRORS]),
                json.dumps([[r[0], r[1]] for r in W.CAPABILITIES]))).encode("utf-8")


def identify_reply(offset, firmware_version, device_id, capabilities):
    """The device's REPLY body to identify(offset): status OK, the fixed fields, and the
    catalogue chunk at offset filling the rest of the frame (empty past the end)."""
    head = W.pack("BssI", (W.PROTOCOL_VERSION, firmware_version, device_id, capabilities))
    room = W.MAX_BODY - 2 - len(head)  # status byte, chunk length byte
    if room < 1:
        raise W.WireError("firmware_version and device_id leave no room for the catalogue")
    doc = catalogue_json()
    chunk = doc[offset:offset + min(room, 255)]
    return b"\x00" + head + bytes([len(chunk)]) + chunk
