"""Atheris harness: the protocol decoder on untrusted bytes, as both ends use it.

Input: one byte choosing how the stream arrives (whole, in chunks of a seeded pseudo-random
size, or byte by byte), then the stream. The stream goes through wire.Decoder (resync, CRC,
idle expiry); every frame it delivers goes through every decoder either end applies to a body
it did not make: decode_command (the device), decode_reply with each command's reply format,
decode_events, decode_ack, unpack_discards (the device's draw), unpack for every argument
format, and the host's consumers of event entries and history documents (facedown.mirror,
facedown.history). Checked: only WireError (the codec's error type; StreamError for the
mirror, BadDocument for a history document) escapes; the decoder accounts for every byte (in a
frame, skipped, or buffered) and finds the same frames however the stream is chunked; each
frame is in the stream as wire.encode would write it; whatever decodes encodes back to the same
bytes.

    .venv/bin/python fuzz/fuzz_codec.py [libFuzzer flags] [corpus dirs]
"""

import atheris

import fuzzlib  # the firmware's flat names, as on the device (fuzz/ is this script's folder)

with atheris.instrument_imports():
    import wire as W
    from shoe import logplay, zones  # noqa: F401
    from facedown import history, mirror

stats = fuzzlib.Stats("codec")
REPLY_FORMATS = sorted(set(W.COMMAND_REPLY.values()))
ARG_FORMATS = sorted(set(W.COMMAND_ARGS.values()))
GAMES = ("holdem", "omaha6", "shortdeck", "stud", "draw5")


def decode(stream, how):
    """(frames, counters) of a fresh decoder; how: 0 whole, 1 bytes, else chunks seeded by how.
    The line goes idle at the end."""
    d = W.Decoder()
    out = []
    if how == 0:
        out += d.feed(stream)
    elif how == 1:
        for b in stream:
            d.feed_byte(b)
        out += d.frames
        d.frames = []
    else:
        i = 0
        x = how
        view = memoryview(stream)
        while i < len(stream):
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF
            k = 1 + (x >> 16) % 64
            out += d.feed(view[i:i + k])
            i += k
    pending = d.pending()
    n_before = sum(len(f[2]) + W.OVERHEAD for f in out) + d.bytes_skipped + pending
    out += d.expire()
    return out, (d.frames_ok, d.frames_bad, d.bytes_skipped, d.pending(), n_before)


def bodies(body):
    """Every decoder of the protocol on one body; raises AssertionError on a broken property."""
    try:
        cid, args = W.decode_command(body)
    except W.WireError as e:
        assert e.code in (W.BAD_FRAME, W.UNKNOWN_COMMAND, W.BAD_ARGUMENT)
    else:
        assert W.encode_command(cid, args) == body
    for fmt in REPLY_FORMATS:
        try:
            code, values = W.decode_reply(body, fmt)
        except W.WireError:
            pass
        else:
            if code == W.OK:
                assert W.encode_reply_ok(fmt, values) == body
    for fmt in ARG_FORMATS:
        try:
            values = W.unpack(fmt, body)
        except W.WireError:
            pass
        else:
            assert W.pack(fmt, values) == body
    try:
        first, hand, entries = W.decode_events(body)
    except W.WireError:
        entries = None
    else:
        assert W.encode_events(first, hand, b"".join(entries)) == body
    try:
        W.decode_ack(body)
    except W.WireError:
        pass
    try:
        items = W.unpack_discards(body)
    except W.WireError:
        pass
    else:
        assert W.pack_discards(items) == body
    if entries:
        m = mirror.Mirror(GAMES[body[4] % len(GAMES)], [1, 2, 3, 4, 5, 6], 6, "tda2024")
        for e in entries:
            try:
                m.apply(e)
            except mirror.StreamError:
                break
        m.record()
    try:
        h = history.parse(body)
        history.verify(h)
        history.to_record(h)
    except history.BadDocument:
        pass


def play(data):
    if not data:
        return
    how, stream = data[0], data[1:]
    whole, counts = decode(stream, 0)
    assert counts[4] == len(stream), "bytes unaccounted for: %r of %d" % (counts, len(stream))
    assert counts[3] == 0 and counts[0] == len(whole)
    if how:
        other, counts2 = decode(stream, how)
        assert other == whole and counts2 == counts, "chunking changed the frames"
    for t, s, body in whole:
        assert 1 <= t <= W.TYPE_MAX and 0 <= s <= 0xFFFF and len(body) <= W.MAX_BODY
        assert W.encode(t, s, body) in stream
        bodies(body)
    if not whole and len(stream) <= W.MAX_BODY:
        bodies(stream)  # the raw bytes as a body too: the decoders see every shape


TestOneInput = fuzzlib.harness(stats, play)

if __name__ == "__main__":
    fuzzlib.fuzz(TestOneInput)
