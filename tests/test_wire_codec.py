"""The serial protocol's framing and codec (protocol/wire.py): round trips, CRC, resync after
garbage, corruption and truncation, the argument codec's error handling, the catalogue and
SPEC.md, and the same module under the real MicroPython and mpy-cross for the RP2040."""

import json
import os
import re
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT
PROTOCOL = os.path.join(ROOT, "protocol")
SPEC = os.path.join(PROTOCOL, "SPEC.md")
BIN = os.path.dirname(sys.executable)

import catalogue as K  # noqa: E402
import wire as W  # noqa: E402
from facedown import spec as S  # noqa: E402  (the prose of the tables, SPEC.md's generator)

# Tests whose property holds except when a false frame passes its CRC (2**-16 per false SYNC)
# run derandomized, so the suite cannot flake.
exact = settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
fixed = settings(max_examples=300, derandomize=True, suppress_health_check=[HealthCheck.too_slow])

frames_st = st.tuples(st.integers(1, W.TYPE_MAX), st.integers(0, 0xFFFF),
                      st.binary(max_size=W.MAX_BODY))
quiet_garbage = st.binary(max_size=40).map(lambda b: b.replace(b"\x7e", b""))


def decode(data, chunks=None):
    """Frames and counters from a fresh decoder; chunks: None = one feed, "byte" = feed_byte,
    or a list of chunk sizes. The line goes idle at the end (expire)."""
    d = W.Decoder()
    out = []
    if chunks == "byte":
        for b in data:
            d.feed_byte(b)
        out += d.frames
        d.frames = []
    elif chunks is None:
        out += d.feed(data)
    else:
        i = 0
        for k in chunks:
            out += d.feed(memoryview(data)[i:i + k])
            i += k
        out += d.feed(data[i:])
    before = d.pending()
    out += d.expire()
    return out, (d.frames_ok, d.frames_bad, d.bytes_skipped, before)


def accounted(frames, counts, n):
    return sum(len(f[2]) + W.OVERHEAD for f in frames) + counts[2] == n


def is_subsequence(needles, hay):
    it = iter(hay)
    return all(any(x == s for x in it) for s in needles)


# --- CRC and frames -----------------------------------------------------------------------------
def test_crc_check_value():
    assert W.crc16(b"123456789") == 0x29B1
    assert W.crc16(b"6789", W.crc16(b"12345")) == 0x29B1


def bitwise_crc(data):
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


@given(st.binary(max_size=300))
def test_crc_table_matches_bitwise_definition(data):
    assert W.crc16(data) == bitwise_crc(data)


def test_frame_layout():
    f = W.encode(W.CMD, 0x0201, b"\xaa\xbb")
    assert f[:7] == bytes([0x7E, 2, 1, 0x01, 0x02, 0xAA, 0xBB])
    crc = W.crc16(f[1:7])
    assert f[7:] == bytes([crc & 0xFF, crc >> 8])
    assert W.MAX_FRAME == W.MAX_BODY + W.OVERHEAD
    assert W.MAX_EVENTS == (W.MAX_BODY - W.EVENT_HEADER) // W.EVENT_ENTRY


@given(frames_st)
def test_frame_round_trip(frame):
    ftype, seq, body = frame
    f = W.encode(ftype, seq, body)
    buf = bytearray(W.MAX_FRAME)
    n = W.encode_into(buf, ftype, seq, memoryview(body))
    assert bytes(buf[:n]) == f
    assert W.Decoder().feed(f) == [frame]
    assert W.Decoder().feed(bytearray(f)) == [frame]


@pytest.mark.parametrize("args", [(0, 1, b""), (16, 1, b""), (1, -1, b""), (1, 65536, b""),
                                  (1, 1, bytes(W.MAX_BODY + 1)), ("1", 1, b""), (True, 1, b"")])
def test_encode_rejects(args):
    with pytest.raises(W.WireError):
        W.encode(*args)


def test_encode_into_small_buffer():
    with pytest.raises(W.WireError):
        W.encode_into(bytearray(8), W.CMD, 1, b"abc")
    assert W.encode_into(bytearray(10), W.CMD, 1, b"abc") == 10


# --- the decoder: resync, corruption, chunking, fuzzing --------------------------------------
@exact
@given(st.lists(st.tuples(quiet_garbage, frames_st), max_size=12), quiet_garbage,
       st.randoms(use_true_random=False))
def test_frames_in_quiet_garbage_decode_exactly(items, tail, rnd):
    stream = b"".join(g + W.encode(*f) for g, f in items) + tail
    sent = [f for _, f in items]
    chunks = [rnd.randint(1, 50) for _ in range(len(stream) // 10)]
    for how in (None, "byte", chunks):
        got, counts = decode(stream, how)
        assert got == sent
        assert counts == (len(sent), 0, sum(len(g) for g, _ in items) + len(tail), 0)


def corrupt(draw_frame, how, pos, bit):
    f = bytearray(W.encode(*draw_frame))
    if how == "flip":
        f[pos % len(f)] ^= 1 << bit
    elif how == "truncate":
        f = f[:pos % len(f)]
    return bytes(f)


@fixed
@given(st.lists(st.tuples(quiet_garbage, frames_st, st.sampled_from(["ok", "flip", "truncate"]),
                          st.integers(0, 300), st.integers(0, 7)), max_size=10))
def test_corrupted_and_truncated_frames_are_dropped_the_rest_found(items):
    stream = b""
    sent = []
    for g, frame, how, pos, bit in items:
        stream += g + corrupt(frame, how, pos, bit)
        if how == "ok":
            sent.append(frame)
    got, counts = decode(stream)
    assert got == sent
    assert accounted(got, counts, len(stream))


def test_every_single_bit_flip_is_detected():
    for frame in [(W.CMD, 1, b""), (W.EVENT, 0x7E7E, bytes(range(40))),
                  (W.REPLY, 65535, b"\x7e" * 20), (W.NAK, 0, b"\x01")]:
        good = W.encode(*frame)
        tail = W.encode(W.ACK, 0, W.encode_ack(5))
        for i in range(len(good) * 8):
            bad = bytearray(good)
            bad[i // 8] ^= 1 << (i % 8)
            got, counts = decode(bytes(bad) + tail)
            assert got == [(W.ACK, 0, W.encode_ack(5))], (frame, i)


@fixed
@given(st.lists(frames_st, min_size=1, max_size=6), st.lists(st.binary(max_size=60), max_size=6))
def test_arbitrary_garbage_no_crash_and_frames_after_it_found(frames, garbage):
    stream = b""
    for i, f in enumerate(frames):
        stream += (garbage[i] if i < len(garbage) else b"") + W.encode(*f)
    got, counts = decode(stream)
    assert is_subsequence(frames, got)  # extra frames only if garbage forged a CRC
    assert accounted(got, counts, len(stream))


def test_false_sync_with_long_len_waits_then_expire_finds_frame():
    f = W.encode(W.CMD, 9, b"hi")
    d = W.Decoder()
    assert d.feed(b"\x7e\xc8\x01" + f) == []  # LEN 200: waits for 207 bytes
    assert d.pending() == 3 + len(f)
    assert d.expire() == [(W.CMD, 9, b"hi")]
    assert (d.frames_ok, d.frames_bad, d.bytes_skipped, d.pending()) == (1, 1, 3, 0)
    assert d.last_error == W.NAK_TRUNCATED
    # without an idle line, more traffic completes the false candidate, which fails its CRC
    d = W.Decoder()
    got = d.feed(b"\x7e\xc8\x01" + f + W.encode(W.CMD, 10, bytes(200)))
    assert got == [(W.CMD, 9, b"hi"), (W.CMD, 10, bytes(200))]
    assert d.last_error == W.NAK_CRC


@pytest.mark.parametrize("junk", [b"\x7e" * 300, b"\x7e\x00" * 50, b"\x7e\xff\x01" * 30,
                                  b"\x7e\x05\x10" * 30, bytes(range(256)) * 2])
def test_pathological_garbage(junk):
    frames = [(W.CMD, 1, b"x"), (W.EVENT, 2, b"\x7e" * 30)]
    stream = junk + b"".join(W.encode(*f) for f in frames)
    got, counts = decode(stream)
    assert got == frames
    assert accounted(got, counts, len(stream))


@exact
@given(st.binary(max_size=2000), st.lists(st.integers(1, 64), max_size=80))
def test_bytewise_equals_chunked_equals_whole(data, chunks):
    whole = decode(data)
    assert decode(data, "byte") == whole
    assert decode(data, chunks) == whole


@exact
@given(st.lists(st.one_of(st.binary(max_size=30), frames_st.map(lambda f: W.encode(*f))),
                max_size=20), st.lists(st.integers(1, 64), max_size=80))
def test_bytewise_equals_chunked_on_mixed_streams(parts, chunks):
    data = b"".join(parts)
    whole = decode(data)
    assert decode(data, "byte") == whole
    assert decode(data, chunks) == whole
    got = []
    d = W.Decoder(lambda t, s, b: got.append((t, s, b)))
    n = d.feed(data) + d.expire()
    assert got == whole[0] and n == len(got)


@exact
@given(st.binary(max_size=3000))
def test_decoder_fuzz(data):
    d = W.Decoder()
    got = d.feed(data)
    assert accounted(got, (0, 0, d.bytes_skipped), len(data) - d.pending())
    assert d.pending() < W.MAX_FRAME
    got += d.expire()
    assert d.pending() == 0 and accounted(got, (0, 0, d.bytes_skipped), len(data))
    for t, s, b in got:
        assert 1 <= t <= W.TYPE_MAX and 0 <= s <= 0xFFFF and len(b) <= W.MAX_BODY
        assert W.encode(t, s, b) in data


@pytest.mark.parametrize("ftype", [0, 16, 0x7E, 255])
def test_impossible_type_with_good_crc_is_not_a_frame(ftype):
    head = bytes([3, ftype, 1, 0]) + b"abc"
    forged = b"\x7e" + head + W.crc16(head).to_bytes(2, "little")
    d = W.Decoder()
    assert d.feed(forged + W.encode(W.CMD, 2, b"")) == [(W.CMD, 2, b"")]
    assert d.frames_bad >= 1 and d.frames_ok == 1


def test_reset():
    d = W.Decoder()
    d.feed(b"\x7e\x03\x01\x00")
    d.reset()
    assert d.pending() == 0 and d.bytes_skipped == 4
    assert d.feed(W.encode(W.CMD, 1, b"")) == [(W.CMD, 1, b"")]


# --- argument codec -----------------------------------------------------------------------------
VALUE = {
    "B": st.integers(0, 0xFF),
    "H": st.integers(0, 0xFFFF),
    "I": st.integers(0, 0xFFFFFFFF),
    "s": st.text(max_size=80).filter(lambda s: len(s.encode("utf-8")) <= 255),
    "y": st.binary(max_size=255),
}


@st.composite
def fmt_and_values(draw):
    fmt = "".join(draw(st.lists(st.sampled_from("BHIsy"), max_size=8)))
    return fmt, [draw(VALUE[c]) for c in fmt]


@given(fmt_and_values())
def test_pack_unpack_round_trip(fv):
    fmt, values = fv
    body = W.pack(fmt, values)
    assert W.unpack(fmt, body) == values
    assert W.unpack(fmt, memoryview(b"\xff\xff" + body), 2) == values
    assert W.unpack(fmt, bytearray(body)) == values


@given(fmt_and_values(), st.binary(min_size=1, max_size=5))
def test_every_truncated_or_overlong_body_raises(fv, extra):
    fmt, values = fv
    body = W.pack(fmt, values)
    for cut in range(len(body)):
        with pytest.raises(W.WireError):
            W.unpack(fmt, body[:cut])
    with pytest.raises(W.WireError):
        W.unpack(fmt, body + extra)


@given(st.text(alphabet="BHIsy", max_size=6), st.binary(max_size=40))
def test_unpack_arbitrary_body_only_wire_errors(fmt, body):
    try:
        values = W.unpack(fmt, body)
    except W.WireError as e:
        assert isinstance(e, ValueError) and str(e)
    else:
        assert W.pack(fmt, values) == body


@pytest.mark.parametrize("fmt,values", [
    ("B", [256]), ("B", [-1]), ("H", [65536]), ("I", [1 << 32]), ("B", [1.0]), ("B", ["1"]),
    ("B", [True]), ("s", [b"x"]), ("s", ["x" * 256]), ("s", ["\u00e9" * 128]), ("y", ["x"]),
    ("y", [bytes(256)]), ("BB", [1]), ("B", [1, 2]), ("q", [1]), ("B", 1), ("B", None)])
def test_pack_rejects(fmt, values):
    with pytest.raises(W.WireError):
        W.pack(fmt, values)


@pytest.mark.parametrize("fmt,body", [("s", b"\x02\xff\xfe"), ("q", b"\x00"), ("B", b""),
                                      ("H", b"\x01"), ("I", b"\x01\x02\x03"), ("y", b"\x05ab"),
                                      ("", b"\x00"), ("s", b"")])
def test_unpack_rejects(fmt, body):
    with pytest.raises(W.WireError):
        W.unpack(fmt, body)


# --- commands, replies, events ------------------------------------------------------------------
@st.composite
def command_and_values(draw):
    cid = draw(st.sampled_from(sorted(W.COMMAND_ARGS)))
    return cid, [draw(VALUE[c]) for c in W.COMMAND_ARGS[cid]]


@given(command_and_values())
def test_command_round_trip(cv):
    cid, values = cv
    body = W.encode_command(W.COMMAND_NAMES[cid], values)
    assert body == W.encode_command(cid, values)
    assert W.decode_command(body) == (cid, values)


@given(st.binary(max_size=60))
def test_decode_command_arbitrary_body(body):
    try:
        cid, values = W.decode_command(body)
    except W.WireError as e:
        if not body:
            assert e.code == W.BAD_FRAME
        elif body[0] not in W.COMMAND_ARGS:
            assert e.code == W.UNKNOWN_COMMAND
        else:
            assert e.code == W.BAD_ARGUMENT and W.COMMAND_NAMES[body[0]] in str(e)
    else:
        assert W.encode_command(cid, values) == body


def test_command_errors():
    with pytest.raises(W.WireError) as e:
        W.encode_command("shuffle_up_and_deal", [])
    assert e.value.code == W.UNKNOWN_COMMAND
    with pytest.raises(W.WireError, match="deal"):
        W.encode_command("deal", [300])
    assert W.encode_command("deal", [0]) == b"\x04\x00"
    assert W.encode_command("status", [0]) == b"\x03\x00\x00"
    assert W.encode_command("end") == b"\x09"


@given(st.sampled_from(sorted(W.COMMAND_REPLY)).flatmap(
    lambda cid: st.tuples(st.just(W.COMMAND_REPLY[cid]),
                          st.tuples(*[VALUE[c] for c in W.COMMAND_REPLY[cid]]))))
def test_reply_round_trip(fv):
    fmt, values = fv
    body = W.encode_reply_ok(fmt, list(values))
    assert W.decode_reply(body, fmt) == (W.OK, list(values))


@given(st.integers(1, 255), st.text(max_size=300))
def test_error_reply_round_trip_and_fits(code, message):
    body = W.encode_reply_error(code, message)
    assert len(body) <= W.MAX_BODY
    got_code, got = W.decode_reply(body, "BssIy")
    assert got_code == code and message.startswith(got)
    if len(message.encode("utf-8")) <= W.MAX_BODY - 2:
        assert got == message
    W.encode(W.REPLY, 1, body)


def test_long_error_message_is_cut_at_a_character_boundary():
    for pad in range(4):
        message = "x" * pad + "\u20ac" * 80  # 3-byte characters
        code, got = W.decode_reply(W.encode_reply_error(W.FAULT, message), "")
        assert message.startswith(got) and len(got.encode()) > W.MAX_BODY - 5


def test_reply_errors():
    for body in (b"", b"\x00", b"\x03", b"\x03\x05ab"):
        with pytest.raises(W.WireError):
            W.decode_reply(body, "I")
    with pytest.raises(W.WireError):
        W.encode_reply_error(0, "not an error")
    assert W.error_name(W.BUSY) == "BUSY" and W.error_name(99) == "ERROR_99"


@given(st.integers(1, 0xFFFFFFFF - W.MAX_EVENTS), st.integers(0, 0xFFFF),
       st.lists(st.binary(min_size=4, max_size=4), min_size=1, max_size=W.MAX_EVENTS))
def test_events_round_trip(first, hand, entries):
    body = W.encode_events(first, hand, b"".join(entries))
    assert len(body) <= W.MAX_BODY
    assert W.decode_events(body) == (first, hand, entries)
    frame = W.event_frame(first, hand, b"".join(entries))
    assert W.Decoder().feed(frame) == [(W.EVENT, first & 0xFFFF, body)]


@pytest.mark.parametrize("args", [(1, 0, b""), (1, 0, b"\x01\x02\x03"),
                                  (1, 0, bytes(4 * (W.MAX_EVENTS + 1))), (0, 0, bytes(4)),
                                  (0xFFFFFFFF, 0, bytes(8)), (1, 65536, bytes(4))])
def test_encode_events_rejects(args):
    with pytest.raises(W.WireError):
        W.encode_events(*args)


@given(st.binary(max_size=210))
def test_decode_events_arbitrary(body):
    try:
        first, hand, entries = W.decode_events(body)
    except W.WireError:
        return
    assert W.encode_events(first, hand, b"".join(entries)) == body


def test_ack():
    assert W.encode_ack(0) == bytes(4)
    assert W.decode_ack(W.encode_ack(0xFFFFFFFF)) == 0xFFFFFFFF
    with pytest.raises(W.WireError):
        W.decode_ack(b"\x01\x02")


@given(st.lists(st.tuples(st.integers(1, 10), st.lists(st.integers(0, 52), max_size=5)),
                max_size=10))
def test_discards_round_trip(discards):
    data = W.pack_discards(discards)
    assert W.unpack_discards(data) == discards
    for cut in range(len(data)):
        try:
            W.unpack_discards(data[:cut])
        except W.WireError:
            pass


def test_pack_discards_rejects():
    for bad in ([(1, [256])], [(1, ["As"])], [(256, [1])], [(1, [1] * 256)]):
        with pytest.raises(W.WireError):
            W.pack_discards(bad)


def test_seq_and_rto():
    assert [W.next_seq(s) for s in (0, 1, 65534, 65535)] == [1, 2, 65535, 1]
    rto = W.Rto()
    assert rto.rto == W.RTO_INITIAL_MS
    assert rto.sample(100) == 300  # SRTT 100 + 4 * RTTVAR 50
    for _ in range(50):
        rto.sample(10)
    assert rto.rto == W.RTO_MIN_MS
    while rto.rto < W.RTO_MAX_MS:
        rto.backoff()
    assert rto.backoff() == W.RTO_MAX_MS


# --- the catalogue, identify and SPEC.md --------------------------------------------------------
def test_catalogue_table_is_consistent():
    keys = [(row[0], row[2]) for row in S.MESSAGES]
    assert len(keys) == len(set(keys)), "duplicate (id, direction)"
    cmds = {r[0] for r in S.MESSAGES if r[2] == W.DIR_CMD}
    replies = {r[0] for r in S.MESSAGES if r[2] == W.DIR_REPLY}
    assert cmds == replies == set(range(1, 27))
    assert len(W.COMMAND_IDS) == len(cmds)
    for cid, name, direction, fmt, doc in S.MESSAGES:
        assert direction in (W.DIR_CMD, W.DIR_REPLY, W.DIR_EVENT)
        assert 1 <= cid <= 255 and re.fullmatch(r"[a-z_]+", name)
        assert set(fmt) <= set("BHIsy")
        assert doc.isascii() and "|" not in doc and doc == doc.strip()
        if direction == W.DIR_EVENT:
            assert len(fmt) <= 3 and set(fmt) <= {"B"}
        if fmt:
            names = S.arg_names(fmt, doc)
            assert len(names) == len(fmt) and all(re.fullmatch(r"[a-z_]+", n) for n in names), (
                name, direction, names)
    for table in (W.ERRORS, W.CAPABILITIES, W.FRAME_TYPES):
        for row in table:
            assert row[-1].isascii() and "|" not in row[-1]
    codes = [row[0] for row in W.ERRORS]
    assert codes == list(range(11))  # contiguous from OK = 0
    assert W.error_name(W.MECHANISM) == "MECHANISM" and W.MECHANISM == 9
    assert W.error_name(W.SESSION) == "SESSION" and W.SESSION == 10
    assert W.COMMAND_REPLY[W.COMMAND_IDS["identify"]] == "BssIy"
    assert W.COMMAND_ARGS[W.COMMAND_IDS["identify"]] == "H"


def test_event_kinds_match_the_engine():
    from shoe import zones as Z
    from shoe.hand import ACTIONS, STATUS_NAMES
    ops = {"move": Z.OP_MOVE, "shuffle": Z.OP_SHUFFLE, "cut": Z.OP_CUT, "procedure": Z.OP_PROC,
           "action": Z.OP_ACTION, "remove": Z.OP_REMOVE, "pick": Z.OP_PICK, "status": Z.OP_STATUS,
           "fault": Z.OP_FAULT, "bet": Z.OP_BET, "stack": Z.OP_STACK}
    assert {name: op for op, name in W.EVENT_KINDS.items()} == ops
    zones = (Z.STUB, Z.BOARD, Z.BURNS, Z.MUCK, Z.ASIDE, Z.SEAT0, Z.NOWHERE)
    assert zones == (0, 1, 2, 3, 4, 16, 255)
    assert (Z.MIX_STUB, Z.MIX_MUCK, Z.MIX_BURNS) == (1, 2, 4)
    assert tuple(ACTIONS) == ("check", "call", "bet", "raise", "fold", "allin", "complete",
                              "bringin")
    assert tuple(STATUS_NAMES) == ("dealing", "complete", "misdeal", "void")


def test_fault_event_names_every_fault_kind_by_its_code():
    """The fault event's description (SPEC.md) lists exactly the firmware's fault table."""
    from shoe import faults as F

    doc = [r[4] for r in S.MESSAGES if r[2] == W.DIR_EVENT and r[1] == "fault"][0]
    listed = re.search(r"kind (1 .*?); dest", doc).group(1)
    pairs = [p.strip().split(" ", 1) for p in listed.split(",")]
    assert [(int(n), k) for n, k in pairs] == [(row[0], row[1]) for row in F.FAULTS]
    assert len({row[0] for row in F.FAULTS}) == len(F.FAULTS), "a code used twice"


@pytest.mark.parametrize("fw,dev", [("", ""), ("0.1.0", "shoe-0042"), ("x" * 90, "y" * 90)])
def test_identify_chunks_reassemble_the_catalogue(fw, dev):
    doc = b""
    while True:
        body = K.identify_reply(len(doc), fw, dev, W.CAP_SIM | W.CAP_JOURNAL)
        W.encode(W.REPLY, 0, body)  # fits a frame
        code, (version, f, d, caps, chunk) = W.decode_reply(body, "BssIy")
        assert (code, version, f, d, caps) == (W.OK, W.PROTOCOL_VERSION, fw, dev, 3)
        if not chunk:
            break
        doc += chunk
    assert doc == K.catalogue_json()
    cat = json.loads(doc)
    assert cat["protocol"] == W.PROTOCOL_VERSION and cat["max_body"] == W.MAX_BODY
    assert cat["messages"] == [[r[0], r[1], r[2], r[3], S.arg_names(r[3], r[4])]
                               for r in S.MESSAGES]
    assert cat["errors"] == [list(r[:2]) for r in W.ERRORS]
    assert cat["capabilities"] == [list(r[:2]) for r in W.CAPABILITIES]


def test_identify_reply_with_no_room():
    with pytest.raises(W.WireError):
        K.identify_reply(0, "x" * 100, "y" * 100, 0)


def spec_text():
    with open(SPEC) as f:
        return f.read()


def test_spec_message_tables_are_generated_from_messages():
    text = spec_text()
    assert text.count(S.SPEC_BEGIN) == 1 and text.count(S.SPEC_END) == 1
    inside = text[text.index(S.SPEC_BEGIN) + len(S.SPEC_BEGIN):text.index(S.SPEC_END)]
    assert inside == "\n" + S.catalogue_markdown(), \
        "SPEC.md is stale: run `.venv/bin/python -m facedown.spec --update-spec`"


def hexline(data):
    return " ".join("%02X" % b for b in data)


def test_spec_worked_examples_are_right():
    text = spec_text()
    cmd = W.encode(W.CMD, 1, W.encode_command("ping", [0xDEADBEEF]))
    reply = W.encode(W.REPLY, 1, W.encode_reply_ok("I", [0xDEADBEEF]))
    ev = W.event_frame(70000, 3, bytes([1, 34, 0, 0x91]))
    ack = W.encode(W.ACK, 0, W.encode_ack(70000))
    err = W.encode(W.REPLY, 2, W.encode_reply_error(W.WRONG_STATE, "no hand"))
    for frame in (cmd, reply, ev, ack, err):
        assert hexline(frame) in text
    assert "0x29B1" in text
    for name in ("PROTOCOL_VERSION", "MAX_BODY", "REPLY_CACHE", "RTO_MIN_MS", "RTO_MAX_MS"):
        assert name in text


# --- MicroPython --------------------------------------------------------------------------------
def tool(name):
    path = os.path.join(BIN, name)
    if not os.path.exists(path):
        pytest.fail("%s not installed: run `make setup`" % name)
    return path


def test_wire_compiles_for_rp2040(tmp_path):
    out = tmp_path / "wire.mpy"
    proc = subprocess.run([tool("mpy-cross"), "-march=armv6m", "-o", str(out),
                           os.path.join(PROTOCOL, "wire.py")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_size > 0


def run_script(python, *opts):
    proc = subprocess.run([python, *opts, os.path.join("tests", "mp_wire_test.py")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert re.fullmatch(r"OK \d+", lines[-1]), lines
    return lines


def test_wire_under_micropython():
    mp = run_script(tool("micropython"), "-X", "heapsize=192K")
    assert "no_alloc ok" in mp  # the per-byte decoder path ran with the heap locked
    cp = run_script(sys.executable)
    common = ("resync", "fuzz", "catalogue")
    same = [line for line in mp if line.startswith(common)]
    assert len(same) == 3 and same == [line for line in cp if line.startswith(common)]
    assert "catalogue %d %04X" % (len(K.catalogue_json()), W.crc16(K.catalogue_json())) in mp
