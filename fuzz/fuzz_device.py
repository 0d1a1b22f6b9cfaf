"""Atheris harness: every command handler (firmware/device.py Device.run) on the CPython
simulator HAL, fed sequences of command bodies, valid or not, deep into hands.

Input: records `op u8 | len u8 | body` (a CMD body, decoded by the device itself). op:
  bits 0-1  the SEQ: 0 the next, 1 the same again (a retry), 2 SEQ 0 (a new session),
            3 a jump of op >> 3
  bit 2     before the command, the twin's undealt stub is put in another random order
  bit 3     if the command's journal writes are cut by a simulated power cut, the sensors
            cannot tell where the card in flight went (the operator must send recover)
  0xFF      a power cut between commands (body[0] bit 0: the sensors cannot tell what is
            at the output), then both devices boot from their journals
  0xFE      a press of the front panel's button body[0] (panel.BUTTONS), with the floor key
            turned if body[1] bit 0 is set: the commands it runs (firmware/panel.py)
Two devices run the same input: A, and its twin B whose undealt stub is reordered after every
new hand, every reboot and on bit 2 (after a stretch not compared, both boot again from A's
journal at the next hand). After each command: A's reply is no internal fault; if it
is an error, A's state and journal are as before (fuzzlib.observe); A's and B's replies, event
logs and counters are the same once every card is named by the order it left the stub (the
cards dealt into view are the only difference allowed); no log names a card inside the stub;
and (once wire.COMMAND_ROLE exists) no command above the session's role is answered OK.

    .venv/bin/python fuzz/fuzz_device.py [libFuzzer flags] [corpus dirs]
"""

import random

import atheris

import fuzzlib  # the firmware's flat names, as on the device (fuzz/ is this script's folder)

# the byte loops of the journal (erase checks, CRCs) and the counter image run uninstrumented: its power cuts have their
# own sweeps (tests/test_journal.py); coverage guides through the device and the engine
with atheris.instrument_imports(exclude=["journal", "hal.flashdev", "shoe.snapshot"]):
    import wire as W
    import device  # noqa: F401
    import journal  # noqa: F401
    import recorder  # noqa: F401
    from hal.flashdev import PowerCut
    from hal import simmech  # noqa: F401
    from shoe import hand, zones, snapshot, logplay  # noqa: F401
    from shoe.games import STUD
    from shoe.hand import DEALING

MAX_COMMANDS = 48
REBOOT = 0xFF
PANEL = 0xFE
STATUS = W.COMMAND_IDS["status"]
HISTORY = W.COMMAND_IDS["history"]
HAND = W.COMMAND_IDS["hand"]
MAINTENANCE = W.COMMAND_IDS["maintenance"]
stats = fuzzlib.Stats("device")
fuzzlib.quiet_gc()


def records(data):
    i = 0
    n = 0
    while i + 2 <= len(data) and n < MAX_COMMANDS:
        op, k = data[i], data[i + 1]
        yield op, bytes(data[i + 2:i + 2 + k])
        i += 2 + k
        n += 1


def permute(dev, rnd):
    """Put the undealt stub (and the magazine that holds it) in another order."""
    h = dev.hand
    if h is None or len(h.z.stub) < 2:
        return False
    m = dev.mech
    taken = [c & 63 for c in m.delivered]  # cards already out (a power cut): the stub's top
    if [c for c in h.z.stub if c not in taken] != list(m.stack):
        return False  # the magazine does not hold the stub as it is (a disordered stub)
    rest = list(m.stack)
    if len(rest) < 2:
        return False
    before = list(rest)
    while rest == before:
        rnd.shuffle(rest)
    h.z.stub[:] = rest + [c for c in h.z.stub if c in taken]
    m.stack[:] = rest
    return True


def translate(body, phi, stub):
    """B's copy of a command that names cards (A's card -> the card of B it stands for).
    Returns (body for B, physical) where physical is True for a simulated counterfeit of a card
    still inside the stub (the mechanism's world, not the host's: see docs/testing.md)."""
    if not body or body[0] not in (W.COMMAND_IDS["draw"], W.COMMAND_IDS["recover"],
                                   W.COMMAND_IDS["sim_fault"]):
        return body, False
    try:
        cid, args = W.decode_command(body)
    except W.WireError:
        return body, False
    name = W.COMMAND_NAMES[cid]
    if name == "draw":
        try:
            items = W.unpack_discards(args[0])
        except W.WireError:
            return body, False
        items = [(s, [phi.get(c, c) for c in cards]) for s, cards in items]
        return W.encode_command(cid, [W.pack_discards(items)]), False
    if name == "recover":
        return W.encode_command(cid, [phi.get(args[0], args[0])]), False
    kind, at, card, flags = args
    physical = kind in ("foreign", "duplicate") and card in stub
    if kind not in ("foreign", "duplicate"):  # the byte is no card (feed_jam: how many times)
        return body, physical
    return W.encode_command(cid, [kind, at, phi.get(card, card), flags]), physical


def counterfeit(dev):
    """Is a simulated foreign or duplicate card of the game's deck armed? When it comes out,
    the reader sees a card of the deck that may still be inside the stub, and the engine's
    out-of-sequence and fouled-deck checks compare it with the physical stack: a fact of the
    mechanism's world, not something the host asked (docs/testing.md). The twins are not
    compared until a hand starts with none armed."""
    return any(f[0] in ("foreign", "duplicate") and f[2] & 63 < 52 for f in dev.mech.faults)


def order_by_upcards(dev):
    """Is the hand stud's, and bet? Its order of action follows the cards dealt face up (the
    bring-in, then the best hand showing: TDA RP-10, RRoP Stud), and the twins' face-up cards
    differ by design (B's stub is reordered), so their betting replies may differ without any
    hidden card showing through: the twins are not compared until the next hand."""
    h = dev.hand
    return h is not None and h.bets is not None and h.kind == STUD


class Twin:
    """Devices A and B and what the comparison keeps between commands."""

    def __init__(self, rnd):
        self.rnd = rnd
        self.a = fuzzlib.new_device()
        self.b = fuzzlib.new_device()
        self.status_a = self.status_b = None
        self.cache_a = self.cache_b = None
        self.ni = True  # compare A and B (off after a simulated counterfeit of a stub card)

    def reboot(self, blind):
        self.a = fuzzlib.new_device(self.a.journal.dev, self.a.mech.tray, blind)
        self.b = fuzzlib.new_device(self.b.journal.dev, self.b.mech.tray, blind)
        stats.count("reboots")
        permute(self.b, self.rnd)

    def refork(self):
        """The twins went apart while they were not compared (a counterfeit card): both boot
        again from A's journal, and B's stub is reordered."""
        from hal.flashdev import RamFlash

        flash, tray = self.a.journal.dev, self.a.mech.tray
        self.a = fuzzlib.new_device(RamFlash(flash.blocks, bytearray(flash.mem)), tray)
        self.b = fuzzlib.new_device(RamFlash(flash.blocks, bytearray(flash.mem)), tray)
        self.status_a = self.status_b = None
        stats.count("reforked")
        permute(self.b, self.rnd)

    def labels(self):
        out = []
        for dev in (self.a, self.b):
            h = dev.hand
            out.append(fuzzlib.walk(h.z.log) if h is not None else ([], {}, []))
        return out


def view(dev, cid, reply, names, twin_cache):
    """What the host sees of a reply, every card named canonically."""
    code = reply[0]
    if code != W.OK:
        try:
            msg = W.unpack("s", reply, 1)[0]
        except W.WireError:
            return ("unreadable", bytes(reply))
        return (code, fuzzlib.relabel_text(msg, names))
    if cid == STATUS:
        hand_no, nxt, chunk = W.unpack("HIy", reply, 1)
        return (code, hand_no, nxt, len(chunk), twin_cache)
    if cid == HISTORY and dev.histories is not None:
        size, chunk = W.unpack("Hy", reply, 1)
        doc = dev.histories[2]
        if dev.histories[1] == 0:  # the list of stored hands
            return (code, size, len(chunk), doc.chunk(0, len(doc)))
        doc = bytes(doc)
        n = doc[71]
        entries, _, hidden = fuzzlib.walk(doc[72 + n:])
        # the hashes cover the dealt cards: they differ with them; the rest must not
        return (code, size, len(chunk), doc[:7], doc[72:72 + n], entries, len(hidden))
    return (code, bytes(reply))


def check_status_doc(dev):
    """A new status snapshot names no card that is inside the stub."""
    h = dev.hand
    if h is None or dev.status_cache is None:
        return None
    from shoe import cards as C

    for name in fuzzlib.card_names(dev.status_cache[1].decode()):
        code = C.parse(name)
        if code < C.NCODES and h.z.where[code] == zones.STUB:
            return "status names %s, a card inside the stub" % name
    return None


def one(t, seq, body, data, blind=False):
    """Run one command on both devices and check every invariant."""
    a, b = t.a, t.b
    (_, lab_a, _), (_, lab_b, _) = t.labels()
    phi = fuzzlib.bijection(lab_a, lab_b)
    stub = set(a.hand.z.stub) if a.hand is not None else set()
    body_b, physical = translate(body, phi, stub)
    if t.ni and (physical or counterfeit(a)):
        t.ni = False
        stats.count("ni_off_counterfeit_card")
    elif t.ni and order_by_upcards(a):
        t.ni = False
        stats.count("ni_off_stud_betting")
    cached = seq != 0 and any(p[0] == seq for p in a.replies)  # a retry: the reply it had
    before = fuzzlib.observe(a)
    mark = len(a.appended)
    cache_a, cache_b = a.status_cache, b.status_cache
    out = []
    authed = seq % 8 != 7  # an eighth of the commands come without the session
    role = a.sessions.role if authed else W.ROLE_PUBLIC  # (before: logout ends it)
    for dev, bd in ((a, body), (b, body_b)):
        try:
            out.append(dev.run(seq, bd, authed, (seq, bytes(body))))
        except PowerCut:
            out.append(None)
        except Exception as e:  # anything but the device's own error replies is a crash
            stats.finding("crashes", data, "Device.run(%d, %s) raised\n%s" % (
                seq, bd.hex(), fuzzlib.describe(e)))
            return "dead"
    ra, rb = out
    if ra is None or rb is None:
        stats.count("power_cuts")
        if (ra is None) != (rb is None) and t.ni:
            stats.finding("disclosures", data, "only one twin lost power on %s" % body.hex())
        t.reboot(blind)
        return "cut"
    cid = body[0] if body else -1
    for dev, r, bd in ((a, ra, body), (b, rb, body_b)):
        if fuzzlib.internal_fault(r):
            stats.finding("crashes", data, "internal fault on %s: %r\nlog: %r" % (
                bd.hex(), bytes(r), dev.hal.logs[-3:]))
            return "dead"
    if ra[0] == W.MECHANISM:
        stats.count("stopped")  # a stopping fault: the step went as far as the mechanism did
    elif ra[0] != W.OK:
        stats.count("rejected")
        if fuzzlib.observe(a) != before:
            stats.finding("rejected_changes", data, "%s answered %r changed the state: %s" % (
                body.hex(), bytes(ra), fuzzlib.changed(before, fuzzlib.observe(a))))
        elif not fuzzlib.reply_only(a.appended[mark:]):
            stats.finding("rejected_changes", data, "%s answered %r wrote %r" % (
                body.hex(), bytes(ra), a.appended[mark:]))
    elif cached:
        stats.count("retried")
    else:
        stats.count("ok:" + W.COMMAND_NAMES.get(cid, "?"))
        if fuzzlib.roles_live():
            need = W.COMMAND_ROLE.get(cid, 0)
            if need > role:
                stats.finding("unauthenticated", data, "%s needs role %d, the frame had %d" % (
                    W.COMMAND_NAMES[cid], need, role))
    if cid == STATUS and a.status_cache is not cache_a:
        why = check_status_doc(a)
        if why:
            stats.finding("disclosures", data, why)
    if not t.ni:
        return ra

    def views(names_a, names_b):
        # (a snapshot read to its end is let go: None, and the next status makes a new one)
        if a.status_cache is not cache_a and a.status_cache is not None:
            t.status_a = fuzzlib.relabel_text(a.status_cache[1].decode(), names_a)
        if b.status_cache is not cache_b and b.status_cache is not None:
            t.status_b = fuzzlib.relabel_text(b.status_cache[1].decode(), names_b)
        if cached:  # compared when it was made
            return ra[0], rb[0]
        return (view(a, cid, ra, names_a, t.status_a), view(b, cid, rb, names_b, t.status_b))

    alike(t, data, body.hex(), views)
    return ra


def alike(t, data, what, views):
    """Noninterference: B must look like A, the dealt cards aside (views(names_a, names_b):
    what the host sees of the step on each, every card named canonically)."""
    a, b = t.a, t.b
    (log_a, lab_a, hid_a), (log_b, lab_b, hid_b) = t.labels()
    if hid_a or hid_b:
        stats.finding("disclosures", data, "the log names cards inside the stub: %r %r" % (
            hid_a, hid_b))
        return
    phi = fuzzlib.bijection(lab_a, lab_b)
    psi = {v: k for k, v in phi.items()}
    va, vb = views(fuzzlib.name_map(lab_a), fuzzlib.name_map(lab_b, psi))
    ca = (a.hand_no, a.event_next, len(a.held), a.hand is None or len(a.hand.z.stub),
          a.recovery is None, a.maintenance)
    cb = (b.hand_no, b.event_next, len(b.held), b.hand is None or len(b.hand.z.stub),
          b.recovery is None, b.maintenance)
    if log_a != log_b or va != vb or ca != cb:
        what = "after %s: " % what
        if log_a != log_b:
            k = next(i for i in range(min(len(log_a), len(log_b)) + 1)
                     if i >= len(log_a) or i >= len(log_b) or log_a[i] != log_b[i])
            what += "logs differ at entry %d: %r / %r" % (k, log_a[k:k + 3], log_b[k:k + 3])
        elif va != vb:
            what += "replies differ: %r / %r" % (va, vb)
        else:
            what += "counters differ: %r / %r" % (ca, cb)
        stats.finding("disclosures", data, what)
        t.ni = False


def press(t, body, data):
    """A press of the front panel's button body[0] (panel.BUTTONS; body[1] bit 0: the floor key
    turned) on both devices, checked as a command is."""
    import panel

    button = panel.BUTTONS[body[0] % len(panel.BUTTONS)] if body else "deal"
    key = len(body) > 1 and bool(body[1] & 1)
    a = t.a
    before = fuzzlib.observe(a)
    out = []
    for dev in (t.a, t.b):
        try:
            out.append(panel.press(dev, button, key))
        except PowerCut:
            out.append(None)
        except Exception as e:
            stats.finding("crashes", data, "panel %s raised\n%s" % (button, fuzzlib.describe(e)))
            return "dead"
    ra, rb = out
    if ra is None or rb is None:
        stats.count("power_cuts")
        if (ra is None) != (rb is None) and t.ni:
            stats.finding("disclosures", data, "only one twin lost power on the %s button" %
                          button)
        t.reboot(False)
        return "cut"
    for dev, r in ((t.a, ra), (t.b, rb)):
        if r[0] == W.FAULT:
            stats.finding("crashes", data, "panel %s: %s\nlog: %r" % (button, r[1],
                                                                       dev.hal.logs[-3:]))
            return "dead"
    if ra[0] not in (W.OK, W.MECHANISM):
        stats.count("panel:refused")
        if fuzzlib.observe(a) != before:
            stats.finding("rejected_changes", data, "panel %s refused (%r) changed the state: "
                                                    "%s" % (button, ra, fuzzlib.changed(
                                                        before, fuzzlib.observe(a))))
    else:
        stats.count("panel:" + button)
    if t.ni:
        alike(t, data, "the %s button" % button, lambda na, nb: (
            (ra[0], fuzzlib.relabel_text(ra[1], na)), (rb[0], fuzzlib.relabel_text(rb[1], nb))))
    return (ra[0],)


def play(data):
    rnd = random.Random(data)
    t = Twin(rnd)
    seq = 0
    for op, body in records(data):
        if op == REBOOT:
            t.reboot(bool(body[:1]) and bool(body[0] & 1))
            continue
        if op == PANEL:
            hand_no = t.a.hand_no
            r = press(t, body, data)
            if r == "dead":
                break
            if r != "cut" and r[0] == W.OK and t.a.hand_no != hand_no:
                new_hand(t, rnd)
            continue
        mode = op & 3
        if mode == 0:
            seq = W.next_seq(seq)
        elif mode == 2:
            seq = 0
        elif mode == 3:
            seq = (seq + (op >> 3)) % 0x10000
        if op & 4 and permute(t.b, rnd):
            stats.count("reordered")
        hand_no = t.a.hand_no
        r = one(t, seq, body, data, bool(op & 8))
        if r == "dead":
            break
        if r == "cut":
            continue
        if r[0] == W.OK and body[:1] == bytes([HAND]) and t.a.hand_no != hand_no:
            new_hand(t, rnd)
        if t.a.maintenance:
            t.reboot(False)  # the REPL had the line; a reset returns to the protocol
        h = t.a.hand
        if h is not None and h.status == DEALING:
            stats.count("steps_mid_hand")


def new_hand(t, rnd):
    """A new hand: the comparison starts again, from twins alike but for the stub."""
    if counterfeit(t.a):
        t.ni = False
    elif t.ni:
        permute(t.b, rnd)
    else:
        t.refork()
        t.ni = True


TestOneInput = fuzzlib.harness(stats, play)

if __name__ == "__main__":
    fuzzlib.fuzz(TestOneInput)
