# Revision D's loader on the Pico (hal/loader_rp2.py) under the MicroPython unix port, on the
# fakes:
#   micropython -X heapsize=384K tests/mp_loader_test.py   (run by tests/test_rp2.py)
# The fitted shoe of tests/mp_carousel_test.py with the pin map's loader fitted too: the
# PCA9685 (tests/fakes/pca9685.py) on the fake machine.I2C at 0x40 drives the flipper, the two
# escrows' latches, the gate and the carousel driver's enable; LoaderWorld models the Y-chute,
# the escrows and the card's fall into its pocket. Prints "OK" at the end; any failure raises.
import sys

if sys.implementation.name != "micropython" and __name__ == "mp_loader_test" and \
        "pytest" in sys.modules:
    import pytest  # collected by pytest under CPython: not a pytest module, leave sys.path alone

    pytest.skip("a MicroPython script, run by tests/test_rp2.py", allow_module_level=True)

from mp_rp2_world import *  # noqa: E402,F401,F403  (the fakes, the firmware, the card path)
from mp_rp2_world import main  # noqa: E402


class LoaderWorld:
    """The Y-chute and the escrows: a card down the shuffle route goes to the escrow the
    flipper points at (it must have been there latch_ms already), waits on its latch; when the
    latch's new pulse takes effect and the servo has thrown (latch_ms), the card falls: its
    lead at the pocket's mouth lead_us later, in the pocket in_us after the release. The ring
    must not move from the lead's arrival on (`moving_drop` counts it). caught: the next
    released card stays in its escrow (the fault of the escrow's beam)."""

    def __init__(self, cw, d, chip, fast):
        ld = d["loader"]
        ch = ld["channels"]
        self.cw = cw
        self.chip = chip
        self.f = fast
        self.half = cw.n // fast.stations
        self.flip_us = ld["flipper_us"]
        self.release_ns = ld["latch_us"]["release"] * 1000
        self.escrow = [None] * fast.stations
        self.moving_drop = 0
        self.flip_late = 0
        self.double = 0
        self.caught = False
        self.drops = 0
        self.flipper = chip.ch[ch["flipper"]]
        # the gate and the driver's enable: on the chip now, seen where the world looks
        board.pwms[cw.g_gate] = chip.ch[ch["gate"]]
        chip.ch[ch["carousel_en"]].watchers.append(self.enable)
        for j in range(fast.stations):
            chip.ch[ch["latch_%d" % j]].watchers.append(self.latch(j))
        self.deposit_b = cw.deposit
        cw.world.deposit = self.deposit
        self.inside = {}         # pocket -> since when it is over the open gate's opening
        self.short = 0           # a card over the opening for less than its fall
        cw.poll = self.poll      # the gate's opening is 4 pockets wide (revision D)
        cw.gate_open = self.gate_open

    def enable(self, at, ns, level):
        board.outputs[self.cw.g_en] = level

    def station(self):
        h = self.flipper.history
        if not h:
            return None, None
        us = h[-1][1] // 1000
        for j in range(len(self.flip_us)):
            if abs(us - self.flip_us[j]) <= 10:  # (the chip's 4,096 counts a frame)
                return j, h[-1][0]
        return None, h[-1][0]

    def deposit(self, route, card):
        if route != ROUTE_SHUFFLE:
            self.deposit_b(route, card)
            return
        j, since = self.station()
        if j is None or board.now_us() - since < self.f.latch_us:
            self.flip_late += 1
        if j is None or self.escrow[j] is not None:
            self.double += 1
            self.cw.missed.append(card)
            return
        self.escrow[j] = card
        del self.cw.world.requests[:]  # over a whole deck the card path's log would fill the heap
        del self.cw.world.read_at[:]

    def latch(self, j):
        def changed(at, ns, level):
            if abs(ns - self.release_ns) > 10000 or self.escrow[j] is None:
                return
            if self.caught:
                self.caught = False
                return
            card = self.escrow[j]
            board.later(self.f.latch_us + self.f.lead_us, lambda: self.lead(j, card))
        return changed

    def lead(self, j, card):
        cw = self.cw
        k = cw.at()
        mark = cw.motor
        if k is None:
            self.moving_drop += 1

        def fallen():
            if cw.motor != mark:
                self.moving_drop += 1
            pocket = (k + j * self.half) % cw.n if k is not None else None
            self.escrow[j] = None
            if pocket is None or cw.pockets[pocket] is not None:
                cw.missed.append(card)
                return
            cw.pockets[pocket] = card
            cw.deposits += 1
            self.drops += 1
        board.later(self.f.in_us - self.f.lead_us, fallen)

    def gate_open(self):
        """The gate servo's pulse (the chip's, to its 4,096 counts a frame) is the open one
        and has been for the servo's throw."""
        cw = self.cw
        h = board.pwms[cw.g_gate].history
        if not h or abs(h[-1][1] - cw.open_ns) > 10000:
            return False
        return board.now_us() - h[-1][0] >= cw.gate_us

    def poll(self):
        """The gate's opening spans the pocket at the station, the one before and the two
        after it; a card falls through once its pocket has been over the open gate for the
        fall of its own length (card_fall_us, to this poll's 2 ms grain); a pocket that leaves
        the opening sooner carries a card half out (`short`)."""
        cw = self.cw
        sps = cw.sps
        now = board.now_us()
        open_ = cw.gate_open()
        for k in range(cw.n):
            o = (cw.motor - k * sps + cw.rev // 2) % cw.rev - cw.rev // 2
            over = open_ and -2 * sps - sps // 2 <= o < sps + sps // 2
            if cw.pockets[k] is None:
                self.inside.pop(k, None)
            elif not over:
                if k in self.inside:
                    self.short += 1
                    del self.inside[k]
            elif k not in self.inside:
                self.inside[k] = now
            elif now - self.inside[k] >= self.f.card_fall_us - 2000:
                cw.tray.append(cw.pockets[k])
                cw.pockets[k] = None
                del self.inside[k]
        board.later(2000, self.poll)

    def clear(self, j):
        return self.escrow[j] is None


class LoaderBoard:
    """Revision D's parts on the reader board (hal/readerline.py's $PK and $EB, as
    reader/answer.py answers them): $PK,S zeroes the pocket sensor's count and counts from the
    ring's position now; $PK,E gives the cards in the pockets that passed station 0 since (all
    of them after a whole turn); $EB,<j> escrow j's beam (LoaderWorld's escrows). silent: the
    board does not answer these; unknown: it answers $EB with '?' (its expander dead)."""

    def __init__(self, world, cw, lw):
        self.world = world
        self.cw = cw
        self.lw = lw
        self.rx = world.reader_rx
        world.reader_rx = self.reader_rx
        board.uart_peers[world.uart] = self.reader_rx
        self.from_ = None
        self.asked = []
        self.silent = False
        self.unknown = False

    def reader_rx(self, data):
        for line in bytes(data).split(b"\n"):
            if line[:4] not in (b"$PK,", b"$EB,"):
                if line:
                    self.rx(line + b"\n")
                continue
            assert int(line[-4:], 16) == crc_ccitt(line[1:-5]), line
            f = line[1:-5].decode().split(",")
            self.asked.append(",".join(f))
            if self.silent:
                continue
            if f[0] == "PK" and f[1] == "S":
                self.from_ = self.cw.motor
                self.world.answer(1000, "PK,S,0")
            elif f[0] == "PK":
                self.world.answer(1000, "PK,E,%d" % self.passed())
                self.from_ = None
            else:
                j = int(f[1])
                seen = "?" if self.unknown else ("0" if self.lw.escrow[j] is None else "1")
                self.world.answer(1000, "EB,%d,%s" % (j, seen))

    def passed(self):
        cw = self.cw
        if self.from_ is None:
            return 0
        d = cw.motor - self.from_
        if abs(d) >= cw.rev:
            return sum(1 for c in cw.pockets if c is not None)
        lo, hi = min(self.from_, cw.motor), max(self.from_, cw.motor)
        n = 0
        for k in range(cw.n):  # the pockets whose centre crossed station 0
            if lo + (k * cw.sps - lo) % cw.rev <= hi and cw.pockets[k] is not None:
                n += 1
        return n


def revision_d():
    """The fitted shoe with the loader fitted: (world, hal, cw, lw)."""
    from pca9685 import PCA9685
    from hal.fastpath import on

    from carousel_world import carousel_world

    m = carousel_world()
    chips = []
    maps = []

    def tweak(d):
        d["loader"]["fitted"] = True
        maps.append(d)

    def attach():
        chips.append(PCA9685(1, 0x40))

    world, hal, cw = m.fitted(tweak=tweak, attach=attach)
    d = maps[0]
    lw = LoaderWorld(cw, d, chips[0], on(d))
    lw.board = LoaderBoard(world, cw, lw)
    return world, hal, cw, lw


def case_loader_wiring():
    """The loader's parts wired from the pin map: the carousel is the two-station one, the
    servo driver untouched until the first move (a dead one must not stop the boot), then
    started at 50 Hz (PRE_SCALE 121) with auto-increment, the latches closed, the flipper at
    station 0; the driver's enable through the chip, a frame before the first step."""
    from hal.loader_rp2 import StationCarousel

    world, hal, cw, lw = revision_d()
    car = hal.carousel
    assert isinstance(car, StationCarousel)
    assert lw.chip.writes == 0, "the chip is written at the wiring"
    car.ready()
    assert lw.chip.regs[0xFE] == 121 and lw.chip.regs[0] & 0x30 == 0x20, lw.chip.regs[0]
    lt = car.lt
    latch = lw.chip.ch[lt.ch_latch[0]].history
    assert latch and abs(latch[-1][1] - lt.hold_us * 1000) <= 10000 and \
        abs(lw.flipper.history[-1][1] - lt.flipper_us[0] * 1000) <= 10000
    assert car.homed and car.pockets == [None] * 60 and cw.missed == []


def case_loader_reshuffle():
    """A deck through the two escrows as the plan says, with the house's cut: the tray in the
    plan's order, every card into the pocket under its station after the ring stopped, the
    flipper set in time, both stations used; every loading move takes the padded quarter turn
    whatever its length; the unloading is one non-stop turn."""
    from shoe.shuffler import Plan
    from shoe.drbg import HmacDrbg, seeded_entropy

    world, hal, cw, lw = revision_d()
    mech = hal.mech
    car = hal.carousel
    rng = HmacDrbg(seeded_entropy("loader"))
    stub = list(range(52))
    plan = Plan(stub, rng)
    plan.rotate(9)
    world.magazine = [Card(c) for c in stub]
    cw.pockets[44] = Card(C.JOKER)               # a power cut left a card: purged first
    moves = []
    load_to = car.load_to

    def timed(slot, k=1):
        t0 = board.ns
        load_to(slot, k)
        moves.append(board.ns - t0)

    car.load_to = timed
    mech.load(plan.cards, plan)
    e = expect_fault("empty", mech.feed, ROUTE_OUT)
    assert "shuffle tray" in e.message, e.message
    tray = [c.code for c in cw.tray]
    assert tray[0] == C.JOKER and tray[1:] == plan.cards[::-1], tray
    assert cw.missed == [] and lw.moving_drop == 0 and lw.flip_late == 0 and lw.double == 0
    assert lw.drops == 52 and min(car.used) > 10, car.used
    assert max(moves) - min(moves) < 400000, ("a loading move's time depends on the plan",
                                              min(moves), max(moves))
    assert lw.short == 0


def case_card_caught_in_an_escrow():
    """A card that does not fall (caught on its latch): the escrow's beam still sees it when
    the latch closes again; the reshuffle stops with escrow_caught naming the card and the
    escrow; the operator puts it on top of the magazine, the next feed goes on and the tray
    ends in the plan's order."""
    from shoe.shuffler import Plan
    from shoe.drbg import HmacDrbg, seeded_entropy

    world, hal, cw, lw = revision_d()
    mech = hal.mech
    rng = HmacDrbg(seeded_entropy("caught"))
    stub = list(range(20))
    plan = Plan(stub, rng)
    world.magazine = [Card(c) for c in stub]
    car = hal.carousel
    car.ready()
    fill = car.fill
    n = []

    def counting(code, slot):
        n.append(code)
        if len(n) == 7:
            lw.caught = True
        fill(code, slot)

    car.fill = counting
    mech.load(plan.cards, plan)
    e = expect_fault("escrow_caught", mech.feed, ROUTE_OUT)
    assert "escrow" in e.message and C.name(n[-1]) in e.message, e.message
    assert lw.board.asked[-1] == "EB,%d" % car.esc.station, lw.board.asked  # seen by its beam
    j = car.esc.station
    card = lw.escrow[j]
    assert card is not None and card.code == n[-1]
    lw.escrow[j] = None                          # the operator takes it out
    car.pockets[plan.slot_of(card.code)] = None  # (the shoe never saw it in)
    world.magazine.append(card)                  # on top: the next card picked
    e = expect_fault("empty", mech.feed, ROUTE_OUT)
    assert "shuffle tray" in e.message, e.message
    assert [c.code for c in cw.tray] == plan.cards[::-1] and cw.missed == []


def case_servo_driver_dead():
    """The servo driver does not answer (its cable, its supply): the boot goes on; the
    reshuffle's first move stops with servo_driver, saying what to check."""
    world, hal, cw, lw = revision_d()
    lw.chip.dead = True
    e = expect_fault("servo_driver", hal.carousel.ready)
    assert "PCA9685 at 0x40" in e.message and "cable" in e.message, e.message


def gate_opened(cw):
    return any(abs(h[1] - cw.open_ns) <= 10000 for h in board.pwms[cw.g_gate].history)


def case_pockets_empty_after_power_up():
    """After power-up the homing turn runs the pocket sensor past every pocket: the reader
    board counts none ($PK,S before the turn, $PK,E after it), so the pockets are known empty
    and the first reshuffle does not spend the unloading turn on them (the gate never opens)."""
    world, hal, cw, lw = revision_d()
    car = hal.carousel
    car.ready()
    assert lw.board.asked[:2] == ["PK,S", "PK,E"], lw.board.asked
    assert car.pockets == [None] * 60 and not gate_opened(cw)


def case_pockets_seen_or_unknown_after_power_up():
    """The pocket sensor saw a card in the homing turn (a power cut mid-reshuffle): the
    pockets are emptied onto the tray before anything else; a board that does not answer
    $PK leaves the pockets unknown: emptied too."""
    for silent in (False, True):
        world, hal, cw, lw = revision_d()
        car = hal.carousel
        cw.pockets[17] = Card(C.parse("Qs"))
        lw.board.silent = silent
        car.ready()
        assert lw.board.asked[0] == "PK,S", lw.board.asked
        assert gate_opened(cw) and [c.code for c in cw.tray] == [C.parse("Qs")], cw.tray
        assert car.pockets == [None] * 60 and cw.pockets[17] is None


def case_escrow_beam_cannot_tell():
    """The reader board answers '?' for an escrow's beam (its expander dead): the reshuffle
    stops with reader_fault, naming the escrow and what to check, before the next card could
    fall onto a card left unseen."""
    from shoe.shuffler import Plan
    from shoe.drbg import HmacDrbg, seeded_entropy

    world, hal, cw, lw = revision_d()
    mech = hal.mech
    stub = list(range(6))
    plan = Plan(stub, HmacDrbg(seeded_entropy("unknown")))
    world.magazine = [Card(c) for c in stub]
    hal.carousel.ready()
    lw.board.unknown = True
    mech.load(plan.cards, plan)
    e = expect_fault("reader_fault", mech.feed, ROUTE_OUT)
    assert "escrow" in e.message and "expander" in e.message, e.message
    assert any(a.startswith("EB,") for a in lw.board.asked), lw.board.asked


TESTS = [case_loader_wiring, case_loader_reshuffle, case_card_caught_in_an_escrow,
         case_servo_driver_dead, case_pockets_empty_after_power_up,
         case_pockets_seen_or_unknown_after_power_up, case_escrow_beam_cannot_tell]


if __name__ == "__main__":
    # every case imports tests/mp_carousel_test.py's world besides its own: 256 KB is short
    # on this 64-bit port (a MemoryError importing it); the Pico's own heap is
    # benchmarks/memory.py's to measure
    main(TESTS, __file__, dict((t.__name__, "384K") for t in TESTS))
