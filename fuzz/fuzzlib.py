"""What the fuzz harnesses share: the firmware on a CPython simulator HAL (RAM flash, seeded
randomness, an in-memory output tray), the invariants every input is checked against, their
counters, and the seed corpora built from valid frames.

The invariants (docs/testing.md, "Fuzzing"):

* crash: an exception other than the codec's or the command's own error types escapes, or a
  command is answered FAULT "internal fault" (the device's catch-all for a bug);
* rejected_change: a command answered with an error changed the device's observable state or
  its journal (beyond the reply the journal keeps for a retry);
* disclosure: a reply or event depends on the order of the undealt stub (two devices dealt
  identically whose stubs differ only in order must answer alike, the cards actually dealt
  into view aside), or names a card that never left the stub;
* unauthenticated: an OK reply to a command whose wire.COMMAND_ROLE is above Device.role
  (n/a while wire has no COMMAND_ROLE).
"""

import copy
import hashlib
import json
import os
import re
import sys
import traceback

from facedown import firmware as _firmware
from facedown.firmware import FIRMWARE, PROTOCOL, ROOT

# The harnesses are the device run under CPython: they import the firmware by its flat names,
# as main.py does on the shoe (atheris instruments and excludes modules by those names), and
# the host code they call gets the same modules. The fuzzing processes' bootstrap, as
# tests/conftest.py is the test process's.
for _p in (PROTOCOL, FIRMWARE):
    if _p not in sys.path:
        sys.path.insert(0, _p)
_firmware.share_flat_names()

INVARIANTS = ("crashes", "rejected_changes", "disclosures", "unauthenticated")


# --- counters and crash inputs -----------------------------------------------------------------
class Stats:
    """Counters of one harness process, written as JSON to $FUZZ_STATS every few hundred
    inputs and at the last one ($FUZZ_RUNS): libFuzzer ends the process with exit(), past any
    Python clean-up."""

    def __init__(self, target):
        self.target = target
        self.c = {"inputs": 0, "crashes": 0, "rejected_changes": 0, "disclosures": 0,
                  "unauthenticated": 0 if roles_live() else None}
        self.extra = {}
        self.path = os.environ.get("FUZZ_STATS")
        self.runs = int(os.environ.get("FUZZ_RUNS", "0"))
        self.crash_dir = os.environ.get("FUZZ_CRASH_DIR", os.path.join(ROOT, "fuzz", "out",
                                                                       "crashes"))
        self.saved = 0
        self.first = []  # the first few findings, described

    def count(self, key, n=1):
        self.extra[key] = self.extra.get(key, 0) + n

    def input_done(self):
        self.c["inputs"] += 1
        n = self.c["inputs"]
        if self.path and (n % 500 == 0 or n == self.runs):
            self.dump()

    def dump(self):
        if not self.path:
            return
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"target": self.target, "counters": self.c, "extra": self.extra,
                       "findings": self.first}, f)
        os.replace(tmp, self.path)

    def finding(self, kind, data, what):
        """An invariant broke on this input: count it, keep the input and say why."""
        self.c[kind] += 1
        if len(self.first) < 20:
            self.first.append({"kind": kind, "what": what[-2000:]})
        if self.saved < 200:
            os.makedirs(self.crash_dir, exist_ok=True)
            name = "%s-%s-%s" % (self.target, kind, hashlib.sha1(bytes(data)).hexdigest()[:16])
            with open(os.path.join(self.crash_dir, name + ".bin"), "wb") as f:
                f.write(bytes(data))
            with open(os.path.join(self.crash_dir, name + ".txt"), "w") as f:
                f.write(what + "\n")
            self.saved += 1
        if os.environ.get("FUZZ_RAISE"):  # replaying one input: stop at the finding
            raise AssertionError("%s: %s" % (kind, what))
        self.dump()


class Finding(Exception):
    """An invariant broke: Finding(kind, what), kind one of INVARIANTS."""


def harness(stats, play):
    """The TestOneInput of play(data): a Finding counts as its kind, any other exception as a
    crash; either way the input is kept."""

    def test_one_input(data):
        try:
            play(bytes(data))
        except Finding as e:
            stats.finding(e.args[0], data, e.args[1])
        except Exception as e:
            stats.finding("crashes", data, describe(e))
        stats.input_done()

    return test_one_input


def fuzz(test_one_input):
    """Hand the harness to libFuzzer (flags and corpus folders from the command line)."""
    import atheris

    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


def describe(exc):
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def roles_live():
    import wire

    return hasattr(wire, "COMMAND_ROLE")


# --- the simulator HAL on CPython --------------------------------------------------------------
def sim_classes():
    from hal.simmech import SimMech

    class FuzzMech(SimMech):
        """The simulated mechanism with the output tray in memory (SimMech keeps it in a file):
        after a power cut the sensors see what it holds, or (blind) cannot tell."""

        def __init__(self, tray=None, blind=False):
            SimMech.__init__(self)
            self.world = "memory"
            self.tray = list(tray or ())
            self.blind = blind

        def _remember(self, out):
            self.tray = list(out)

        def inspect(self):
            return None if self.blind else list(self.tray)

    from caps import CAP_JOURNAL, CAP_SIM
    from hal.base import Hal

    class FuzzHal(Hal):
        """firmware/hal/sim.py's SimHal without the unix port: RAM flash, a seeded random
        source per hand, a log kept in memory; a provisioned shoe whose small files (key,
        signed manifest, audit log) live in memory, and whose nonces are seeded (twins open
        the same session)."""

        simulated = True
        caps = CAP_SIM | CAP_JOURNAL
        device_id = "fuzz-0001"

        def __init__(self, flash, mech=None):
            import random

            self.flash = flash
            self.mech = mech or FuzzMech()
            self.deck = None
            self.hands = 0
            self.logs = []
            self.store = MemStore(provisioned())
            self.clock = Clock()
            self._nonces = random.Random(7)

        def entropy(self, n):
            return bytes(self._nonces.getrandbits(8) for _ in range(n))

        def maintenance_switch(self):
            return False

        def rng(self, seed):
            from shoe.rng import SeededRandom

            self.hands += 1
            return SeededRandom(seed if seed is not None else "fuzz/%d" % self.hands)

        def log(self, msg):
            if len(self.logs) < 50:
                self.logs.append(msg)

    return FuzzMech, FuzzHal


class Clock:
    """A clock that stands still: sessions do not expire inside an input."""

    @staticmethod
    def ticks_ms():
        return 1000

    @staticmethod
    def ticks_diff(a, b):
        return a - b


class MemStore:
    """firmware/hal/store.py's DirStore in memory."""

    def __init__(self, files=None):
        self.data = dict(files or {})

    def path(self, name):
        return name

    def read(self, name, mode="r"):
        d = self.data.get(name)
        if d is None:
            return None
        return d if mode == "rb" else d.decode()

    def lines(self, name):
        d = self.data.get(name)
        return iter(d.decode().splitlines(True)) if d is not None else iter(())

    def write(self, name, text):
        self.data[name] = bytes(text) if isinstance(text, (bytes, bytearray)) else text.encode()

    def append(self, name, data):
        self.data[name] = self.data.get(name, b"") + bytes(data)

    def size(self, name):
        return len(self.data[name]) if name in self.data else -1

    def rename(self, old, new):
        self.data[new] = self.data.pop(old)

    def files(self, folder=""):
        return sorted(self.data)


KEY = bytes(range(32))  # the fuzzed shoe's key
_PROVISIONED = []


def provisioned():
    """The files of a provisioned shoe: its key, a manifest of no program file, its MAC."""
    if not _PROVISIONED:
        import json

        from facedown.keys import Key

        data = json.dumps({"files": {}}).encode()
        _PROVISIONED.append({"device.key": KEY.hex().encode(), "manifest.json": data,
                             "manifest.mac": Key("fuzz-0001", "device", KEY).manifest_mac(
                                 data).encode()})
    return _PROVISIONED[0]


class Session:
    """The maintenance session a host opens on a new device (seeded nonces: twins get the same
    one), and its ACMD frames: run(seq, body) sends body authenticated, as the host's client
    does; a retry of (seq, body) is the same frame."""

    def __init__(self, dev):
        import wire
        from facedown import keys

        self.dev = dev
        self.plain = dev.run
        rk = keys.Key("fuzz-0001", "device", KEY).for_role(wire.ROLE_MAINTENANCE)
        self.plain(0xFFF0, wire.encode_command("ping", [0]))
        (dn,) = wire.decode_reply(self.plain(0xFFF1, wire.encode_command("challenge", [2])),
                                  "y")[1]
        hn = bytes(16)
        proof = keys.login_proof(rk, 2, "fuzz-0001", dn, hn, 0)
        code, got = wire.decode_reply(self.plain(0xFFF2, wire.encode_command(
            "login", [hn, proof, 0])), "yI")
        assert code == 0, got
        self.session = keys.Session("fuzz-0001", "maintenance",
                                    keys.session_key(rk, dn, hn), got[1])
        self.frames = {}

    def run(self, seq, body, authed=True, key=None):
        """key: what makes a frame a resend of an earlier one, (seq, body) by default. Twins
        are given the input's (seq, A's body): B's body names B's cards, which the same input
        can name differently later (as cards are dealt), and a resend must be one for both."""
        import wire

        if not authed:
            return self.plain(seq, body)
        key = (seq, bytes(body)) if key is None else key
        frame = self.frames.get(key)
        if frame is None:
            frame = self.session.frame_body(seq, body)
            if len(self.frames) > 64:
                self.frames.clear()
            self.frames[key] = frame
        return self.plain(seq, frame, wire.ACMD)


FLASH_BLOCKS = 12  # a small ring: the journal wraps within one input's hands
_BLANK = []


def quiet_gc():
    """Device.status_json collects the garbage before each snapshot (a Pico's small heap): on
    CPython a full collection per status costs more than the command; the harnesses skip it."""
    import gc

    gc.collect = lambda *args: 0


def new_device(flash=None, tray=None, blind=False):
    """A Device on the simulator HAL over RAM flash (a fresh one, or `flash` after a power
    cut: revived, with what the output tray holds)."""
    from device import Device
    from hal.flashdev import RamFlash

    FuzzMech, FuzzHal = sim_classes()
    if flash is None:
        if not _BLANK:  # a formatted journal, copied for each new device
            from journal import Journal

            blank = RamFlash(blocks=FLASH_BLOCKS)
            Journal(blank)
            _BLANK.append(bytes(blank.mem))
        flash = RamFlash(blocks=FLASH_BLOCKS, image=bytearray(_BLANK[0]))
    flash.revive()
    dev = Device(FuzzHal(flash, FuzzMech(tray, blind)))
    watch_journal(dev)
    # a maintenance session: dev.run(seq, body) sends as it, dev.run(seq, body, False) without
    dev.host = Session(dev)
    dev.run = dev.host.run
    return dev


def watch_journal(dev):
    """Record every journal record the device appends (dev.appended: [(type, payload)])."""
    j = dev.journal
    dev.appended = []
    plain = j._append

    def append(t, payload):
        dev.appended.append((t, bytes(payload)))
        return plain(t, payload)

    j._append = append


# --- observable state, for "a rejected command changes nothing" -------------------------------
_HAND_SKIP = ("rng", "mech", "z")


def observe(dev):
    """Everything a rejected command must leave as it was: the configuration, the hand (every
    counter and zone, the stub's order included), the events held for the host, the simulator's
    armed faults and stacked deck, the recovery and maintenance states, and the journal's state
    (what a reboot would restore). Not: the reply cache and its journal record (a retry gets the
    same error), the status/history chunk caches, the mechanism's per-step feed count (reset
    at every dealing command, SPEC 9 sim_fault), and the countdown of a simulated power cut
    (it counts journal records, the reply's among them)."""
    h = dev.hand
    hand = None
    if h is not None:
        z = h.z
        hand = (repr(sorted((k, v) for k, v in vars(h).items() if k not in _HAND_SKIP)),
                bytes(z.where), list(z.stub), list(z.board), list(z.burns), list(z.muck),
                list(z.aside), repr(sorted(z.seats.items())), list(z.removed), bytes(z.log))
    m = dev.mech
    j = dev.journal
    jh = j.hand
    return (repr(dev.config), dev.hand_no, dev.event_next, dev.logged,
            [(a, b, bytes(c)) for a, b, c in dev.held], repr(dev.sim_order), repr(dev.sim_seed),
            dev.recovery, dev.maintenance, dev.resend_from, hand,
            (list(m.stack), copy.deepcopy(m.faults), m.no_burn, list(m.delivered)),
            (j.config, j.hand_no, j.event_next, j.chain,
             None if jh is None else (jh.number, bytes(jh.entries), bytes(jh.image or b""),
                                      jh.feeding)))


_PARTS = ("config", "hand_no", "event_next", "logged", "held", "sim_order", "sim_seed",
          "recovery", "maintenance", "resend_from", "hand", "mechanism", "journal")


def changed(before, after):
    """Which parts of two observe() results differ (for the finding's description)."""
    out = []
    for name, x, y in zip(_PARTS, before, after):
        if x != y:
            if name == "hand":
                out += ["hand.%d" % i for i in range(len(x or ())) if y is None or x[i] != y[i]]
                if x and y and x[0] != y[0]:
                    out.append("%s -> %s" % (x[0][:1500], y[0][:1500]))
            else:
                out.append("%s: %r -> %r" % (name, x, y))
    return "; ".join(out)[:4000]


def reply_only(records):
    """Are these appended journal records only the reply a rejected command leaves (a COMMIT
    with no entries, no counter change, no feed)?"""
    from journal import R_COMMIT, F_REPLY, F_ACMD

    for t, p in records:
        if t != R_COMMIT or p[0] != 0 or p[1] & ~F_ACMD != F_REPLY or p[2] != 0:
            return False
    return True


def internal_fault(reply):
    import wire

    return len(reply) > 1 and reply[0] == wire.FAULT and b"internal fault" in reply


# --- the stub's secrecy --------------------------------------------------------------------------
_NAME = re.compile(r"(?<![0-9A-Za-z])([2-9TJQKA][cdhs]|Jk)(?![0-9A-Za-z])")


def card_names(text):
    return _NAME.findall(text)


def walk(log):
    """Relabel a hand's log: a card is named by the order in which it left the stub ("#n", a
    new label each time it leaves), from then until it goes back in. Returns (entries as
    tuples, {card: label} of the cards outside the stub now, names of cards the log mentions
    while they were in the stub)."""
    from shoe.zones import OP_MOVE, OP_REMOVE, STUB

    labels = {}
    n = 0
    out = []
    hidden = []
    for i in range(0, len(log) - 3, 4):
        op, a, b, c = log[i], log[i + 1], log[i + 2], log[i + 3]
        if op == OP_MOVE:
            if b == STUB:
                n += 1
                labels[a] = "#%d" % n
            elif a not in labels and a < 52:
                hidden.append(a)
            out.append((op, labels.get(a, a), b, c))
            if c & 0x7F == STUB:
                labels.pop(a, None)
        elif op == OP_REMOVE:
            out.append((op, labels.get(a, a), b, c))
        else:
            out.append((op, a, b, c))
    return out, labels, hidden


def relabel_text(text, names):
    """Card names in text replaced by names[name] where given."""
    return _NAME.sub(lambda m: names.get(m.group(1), m.group(1)), text)


def name_map(labels, back=None):
    """{card name: label} for the labelled cards, and for the others {name: name of back[card]}
    (the other device's card this one stands for)."""
    names = _names()
    out = {}
    for code in range(len(names)):
        if code in labels:
            out[names[code]] = labels[code]
        elif back is not None and code in back:
            out[names[code]] = names[back[code]]
    return out


_NAMES = []


def _names():
    if not _NAMES:
        from shoe import cards as C

        _NAMES.extend(C.name(c) for c in range(C.NCODES))
    return _NAMES


def bijection(lab_a, lab_b):
    """A card of device A -> the card of device B it stands for: labelled cards by label, the
    cards inside both stubs as themselves, the rest paired in order."""
    from shoe import cards as C

    by_label = {v: k for k, v in lab_b.items()}
    phi = {}
    for c, n in lab_a.items():
        if n in by_label:
            phi[c] = by_label[n]
    un_a = [c for c in range(C.NCODES) if c not in lab_a]
    un_b = set(c for c in range(C.NCODES) if c not in lab_b)
    rest_a = [c for c in un_a if c not in un_b]
    rest_b = sorted(un_b - set(un_a))
    for c in un_a:
        if c in un_b:
            phi[c] = c
    for x, y in zip(rest_a, rest_b):
        phi[x] = y
    return phi


# --- seed corpora ------------------------------------------------------------------------------
SCENARIOS = os.path.join(ROOT, "tests", "scenarios")


class _Recorder:
    """A stand-in for facedown.client.Client that runs each call on an in-process Device and
    records the command bodies: shoereplay turns a scenario into the commands a host sends."""

    def __init__(self):
        import wire

        self.W = wire
        self.dev = new_device()
        self.bodies = []
        self.on_event = None
        self.on_silence = None
        self.seq = 0

    def call(self, name, *args, seq=None):
        from facedown.client import ShoeError

        W = self.W
        body = W.encode_command(name, list(args))
        self.bodies.append(body)
        self.seq = W.next_seq(self.seq)
        reply = self.dev.run(self.seq, body)
        code, values = W.decode_reply(reply, W.COMMAND_REPLY[W.command_id(name)])
        if code != W.OK:
            raise ShoeError(code, values, name)
        return values

    def sync(self):
        return self.dev.event_next - 1


def scenario_commands(limit=None):
    """[(scenario file name, [CMD bodies])] for the bundled scenarios a shoe can play without a
    power cut (played in-process: a hand's every command, valid and in order)."""
    import glob

    from facedown.shoereplay import Run

    out = []
    files = sorted(glob.glob(os.path.join(SCENARIOS, "*.json")))
    for path in files[:limit]:
        with open(path) as f:
            scn = json.load(f)
        if any(s.get("do") == "fault" and s.get("kind") == "power_cut" or s.get("do") == "cut"
               for s in scn.get("steps", [])):
            continue
        rec = _Recorder()
        try:
            Run(rec, scn).run()
        except Exception:  # a scenario that is meant to be refused: its commands still count
            pass
        out.append((os.path.basename(path), rec.bodies))
    return out


def extra_commands():
    """Commands the scenarios do not send: every command id once with typical arguments."""
    import wire as W

    c = W.encode_command
    return [c("ping", [7]), c("status", [0]), c("status", [160]), c("status", [0xFFFF]),
            c("resume", [1]), c("resume", [0xFFFFFFFF]), c("history", [0, 0]),
            c("history", [1, 0]), c("history", [1, 180]), c("identify", [0]),
            c("recover", [255]), c("recover", [5]), c("sim_fault", ["pending", 0, 0, 0]),
            c("sim_fault", ["power_cut", 3, 0, 0]), c("sim_fault", ["jam", 0, 0, 1]),
            c("sim_fault", ["double_feed", 1, 0, 0]), c("sim_fault", ["foreign", 2, 52, 0]),
            c("sim_deck", [bytes(range(51, -1, -1)), 1, 99]), c("maintenance"),
            c("hand", [3]), c("report", [3, 0, 0]), c("draw", [W.pack_discards([(1, [0, 1])])])]
