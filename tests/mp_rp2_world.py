# The world the rp2 HAL's MicroPython tests run in (tests/mp_rp2_test.py, the card path and the
# random source; tests/mp_carousel_test.py, the shuffler): the fakes of `machine` and `rp2`
# (tests/fakes) on the path, the firmware from source or from a built image (--image DIR), and
# a model of the card path (World) that reads the STEP pulses of the fake PIO state machine and
# the DIR/EN pins, moves the cards, and drives the beams, the home flag, the lid, the magazine
# beam and the reader's UART. Each script imports this first, then runs its cases (main()).
import sys

HERE = __file__.rsplit("/", 1)[0] if "/" in __file__ else "."
ROOT = HERE + "/.."
# --image DIR: import the firmware from a built image (host/facedown/build.py: .mpy bytecode,
# as a deployed Pico runs it) instead of compiling firmware/*.py at import
IMAGE = None
if len(sys.argv) > 2 and sys.argv[1] == "--image":
    IMAGE = sys.argv[2]
    del sys.argv[1:3]
sys.path[:0] = [HERE + "/fakes", IMAGE or ROOT + "/firmware"]
# crc.py, wire.py: at the image's root on a shoe (an image's come first); wirehost.py, the
# host's half of the codec, which a case's host end uses and no image carries
sys.path.append(ROOT + "/protocol")

from hal import pins as _pins  # noqa: E402  (first: compiling it is the heap's peak)
import machine  # noqa: E402  (the fake)
import rp2  # noqa: E402
from hal.rp2 import Rp2Hal  # noqa: E402
from hal.rp2mech import (MechanismFault, UsbPort, ROSC_RANDOMBIT, frame,  # noqa: E402
                         parse_frame)
from shoe.faults import ROUTE_OUT, ROUTE_BURN, ROUTE_REJECT  # noqa: E402
from hal import stepper_pio as SP  # noqa: E402
from shoe import cards as C  # noqa: E402
from shoe.compat import release  # noqa: E402
from hal.pinview import PinMap  # noqa: E402

PINMAP = ROOT + "/hardware/pinmap.json"

ROUTES = ("output", "burn", "reject", "shuffle")  # the diverter's positions, route numbers
ROUTE_SHUFFLE = 3
board = machine.board
UP = C.UP


def crc_ccitt(data):
    """CRC-16/CCITT-FALSE, bit by bit (independent of the firmware's table)."""
    c = 0xFFFF
    for b in data:
        c ^= b << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else c << 1
            c &= 0xFFFF
    return c


class Card:
    def __init__(self, code, up=False, unreadable=False, conf=97):
        self.code = code
        self.up = up
        self.unreadable = unreadable
        self.conf = conf

    def __repr__(self):
        return C.name(self.code) + ("^" if self.up else "")


def signal_maps(d):
    """{signal: GPIO} and {signal: the level at which it is asserted} of a pin map's JSON."""
    gpio = {}
    level = {}
    for sig in d["signals"]:
        gpio[sig["name"]] = sig["gpio"]
        level[sig["name"]] = 1 if sig["active"] == "high" else 0
    return gpio, level


class World:
    """The physical shoe: the card path of hardware/MECHANISM.md in mm from the gate."""

    ARC_START = 60   # steps into a turn where the pick arc meets the bottom card
    FLAG = 40        # the home flag is in its slot within this many steps of a turn's start

    def __init__(self, t):
        import json

        with open(PINMAP) as f:
            d = json.load(f)
        gpio, level = signal_maps(d)
        fs = d["feed_stepper"]
        path = d["path"]
        self.spm = t.spm
        self.ratio = fs["pick_roller_diameter_mm"] / (
            fs["pick_reduction"] * fs["roller_diameter_mm"])
        self.spc = t.spc
        self.take = path["takeaway_nip_mm"]
        self.L = path["card_length_mm"]
        self.D = path["double_beam_mm"]
        self.T = path["throat_beam_mm"]
        self.EX = path["exit_nip_mm"]
        self.H = path["hold_mm"]
        self.arc_end = self.ARC_START + int(self.take / self.ratio * self.spm) + 150
        self.read_ms = d["reader"]["read_ms"]
        self.uart = d["reader"]["uart"]
        self.pulses = [d["diverter"]["pulse_us"][n] for n in ROUTES]
        del d
        self.g_step = gpio["feed_step"]
        self.g_dir = gpio["feed_dir"]
        self.g_en = gpio["feed_en"]
        self.g_div = gpio["diverter_pwm"]
        self.fwd = level["feed_dir"]
        self.en_level = level["feed_en"]
        self.magazine = []     # next card to feed at the end
        self.flight = []       # [card, lead mm, dragged by (index) or None, stuck]
        self.motor = 0
        self.lid = False
        self.volts = 24.0
        self.out = [[], [], [], []]
        self.jam_at = None     # a card sticks when its lead reaches this (mm) ...
        self.jam_times = 0     # ... this many times (a reverse frees it once)
        self.misfeeds = 0      # the next picks slip
        self.double = None     # the next pick drags the card above along, this far behind (mm)
        self.reader_on = True
        self.garble = 0        # the next reports have a bad CRC
        self.requests = []
        self.read_at = []      # where the cards' leads were at each read request
        board.inputs[gpio["double_beam"]] = lambda: self.blocked(self.D)
        board.inputs[gpio["throat_beam"]] = lambda: self.blocked(self.T)
        board.inputs[gpio["magazine_beam"]] = lambda: 0 if len(self.magazine) >= 4 else 1
        board.inputs[gpio["pick_home"]] = self.home
        board.inputs[gpio["lid_open"]] = lambda: 1 if self.lid else 0
        board.adc[gpio["vmotor_sense"]] = lambda: int(self.volts / 11 / 3.3 * 65535)
        board.step_listeners.append(self.on_step)
        board.uart_peers[self.uart] = self.reader_rx

    # ---------------------------------------------------------------- sensors
    def blocked(self, at):
        for f in self.flight:
            if f[1] >= at and f[1] - self.L < at:
                return 1
        return 0

    def home(self):
        t = self.motor % self.spc
        return 1 if t <= self.FLAG or t >= self.spc - self.FLAG else 0

    def route(self):
        pwm = board.pwms.get(self.g_div)
        ns = pwm.duty_ns() if pwm is not None else 0
        best = 0
        for r in range(len(ROUTES)):
            if abs(self.pulses[r] * 1000 - ns) < abs(self.pulses[best] * 1000 - ns):
                best = r
        return best

    # ---------------------------------------------------------------- motion
    def on_step(self, sm, gpio):
        if gpio != self.g_step:
            return
        if board.outputs.get(self.g_en) != self.en_level or self.lid:
            return  # the driver is off (EN, or the lid through U4)
        d = 1 if board.outputs.get(self.g_dir) == self.fwd else -1
        self.motor += d
        turn = self.motor % self.spc
        if d > 0 and turn == self.ARC_START and self.magazine:
            if self.misfeeds:
                self.misfeeds -= 1
            else:
                card = self.magazine.pop()
                self.flight.append([card, 0.0, None, False])
                if self.double is not None and self.magazine:
                    self.flight.append([self.magazine.pop(), -self.double, card, False])
                    self.double = None
        mm = 1 / self.spm
        moved = {}
        for f in list(self.flight):
            card, lead, drag, stuck = f
            if drag is not None and drag in moved:
                delta = moved[drag]
            elif lead >= self.take or lead - self.L >= self.take:  # a nip holds it
                delta = d * mm
            elif self.ARC_START <= turn <= self.arc_end:  # the pick arc pushes it
                delta = d * mm * self.ratio
            elif d < 0 and lead < 2 and drag is None:  # the arc, going back, took it home
                delta = -lead - 1
            else:
                delta = 0
            if stuck:
                if d < 0:
                    f[3] = False  # backing off frees it
                    self.jam_times -= 1
                else:
                    delta = 0
            elif d > 0 and self.jam_at is not None and self.jam_times > 0 and \
                    lead < self.jam_at <= lead + delta:
                f[3] = True
                delta = self.jam_at - lead
            f[1] = lead + delta
            moved[card] = delta
            if f[1] - self.L > self.EX:  # the tail left the exit nip: out to the vane
                self.flight.remove(f)
                self.deposit(self.route(), card)
                for g in self.flight:
                    if g[2] is card:
                        g[2] = None
            elif f[1] < 0 and f[2] is None and d < 0:  # backed into the magazine again
                self.flight.remove(f)
                self.magazine.append(card)

    def deposit(self, route, card):
        """A card leaves the exit nip along the diverter's route (the carousel's model takes
        the shuffle route's cards)."""
        self.out[route].append(card)

    # ---------------------------------------------------------------- the reader
    def reader_rx(self, data):
        for line in bytes(data).split(b"\n"):
            if not line:
                continue
            self.requests.append(line)
            assert line[:1] == b"$" and line[-5:-4] == b"*", line
            body = line[1:-5]
            assert int(line[-4:], 16) == crc_ccitt(body), "bad CRC from the shoe: %r" % line
            if not self.reader_on:
                continue
            f = body.decode().split(",")
            if f[0] == "RD":
                self.read_at.append([g[1] for g in self.flight])
                self.answer(self.read_ms * 1000, "CD,%s,%s" % (f[1], self.look()))
            elif f[0] == "ST":
                self.answer(2000, "ST,READY")

    def look(self):
        best = None
        for f in self.flight:
            d = abs(f[1] - self.H)
            if d <= 5 and (best is None or d < abs(best[1] - self.H)):
                best = f
        if best is None:
            return "??,0,0"
        c = best[0]
        if c.unreadable:
            return "??,0,0"
        return "%s,%d,%d" % (C.name(c.code), 1 if c.up else 0, c.conf)

    def answer(self, delay_us, body):
        b = body.encode()
        crc = crc_ccitt(b)
        if self.garble:
            self.garble -= 1
            crc ^= 0x0101
        msg = b"$" + b + b"*" + (b"%04X" % crc) + b"\n"
        uart = board.uarts[self.uart]
        board.later(delay_us + len(msg) * 87, lambda: uart.receive(msg))


# -------------------------------------------------------------------- set-up

def cards(*names):
    return [Card(C.parse(n)) for n in names]


PINS = [_pins]  # hal.pins, compiled once and lent to every Rp2Hal of this run (a 256 KB heap)
del _pins


MOUNT = "/flash"  # where the cases mount the Pico's littlefs (the Pico mounts it at /;
#                   tests/mp_pico_port_test.py boots it there)
STAND_IN = 64     # blocks: the journal's flash when a case is not about where it lives


def journal_stand_in():
    """The last STAND_IN blocks of the storage region as raw flash (the fake chip is sparse:
    no RAM until written), for the cases that do not boot littlefs."""
    return rp2.Flash(start=rp2.STORAGE_BYTES - STAND_IN * 4096)


def pin_map(path=PINMAP, drop_checker=False):
    """The pin map as the wiring reads it (hal.pins.load, descriptions dropped; the checks are
    the host's: tests/test_hardware.py, facedown.build), its loader let go again: a Pico's image carries the board module facedown.build makes from the map instead
    (board.py), and Rp2Hal() reads that."""
    if PINS:
        sys.modules["hal.pins"] = PINS[0]
    from hal import pins

    pm = pins.load(path, check=False, text=False)  # (checked on the host, as board.py is)
    # hal.pinview's PinMap with the budget worked out, as board.py gives it: nothing of the
    # checker stays referenced by it, and with drop_checker the checker leaves the heap before
    # the wiring (as a Pico never holds it: the carousel's cases need the room)
    view = PinMap(pm.data, pm.budget())
    pm = pins = None
    if drop_checker:
        del PINS[:]
    release("hal.pins")
    return view


def fresh(pinmap=PINMAP, root="", journal=None, stock=False, drop_checker=False, attach=None):
    """A Pico's HAL. stock: on the littlefs of the storage region (boot_storage() first), the
    journal in the blocks it reserves there, as on a shoe; otherwise on journal (default: the
    stand-in), the store in root. attach(): puts the board's other devices on it (an I2C
    chip) before the HAL is wired."""
    board.reset()
    if attach is not None:
        attach()
    board.ns = ((1 << 30) - 1500000) * 1000  # ticks_us wraps 1.5 s into the run
    if stock:
        root, journal = MOUNT, None
    elif journal is None:
        journal = journal_stand_in()
    hal = Rp2Hal(lambda: pin_map(pinmap, drop_checker), clock=machine.Clock(), root=root,
                 journal=journal)
    assert "hal.pins" not in sys.modules, "the HAL keeps the pin map's loader"
    world = World(hal.timing)
    return world, hal


def expect_fault(kind, fn, *args):
    try:
        fn(*args)
    except MechanismFault as e:
        assert e.kind == kind, "expected %s, got %s" % (kind, e)
        return e
    raise AssertionError("no %s fault" % kind)


def load(world, hal, names, stub=True):
    world.magazine = cards(*names)
    if stub:
        hal.mech.load([c.code for c in world.magazine])


def check_idle_state(world, hal):
    """After a feed: pick roller home, the driver off, the step program idle."""
    assert world.home(), "the pick roller is not home (motor %d)" % world.motor
    assert board.outputs[world.g_en] != world.en_level, "the driver is still enabled"
    assert not hal.mech.st.moving()



HEAP = "256K"



def main(tests, script, heaps=None):
    """With test names: run those here. Without: each test in its own interpreter with a
    256 KB heap (the firmware, the fakes and the engine do not fit one 64-bit heap together,
    and MicroPython never gives interned strings back), or the heap `heaps` gives it.
    --heaps: print each test's heap, in KB, one per line (benchmarks/rp2_heap.py's margins)."""
    import gc
    import os

    names = sys.argv[1:]
    if names == ["--heaps"]:
        for t in tests:
            print(t.__name__, int((heaps or {}).get(t.__name__, HEAP)[:-1]))
        return
    if not names:
        failed = []
        for t in tests:
            image = ('--image "%s" ' % IMAGE) if IMAGE else ""
            heap = (heaps or {}).get(t.__name__, HEAP)
            rc = os.system('"%s" -X heapsize=%s "%s" %s%s' % (sys.executable, heap, script,
                                                             image, t.__name__))
            if rc != 0:
                failed.append(t.__name__)
        if failed:
            raise SystemExit("FAILED: " + " ".join(failed))
        print("OK")
        return
    for t in tests:
        if t.__name__ in names:
            gc.collect()
            t()
            print("passed", t.__name__)
    print("OK")
