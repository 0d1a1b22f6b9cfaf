# protocol/wire.py under the real MicroPython (run by test_wire_codec.py; also runs under CPython,
# and both must print the same lines). A plain script: asserts, then "OK n" (n = checks passed).
#   .venv/bin/micropython -X heapsize=192K tests/mp_wire_test.py
import sys

try:
    _here = __file__.rsplit("/", 1)[0] if "/" in __file__ else "."
except NameError:
    _here = "."
sys.path.insert(0, _here + "/../protocol")

import catalogue as K  # noqa: E402
import wire as W  # noqa: E402

try:
    import micropython
except ImportError:  # CPython
    micropython = None

checks = 0


def check(cond, what):
    global checks
    if not cond:
        raise AssertionError(what)
    checks += 1


def raises(f, *args):
    try:
        f(*args)
    except W.WireError:
        return True
    return False


class Lcg:
    """A tiny deterministic generator, identical under both Pythons."""

    def __init__(self, seed):
        self.x = seed

    def next(self, n):
        self.x = (self.x * 1103515245 + 12345) & 0x7FFFFFFF
        return (self.x >> 8) % n

    def data(self, n):
        return bytes([self.next(256) for _ in range(n)])


def decode_all(data, chunking=None, r=None):
    d = W.Decoder()
    out = []
    if chunking == "byte":
        for b in data:
            d.feed_byte(b)
        out += d.frames
        d.frames = []
    elif chunking == "random":
        i = 0
        while i < len(data):
            k = 1 + r.next(40)
            out += d.feed(memoryview(data)[i:i + k])
            i += k
    else:
        out += d.feed(data)
    out += d.expire()
    return out, (d.frames_ok, d.frames_bad, d.bytes_skipped, d.pending())


def test_crc():
    check(W.crc16(b"123456789") == 0x29B1, "crc check value")
    check(W.crc16(b"56789", W.crc16(b"1234")) == 0x29B1, "crc continues")
    check(W.crc16(b"") == 0xFFFF, "crc of nothing")


def test_frames():
    buf = bytearray(W.MAX_FRAME)
    for ftype in (W.CMD, W.REPLY, W.EVENT, W.ACK, W.NAK, W.TYPE_MAX):
        for n in (0, 1, 5, 126, W.MAX_BODY):
            body = bytes([(i * 7 + n) & 0xFF for i in range(n)])
            seq = (n * 257 + ftype) & 0xFFFF
            f = W.encode(ftype, seq, body)
            check(len(f) == n + W.OVERHEAD and f[0] == W.SYNC and f[1] == n, "frame layout")
            k = W.encode_into(buf, ftype, seq, memoryview(body))
            check(bytes(buf[:k]) == f, "encode_into == encode")
            for mode in (None, "byte"):
                got, _ = decode_all(b"\x00\x7e" + f + f, mode)
                check(got == [(ftype, seq, body)] * 2, "round trip %d %d" % (ftype, n))
    check(raises(W.encode, 0, 1, b""), "type 0")
    check(raises(W.encode, 16, 1, b""), "type 16")
    check(raises(W.encode, 1, 65536, b""), "seq")
    check(raises(W.encode, 1, 1, bytes(W.MAX_BODY + 1)), "body too long")
    check(raises(W.encode_into, bytearray(10), 1, 1, bytes(4)), "small buffer")


def test_resync():
    r = Lcg(12345)
    sent = []
    stream = bytearray()
    for i in range(40):
        body = r.data(r.next(W.MAX_BODY + 1))
        f = W.encode(1 + r.next(5), r.next(65536), body)
        roll = r.next(10)
        if roll == 0:  # a bit flip: lost
            f = bytearray(f)
            f[r.next(len(f))] ^= 1 << r.next(8)
        elif roll == 1:  # truncated: lost
            f = f[:r.next(len(f))]
        else:
            sent.append((f[2], f[3] | f[4] << 8, body))
        stream += f
        g = r.data(r.next(12))
        if r.next(3) == 0:  # garbage that looks like a header
            g += bytes([0x7E, r.next(256), 1 + r.next(5)])
        stream += g
    stream = bytes(stream)
    whole, counts = decode_all(stream)
    bytewise, counts2 = decode_all(stream, "byte")
    chunks, counts3 = decode_all(stream, "random", Lcg(7))
    check(whole == bytewise == chunks, "chunking does not matter")
    check(counts == counts2 == counts3, "counters do not depend on chunking")
    it = iter(whole)  # every intact frame is found, in order
    check(all(any(x == s for x in it) for s in sent), "intact frames found")
    check(sum(len(f[2]) + W.OVERHEAD for f in whole) + counts[2] == len(stream), "byte accounting")
    print("resync", len(sent), counts[0], counts[1], counts[2])
    # a false SYNC with LEN 200 in front of a short frame: found once the line is idle
    f = W.encode(W.CMD, 9, b"hi")
    d = W.Decoder()
    check(d.feed(b"\x7e\xc8\x01" + f) == [], "waits for LEN bytes")
    check(d.expire() == [(W.CMD, 9, b"hi")], "expire delivers the frame behind")
    # a run of SYNC bytes
    got, counts = decode_all(b"\x7e" * 300 + f)
    check(got == [(W.CMD, 9, b"hi")] and counts[2] == 300, "SYNC run")
    # callback mode
    seen = []
    d = W.Decoder(lambda t, s, b: seen.append((t, s, b)))
    check(d.feed(f + b"zz" + f) == 2 and seen == [(W.CMD, 9, b"hi")] * 2, "callback")


def test_no_alloc():
    if micropython is None or not hasattr(micropython, "heap_lock"):
        print("no_alloc skipped")
        return
    buf = bytearray(W.MAX_FRAME)
    body = bytes(range(50))
    mv = memoryview(body)
    f = W.encode(W.CMD, 3, body)
    head = f[:-1]
    junk = b"abc\x00\xff"
    d = W.Decoder()
    n = 0
    micropython.heap_lock()
    try:
        for b in junk:
            d.feed_byte(b)
        for b in head:
            d.feed_byte(b)
        n = W.encode_into(buf, W.CMD, 3, mv) + W.crc16(buf) * 0
    finally:
        micropython.heap_unlock()
    check(n == len(f) and d.pending() == len(f) - 1, "no allocation per byte")
    check(d.feed_byte(f[-1]) == 1 and d.frames == [(W.CMD, 3, body)], "then the frame")
    print("no_alloc ok")


SAMPLE = {"B": (0, 1, 255), "H": (0, 258, 65535), "I": (0, 65539, 0xFFFFFFFF),
          "s": ("", "holdem", "\u00e9t\u00e9 \u2660", "x" * 255),
          "y": (b"", b"\x00\x7e\xff", bytes(255))}


def test_pack():
    fmts = ("", "B", "H", "I", "s", "y", "BssIy", "sHBss", "sBBB", "yI", "II", "yyss")
    for fmt in fmts:
        for k in range(3):
            vals = [SAMPLE[c][(k + i) % len(SAMPLE[c])] for i, c in enumerate(fmt)]
            body = W.pack(fmt, vals)
            check(W.unpack(fmt, body) == vals, "pack round trip %s" % fmt)
            check(W.unpack(fmt, memoryview(b"\x00" + body), 1) == vals, "memoryview, start")
            for cut in range(len(body)):
                check(raises(W.unpack, fmt, body[:cut]), "short body %s %d" % (fmt, cut))
            check(raises(W.unpack, fmt, body + b"\x00"), "overlong body %s" % fmt)
    check(raises(W.unpack, "s", b"\x02\xff\xfe"), "bad UTF-8")
    check(raises(W.unpack, "q", b"\x00"), "unknown letter")
    check(raises(W.pack, "q", [1]), "pack unknown letter")
    check(raises(W.pack, "B", [256]), "u8 range")
    check(raises(W.pack, "H", [-1]), "u16 range")
    check(raises(W.pack, "I", [1 << 32]), "u32 range")
    check(raises(W.pack, "B", ["1"]), "int type")
    check(raises(W.pack, "s", [b"x"]), "str type")
    check(raises(W.pack, "y", ["x"]), "bytes type")
    check(raises(W.pack, "s", ["x" * 256]), "string length")
    check(raises(W.pack, "BB", [1]), "value count")


def test_messages():
    for cid in sorted(W.COMMAND_ARGS):
        fmt = W.COMMAND_ARGS[cid]
        vals = [SAMPLE[c][1] for c in fmt]
        body = W.encode_command(W.COMMAND_NAMES[cid], vals)
        check(W.decode_command(body) == (cid, vals), "command %d" % cid)
        rfmt = W.COMMAND_REPLY[cid]
        rvals = [SAMPLE[c][2] for c in rfmt]
        if len(W.pack(rfmt, rvals)) < W.MAX_BODY:
            check(W.decode_reply(W.encode_reply_ok(rfmt, rvals), rfmt) == (W.OK, rvals), "reply")
    for body, code in ((b"", W.BAD_FRAME), (b"\x63", W.UNKNOWN_COMMAND),
                       (b"\x0e\x01", W.BAD_ARGUMENT), (b"\x05\x00", W.BAD_ARGUMENT)):
        try:
            W.decode_command(body)
            check(False, "decode_command %r" % body)
        except W.WireError as e:
            check(e.code == code, "error code %r" % body)
    e = W.encode_reply_error(W.WRONG_STATE, "deal before config")
    check(W.decode_reply(e, "I") == (W.WRONG_STATE, "deal before config"), "error reply")
    e = W.encode_reply_error(W.FAULT, "\u00e9" * 150)
    code, msg = W.decode_reply(e, "")
    check(code == W.FAULT and msg == "\u00e9" * 99 and len(e) <= W.MAX_BODY, "long message")
    entries = bytes(range(4 * W.MAX_EVENTS))
    body = W.encode_events(0x12345678, 77, entries)
    first, hand, es = W.decode_events(body)
    check(first == 0x12345678 and hand == 77 and b"".join(es) == entries, "events")
    check(len(W.event_frame(0x12345678, 77, entries)) == W.MAX_FRAME - 2, "event frame")
    check(raises(W.encode_events, 1, 1, entries + b"\x00" * 4), "too many events")
    check(raises(W.encode_events, 1, 1, b"\x00" * 5), "partial entry")
    check(raises(W.decode_events, body[:-1]), "event body length")
    check(W.decode_ack(W.encode_ack(4000000000)) == 4000000000, "ack")
    d = [(3, [1, 2, 52]), (5, [])]
    check(W.unpack_discards(W.pack_discards(d)) == d, "discards")
    check(raises(W.unpack_discards, b"\x03\x02\x01"), "short discards")


def test_fuzz_bodies():
    # malformed bodies raise WireError and nothing else, under MicroPython too
    r = Lcg(99)
    ok = bad = 0
    for i in range(3000):
        body = r.data(r.next(24))
        if i % 3 == 0 and body:  # a known command id, to reach the argument decoding
            body = bytes([1 + r.next(14)]) + body[1:]
        for f, args in ((W.decode_command, (body,)), (W.decode_reply, (body, "BssIy")),
                        (W.decode_reply, (body, "HIy")), (W.decode_events, (body,)),
                        (W.unpack_discards, (body,)), (W.unpack, ("yBI", body))):
            try:
                f(*args)
                ok += 1
            except W.WireError:
                bad += 1
    check(ok > 100 and bad > 100, "fuzz reached both outcomes")
    print("fuzz", ok, bad)


def test_identify():
    doc = b""
    offset = 0
    while True:
        code, vals = W.decode_reply(K.identify_reply(offset, "0.1.0", "shoe-0042", 3), "BssIy")
        check(code == W.OK and vals[:4] == [1, "0.1.0", "shoe-0042", 3], "identify fields")
        if not vals[4]:
            break
        doc += vals[4]
        offset += len(vals[4])
    check(doc == K.catalogue_json(), "catalogue reassembled")
    print("catalogue", len(doc), "%04X" % W.crc16(doc))


def test_seq_rto():
    check(W.next_seq(0) == 1 and W.next_seq(65535) == 1 and W.next_seq(7) == 8, "next_seq")
    rto = W.Rto()
    check(rto.rto == W.RTO_INITIAL_MS, "initial RTO")
    rto.sample(4)
    check(rto.rto == W.RTO_MIN_MS, "RTO floor")
    check(rto.backoff() == 2 * W.RTO_MIN_MS, "backoff")
    for _ in range(10):
        rto.backoff()
    check(rto.rto == W.RTO_MAX_MS, "RTO ceiling")


test_crc()
test_frames()
test_resync()
test_no_alloc()
test_pack()
test_messages()
test_fuzz_bodies()
test_identify()
test_seq_rto()
print("OK", checks)
