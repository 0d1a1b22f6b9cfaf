"""Atheris harness: the device end of the link (firmware/link.py) on the byte stream it reads,
over a Device on the CPython simulator HAL.

Input: one byte seeding how the stream is cut into reads and how far the clock moves between
them (sometimes past the idle timeout and the retransmission timer), then the stream. Checked
on every input: nothing but a simulated power cut escapes Link.service() (after one, the shoe
boots from its journal); no command is answered FAULT "internal fault"; a command answered with
an error changed nothing (fuzzlib.observe, the journal); everything the device writes is whole,
valid frames (REPLY, EVENT or NAK, bodies that decode); every EVENT frame carries exactly the
events the device numbered (a number sent again, after a retransmission or a reboot, carries
the same entry); no hand's log names a card inside the stub; and (once wire.COMMAND_ROLE
exists) no command above the session's role is answered OK.

    .venv/bin/python fuzz/fuzz_link.py [libFuzzer flags] [corpus dirs]
"""

import atheris

import fuzzlib  # the firmware's flat names, as on the device (fuzz/ is this script's folder)

# the byte loops of the journal (erase checks, CRCs) and the counter image run uninstrumented: its power cuts have their
# own sweeps (tests/test_journal.py); coverage guides through the device and the engine
with atheris.instrument_imports(exclude=["journal", "hal.flashdev", "shoe.snapshot"]):
    import wire as W
    import device  # noqa: F401
    import journal  # noqa: F401
    import link as L
    from hal.flashdev import PowerCut
    from hal import simmech  # noqa: F401
    from shoe import hand, zones, snapshot  # noqa: F401

stats = fuzzlib.Stats("link")
fuzzlib.quiet_gc()
MAX_ROUNDS = 400


class Port:
    def __init__(self):
        self.chunk = b""
        self.out = bytearray()

    def read_into(self, buf):
        n = min(len(buf), len(self.chunk))
        buf[:n] = self.chunk[:n]
        self.chunk = self.chunk[n:]
        return n

    def write(self, data):
        self.out += data


class Clock:
    def __init__(self):
        self.t = 1000

    def ticks_ms(self):
        return self.t

    @staticmethod
    def ticks_diff(a, b):
        return a - b


class Shoe:
    """A device behind its link, rebuilt after a power cut; what it numbered as events."""

    def __init__(self, data):
        self.data = data
        self.port = Port()
        self.clock = Clock()
        self.events = {}  # number -> (hand, entry) as the device numbered it
        self.sent = {}    # number -> (hand, entry) as it went out
        self.boot(None)

    def boot(self, old):
        if old is None:
            self.dev = fuzzlib.new_device()
        else:
            self.dev = fuzzlib.new_device(old.journal.dev, old.mech.tray)
            for n in [n for n in self.events if n >= self.dev.event_next and
                      n not in self.sent]:
                del self.events[n]  # numbered but never committed nor sent: numbered again
        for n, got in self.held().items():  # numbered at boot (restore)
            if self.sent.get(n, got) != got:
                raise fuzzlib.Finding("crashes", "event %d was sent as %r, after the reboot it is %r" % (
                    n, self.sent[n], got))
            self.events[n] = got
        self.wrap(self.dev)
        self.link = L.Link(self.port, self.dev, self.clock, 3)
        self.dev.mech.idle = self.link.idle

    def held(self):
        out = {}
        for first, hand_no, entries in self.dev.held:
            for k in range(len(entries) // 4):
                out[first + k] = (hand_no, bytes(entries[4 * k:4 * k + 4]))
        return out

    def wrap(self, dev):
        dev.run = dev.host.plain  # the link passes each frame's type itself (CMD or ACMD)
        collect, run = dev.collect, dev.run

        def numbered():
            before = dev.event_next
            collect()
            log = dev.hand.z.log if dev.hand is not None else b""
            for n in range(before, dev.event_next):
                i = (dev.logged - (dev.event_next - n)) * 4
                self.events[n] = (dev.hand_no, bytes(log[i:i + 4]))

        def checked(seq, body, ftype=W.CMD):
            before = fuzzlib.observe(dev)
            mark = len(dev.appended)
            role = dev.sessions.role if ftype == W.ACMD else W.ROLE_PUBLIC
            # the same SEQ again is a retry: the reply cached for it, whatever the body (6.1)
            cached = seq != 0 and any(p[0] == seq and p[2] == (ftype == W.ACMD)
                                      for p in dev.replies)
            reply = run(seq, body, ftype)
            if fuzzlib.internal_fault(reply):
                raise fuzzlib.Finding("crashes", "internal fault on %s: %r %r" % (
                    body.hex(), reply, dev.hal.logs[-3:]))
            if reply[0] == W.MECHANISM:
                stats.count("stopped")  # the step went as far as the mechanism did
            elif reply[0] != W.OK:
                stats.count("rejected")
                after = fuzzlib.observe(dev)
                if after != before or not fuzzlib.reply_only(dev.appended[mark:]):
                    raise fuzzlib.Finding("rejected_changes", "%s answered %r changed the state: %s %r" % (
                        body.hex(), reply, fuzzlib.changed(before, after),
                        dev.appended[mark:]))
            elif cached:
                stats.count("retried")
            else:
                cid = body[W.ACMD_HEADER] if ftype == W.ACMD else body[0]
                stats.count("ok:" + W.COMMAND_NAMES.get(cid, "?"))
                if fuzzlib.roles_live() and W.COMMAND_ROLE.get(cid, 0) > role:
                    raise fuzzlib.Finding("unauthenticated", "%s answered OK without the role" %
                              W.COMMAND_NAMES[cid])
            return reply

        dev.collect, dev.run = numbered, checked

    def round(self, chunk, dt):
        self.port.chunk = chunk
        self.clock.t += dt
        try:
            self.link.service()
        except PowerCut:
            stats.count("power_cuts")
            self.output()
            self.boot(self.dev)
        self.output()
        if self.dev.maintenance:
            stats.count("maintenance")
            self.boot(self.dev)  # the REPL had the line; a reset returns to the protocol

    def output(self):
        """Whatever the device wrote: whole valid frames, the events as numbered."""
        data = bytes(self.port.out)
        self.port.out = bytearray()
        if not data:
            return
        d = W.Decoder()
        frames = d.feed(data)
        if d.bytes_skipped or d.pending() or d.frames_bad:
            raise fuzzlib.Finding("crashes", "the device wrote bytes that are not frames: %s" % data.hex())
        for t, seq, body in frames:
            if t == W.REPLY:
                if not body:
                    raise fuzzlib.Finding("crashes", "an empty REPLY")
                if body[0] != W.OK:
                    W.unpack("s", body, 1)
            elif t == W.EVENT:
                first, hand_no, entries = W.decode_events(body)
                held = None
                for i, e in enumerate(entries):
                    n = first + i
                    if n not in self.events:  # reloaded from the journal by resume
                        held = held or self.held()
                        if n in held:
                            self.events[n] = held[n]
                    if self.events.get(n) != (hand_no, e):
                        raise fuzzlib.Finding("crashes", "event %d sent as %r, numbered as %r" % (
                            n, (hand_no, e), self.events.get(n)))
                    if self.sent.setdefault(n, (hand_no, e)) != (hand_no, e):
                        raise fuzzlib.Finding("crashes", "event %d sent as %r and as %r" % (
                            n, self.sent[n], (hand_no, e)))
                stats.count("event_frames")
            elif t != W.NAK:
                raise fuzzlib.Finding("crashes", "the device sent a frame of type %d" % t)
        h = self.dev.hand
        if h is not None:
            hidden = fuzzlib.walk(h.z.log)[2]
            if hidden:
                raise fuzzlib.Finding("disclosures", "the log names cards inside the stub: %r" % hidden)


def play(data):
    if not data:
        return
    x = data[0] | 1
    stream = data[1:]
    shoe = Shoe(data)
    i = 0
    rounds = 0
    while rounds < MAX_ROUNDS and (i < len(stream) or rounds < 8 + len(stream) // 16):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        r = x >> 16
        k = 1 + r % 80 if i < len(stream) else 0
        dt = (0, 1, 5, 30, 120, 400)[(r >> 8) % 6]
        shoe.round(stream[i:i + k], dt)
        i += k
        rounds += 1


TestOneInput = fuzzlib.harness(stats, play)

if __name__ == "__main__":
    fuzzlib.fuzz(TestOneInput)
