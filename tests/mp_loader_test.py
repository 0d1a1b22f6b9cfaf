# Revision D's loader on the Pico (hal/loader_rp2.py) under the MicroPython unix port, on the
# fakes:
#   micropython -X heapsize=384K tests/mp_loader_test.py   (run by tests/test_rp2.py)
# The fitted shoe of tests/mp_carousel_test.py with the pin map's loader fitted too: the
# PCA9685 (tests/fakes/pca9685.py) on the fake machine.I2C at 0x40 drives the flipper, the two
# escrows' latches, the gate and the carousel driver's enable; LoaderWorld models the Y-chute,
# the escrows and the card's fall into its pocket. Prints "OK" at the end; any failure raises.

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
        self.catch_after = None  # the card after this many falls in is caught
        self.drops = 0
        self.flipper = chip.ch[ch["flipper"]]
        # the gate and the driver's enable: on the chip now, seen where the world looks
        board.pwms[cw.g_gate] = chip.ch[ch["gate"]]
        chip.ch[ch["carousel_en"]].watchers.append(self.enable)
        for j in range(fast.stations):
            chip.ch[ch["latch_%d" % j]].watchers.append(self.latch(j))
        self.deposit_b = cw.deposit
        cw.world.deposit = self.deposit
        self.flip_mm = fast_mm(d, "flipper_mm")
        self.escrow_mm = fast_mm(d, "escrow_mm")
        self.chute = []          # cards sliding from the exit nip to their escrow
        self.route_of = {}
        self.open_at = [None] * fast.stations  # when each latch opened (None: closed)
        self.through = 0         # cards that reached a latch already open
        self.landed = 0
        self.land_at = []
        self.step_ns = 10 ** 9
        self.last_step = 0
        self.mark = 0
        self.steps = 0
        board.step_listeners.append(self.feed_step)
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

    def feed_step(self, sm, gpio):
        """The feed's steps: the card path's speed as a card leaves the exit nip."""
        if gpio == self.cw.world.g_step:  # (over 32 steps: two PIO segments and their gaps)
            now = board.ns
            self.steps += 1
            if now - self.last_step > 2000000:
                self.mark = now
                self.steps = 0
            elif self.steps == 32:
                self.step_ns = (now - self.mark) // 32
                self.mark = now
                self.steps = 0
            self.last_step = now

    def deposit(self, route, card):
        """A card's tail leaves the exit nip along the shuffle route: it slides down the chute
        at the speed it left with (0.5 m/s at least: the chute's slope), past the flipper (the
        chute it takes is the one the flipper points at as its lead gets there: it must have
        been there latch_ms already) onto the escrow's latch (hardware/fastpath.json's
        flipper_mm and escrow_mm)."""
        if route != ROUTE_SHUFFLE:
            self.deposit_b(route, card)
            return
        w = self.cw.world
        out = w.EX + w.L
        gap = self.step_ns if board.ns - self.last_step < 2000000 else 10 ** 9
        mm_us = max(1000.0 / (w.spm * max(gap, 1)), 0.5e-3)  # mm a us
        self.chute.append(card)
        board.later((self.flip_mm - out) / mm_us, lambda: self.flip(card))
        board.later((self.escrow_mm - out) / mm_us, lambda: self.land(card))
        del self.cw.world.requests[:]  # over a whole deck the card path's log would fill the heap
        del self.cw.world.read_at[:]

    def flip(self, card):
        j, since = self.station()
        if j is None or board.now_us() - since < self.f.latch_us:
            self.flip_late += 1
        self.route_of[id(card)] = j

    def land(self, card):
        j = self.route_of.pop(id(card), None)
        if card not in self.chute:  # the operator took it out
            return
        self.chute.remove(card)
        if j is None or self.escrow[j] is not None:
            self.double += 1
            self.cw.missed.append(card)
            return
        self.escrow[j] = card
        self.landed += 1
        if self.open_at[j] is not None:  # the latch let go already: it falls on, from its
            self.through += 1            # latch's height (hal/fastpath.py's schedule)
            self.fall(j)
        self.land_at.append(board.now_us())
        if len(self.land_at) > 4:
            self.land_at.pop(0)

    def latch(self, j):
        def changed(at, ns, level):
            if abs(ns - self.release_ns) > 10000:
                self.open_at[j] = None   # closing: a card that comes now stays on it
                return
            self.open_at[j] = at + self.f.latch_us
            if self.escrow[j] is not None:
                self.fall(j)
        return changed

    def fall(self, j):
        """The card on latch j falls once the latch is open (caught: it stays)."""
        if self.caught:
            self.caught = False
            return
        card = self.escrow[j]
        wait = max(0, self.open_at[j] - board.now_us())
        board.later(wait + self.f.lead_us, lambda: self.lead(j, card))

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
            if self.drops == self.catch_after:
                self.caught = True
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
        self.eb_us = 1000   # when $EB is answered (a board in a 60 ms read answers after it)

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
                self.world.answer(self.eb_us, "EB,%d,%s" % (j, seen))

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


def fast_mm(d, key):
    """A length of hardware/fastpath.json (beside the pin map)."""
    import json

    with open(ROOT + "/hardware/fastpath.json") as f:
        return json.load(f)[key]["value"]


def revision_d(two_decks=False):
    """The fitted shoe with the loader fitted (two_decks: the gather tray too): (world, hal,
    cw, lw)."""
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

    world, hal, cw = m.fitted(two_decks, tweak=tweak, attach=attach)
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
    """A deck through the pipeline and the two escrows as the plan says, with the house's cut:
    the tray in the plan's order, every card into the pocket under its station after the ring
    stopped, the flipper set before each card reached it, no card landing on a latch that still
    held one, both stations used; the feed never stops (one move for the deck); the unloading
    is one non-stop turn."""
    from shoe.shuffler import Plan
    from shoe.drbg import HmacDrbg, seeded_entropy

    world, hal, cw, lw = revision_d()
    mech = hal.mech
    car = hal.carousel
    rng = HmacDrbg(seeded_entropy("loader"))
    stub = list(range(52))
    plan = Plan(stub, rng)
    plan.rotate(9)
    order = Plan(stub, rng).cards                # what the magazine really holds (any order)
    world.magazine = [Card(c) for c in order]
    cw.pockets[44] = Card(C.JOKER)               # a power cut left a card: purged first
    starts = []
    start = mech.st.start

    def counted(*a):
        starts.append(a[0])
        start(*a)

    mech.st.start = counted
    mech.load(plan.cards, plan)
    e = expect_fault("empty", mech.feed, ROUTE_OUT)
    assert "shuffle tray" in e.message, e.message
    tray = [c.code for c in cw.tray]
    assert tray[0] == C.JOKER and tray[1:] == plan.cards[::-1], tray
    assert cw.missed == [] and lw.moving_drop == 0 and lw.flip_late == 0 and lw.double == 0
    assert lw.drops == 52 and min(car.used) > 10, car.used
    assert lw.short == 0 and mech.pipe.cards == 52
    assert starts[-1] == 53 * mech.t.spc, starts  # the deck in one move of the feed (and a turn)
    assert world.home() and board.outputs[world.g_en] != world.en_level


def reshuffle_figures(n=52, seed="figures", plans=2, eb_us=1000):
    """Reshuffles of n cards after power-up in the fake world (the first homes the carousel, the
    pocket sensor counting none: no purge), nothing going wrong: seconds for each
    from the feed that starts it to the stack on the tray, the pipeline's part (the first
    card's pick to the last card in), and the instants the latches closed on each card in
    (us from the start: the schedule). For benchmarks and the constant-time check. eb_us:
    when the reader board answers each escrow's beam ($EB)."""
    from shoe.shuffler import Plan
    from shoe.drbg import HmacDrbg, seeded_entropy

    world, hal, cw, lw = revision_d()
    lw.board.eb_us = eb_us
    mech = hal.mech
    car = hal.carousel
    rng = HmacDrbg(seeded_entropy(seed))
    drv = car.esc.drv
    pulse = drv.pulse
    closes = []
    hold = car.lt.hold_us

    def watched(ch, us):
        if us == hold:
            closes.append(board.ns)
        pulse(ch, us)

    drv.pulse = watched
    out = []
    stub = list(range(n))
    world.magazine = [Card(c) for c in stub]
    for _ in range(plans):
        plan = Plan(stub, rng)
        mech.load(plan.cards, plan)
        del closes[:]
        t0 = board.ns
        e = expect_fault("empty", mech.feed, ROUTE_OUT)
        assert "shuffle tray" in e.message, e.message
        t1 = board.ns
        assert [c.code for c in cw.tray] == plan.cards[::-1] and not cw.missed
        assert lw.moving_drop == 0 and lw.flip_late == 0 and lw.double == 0
        out.append({"total_s": (t1 - t0) / 1e9, "pipeline_s": mech.pipe.last_us / 1e6,
                    "in_us": [(c - closes[0]) // 1000 for c in closes[-n:]],
                    "travel": car.travel})
        world.magazine = list(reversed(cw.tray))
        del cw.tray[:]
        stub = plan.cards
    return out


def case_pipeline_time_tells_nothing_of_the_plan():
    """Two reshuffles of the same 20 cards by different plans (the ring travelling
    differently): each card is in on the same schedule, to the loop's grain (the fake clock
    moves 50 us a call), and the whole reshuffle takes the same time to the millisecond timer's
    tick the padded waits end on; a listener on the link learns nothing of the plan."""
    first, a, b = reshuffle_figures(20, "two plans", 3)
    assert a["travel"] - first["travel"] != b["travel"] - a["travel"], "the plans travel alike"
    assert len(a["in_us"]) == len(b["in_us"]) == 20
    worst = max(abs(x - y) for x, y in zip(a["in_us"], b["in_us"]))
    assert worst < 500, (a["in_us"], b["in_us"])
    assert abs(a["total_s"] - b["total_s"]) < 0.0011, (a["total_s"], b["total_s"])
    print("figure pipeline of 20: %.4f s and %.4f s, per card within %d us" % (
        a["total_s"], b["total_s"], worst))


def six_cards(seed):
    """Revision D homed, six cards in the magazine and their plan: (lw, mech, plan)."""
    from shoe.shuffler import Plan
    from shoe.drbg import HmacDrbg, seeded_entropy

    world, hal, cw, lw = revision_d()
    stub = list(range(6))
    plan = Plan(stub, HmacDrbg(seeded_entropy(seed)))
    world.magazine = [Card(c) for c in stub]
    hal.carousel.ready()
    return lw, hal.mech, plan


def case_escrow_beams_do_not_hold_the_pipeline():
    """The escrows' beams are asked as each latch closes again ($EB, one a card) and their
    answers gathered inside the pipeline's loop: a board that answers 60 ms late (in a read)
    leaves every card's instant in its pocket and the reshuffle's time as they are with answers
    1 ms late (a blocking ask would add its wait to every card); an answer later than the next
    latch's release stops the loading with reader_silent naming the escrow."""
    quick = reshuffle_figures(12, "beams", 2)[1]
    slow = reshuffle_figures(12, "beams", 2, 60000)[1]
    worst = max(abs(x - y) for x, y in zip(quick["in_us"], slow["in_us"]))
    assert len(quick["in_us"]) == 12 and worst < 500, (quick["in_us"], slow["in_us"])
    assert abs(quick["total_s"] - slow["total_s"]) < 0.0011, (quick["total_s"], slow["total_s"])
    lw, mech, plan = six_cards("late")
    lw.board.eb_us = 120000
    mech.load(plan.cards, plan)
    e = expect_fault("reader_silent", mech.feed, ROUTE_OUT)
    assert "escrow" in e.message and "beam" in e.message, e.message
    assert lw.board.asked.count("EB,0") + lw.board.asked.count("EB,1") == 1, lw.board.asked


def figures(n):
    """The pipelined reshuffle's time in the fake world against hal/fastpath.py's model (its
    'next reshuffle': 18.2 s for 52 cards, 14.8 s for 40, hardware/SHUFFLER.md): within 5 %
    (the feed's pace leaves the flipper room for the reader's UART, which the model leaves
    out)."""
    from hal.fastpath import on
    import json

    with open(PINMAP) as f:
        model = on(json.load(f))
    first, second = reshuffle_figures(n, "figures %d" % n)
    r = model.reshuffle(list(range(n)))
    print("figure reshuffle_%d_s %.2f (first after power-up, its homing turn: %.2f; the model: "
          "%.2f), pipeline %.2f s" % (n, second["total_s"], first["total_s"],
                                      r["total_us"] / 1e6, second["pipeline_s"]))
    assert abs(second["total_s"] - r["total_us"] / 1e6) < 0.05 * r["total_us"] / 1e6, \
        (second, r["total_us"])


def case_reshuffle_figures_52():
    figures(52)


def case_reshuffle_figures_40():
    figures(40)


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
    lw.catch_after = 6
    mech.load(plan.cards, plan)
    e = expect_fault("escrow_caught", mech.feed, ROUTE_OUT)
    j = 0 if lw.escrow[0] is not None else 1
    assert lw.board.asked[-1] == "EB,%d" % j, lw.board.asked  # seen by its beam
    card = lw.escrow[j]
    assert card is not None and "escrow %d" % j in e.message and C.name(card.code) in e.message, \
        e.message
    assert car.pockets[plan.slot_of(card.code)] is None, "the shoe counts it in"
    # the operator takes it out, and any card the stop left in the path or the chute, and puts
    # them on top of the magazine (the next cards picked)
    back = [card] + [f[0] for f in world.flight] + lw.chute
    lw.escrow[j] = None
    del world.flight[:]
    del lw.chute[:]
    world.magazine += back
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
    lw, mech, plan = six_cards("unknown")
    lw.board.unknown = True
    mech.load(plan.cards, plan)
    e = expect_fault("reader_fault", mech.feed, ROUTE_OUT)
    assert "escrow" in e.message and "expander" in e.message, e.message
    assert any(a.startswith("EB,") for a in lw.board.asked), lw.board.asked


def two_decks_d(seed):
    """Revision D with the gather tray (hal/decks_d_rp2.py): the carousel homed and emptied,
    a red deck in the dealing magazine, the reader board's side of the gather tray
    (tests/mp_decks_test.py's GatherWorld)."""
    from shoe.drbg import HmacDrbg, seeded_entropy
    from carousel_world import decks_world

    dm = decks_world()
    world, hal, cw, lw = revision_d(True)
    gw = dm.GatherWorld(world)
    mech = hal.mech
    assert type(mech).__name__ == "LoaderTwoDecks"
    hal.carousel.ready()
    hal.carousel.rest()
    world.magazine = [Card(c) for c in range(52)]
    mech.load(list(range(52)))
    return dm, world, hal, cw, lw, gw, HmacDrbg(seeded_entropy(seed))


def case_two_decks_on_revision_d():
    """The next deck between the hand's steps on revision D: each card of the gather tray read
    at the hold (face and back), a card of the deck in play among them to the reject bin,
    named; the others down the Y-chute onto the latch of the station nearer their pocket; the
    deck complete, the non-stop turn lays it on the shuffle tray in its plan's order, and the
    next hand deals it. The dealing magazine never moves meanwhile."""
    from shoe.batch import READY

    dm, world, hal, cw, lw, gw, rng = two_decks_d("decks d")
    mech = hal.mech
    deck = list(range(52))
    gw.gather = dm.blue(deck[1::2] + deck[::2])
    stray = Card(C.parse("9s"))                  # red: caught between the decks
    gw.gather.insert(30, stray)
    dealing = list(world.magazine)
    mech.gather(list(range(52)), rng)
    dm.idle(mech)
    nd = mech.nd
    assert nd.state == READY and [r[0] for r in nd.rejected] == [stray.code], (nd.state,
                                                                          mech.problem)
    assert world.out[ROUTE_REJECT] == [stray] and world.magazine == dealing
    assert not cw.missed and lw.moving_drop == 0 and lw.double == 0 and lw.drops == 52
    assert min(hal.carousel.used) > 10, hal.carousel.used
    order = mech.next_deck()
    assert [c.code for c in cw.tray] == order and len(order) == 52
    mech.load(order)
    world.magazine = list(reversed(cw.tray))
    assert [mech.feed(ROUTE_OUT) for _ in range(2)] == [[order[0]], [order[1]]]


def case_two_decks_on_revision_d_in_hand_reshuffle():
    """An in-hand reshuffle with the next deck 15 cards in, on revision D: its cards are
    emptied onto the shuffle tray and asked for in the gather tray; the stub goes through the
    pipeline in its plan's order; the next deck starts again with a new plan and completes."""
    from shoe.shuffler import Plan
    from shoe.batch import LOADING, READY

    dm, world, hal, cw, lw, gw, rng = two_decks_d("in hand d")
    mech = hal.mech
    gw.gather = dm.blue(range(52))
    mech.gather(list(range(52)), rng)
    for _ in range(15):
        mech.between()
    nd = mech.nd
    assert nd.count == 15
    stub = list(range(30))
    world.magazine = [Card(c) for c in stub]
    plan = Plan(stub, rng)
    mech.load(plan.cards, plan)
    e = expect_fault("empty", mech.feed, ROUTE_OUT)
    assert "next deck's 15 card(s)" in e.message, e.message
    assert len(cw.tray) == 15 and all(c.back == 1 for c in cw.tray)
    gw.gather += cw.tray
    del cw.tray[:]
    e = expect_fault("empty", mech.feed, ROUTE_OUT)
    assert "shuffle tray" in e.message, e.message
    assert [c.code for c in cw.tray] == plan.cards[::-1] and mech.pipe.cards == 30
    assert nd.state == LOADING and nd.count == 0 and nd.starts == 2
    world.magazine = list(reversed(cw.tray))
    del cw.tray[:]
    assert mech.feed(ROUTE_OUT) == [plan.cards[-1]]
    dm.idle(mech)
    assert nd.state == READY and len(cw.tray) == 52 and not cw.missed
    assert lw.moving_drop == 0 and lw.double == 0 and lw.flip_late == 0


def put_back(world, lw):
    """The operator after a stop: the cards in the escrows, the path and the chute, face down
    on top of the magazine (the next cards picked)."""
    back = [c for c in lw.escrow if c is not None] + [f[0] for f in world.flight] + lw.chute
    lw.escrow = [None] * len(lw.escrow)
    del world.flight[:]
    del lw.chute[:]
    world.magazine += back


def case_pipeline_stops_on_a_card_it_cannot_take():
    """A card read face up stops the pipeline (its read ends after it passed the diverter):
    it lies on its escrow's closed latch, the cards before it are in their pockets, the fault
    names it; the operator turns it and puts it and what the stop left in the path on the
    magazine. Then the magazine runs out two cards short: `empty` with the count; the two put
    in, the loading ends and the tray holds the plan's order."""
    from shoe.shuffler import Plan
    from shoe.drbg import HmacDrbg, seeded_entropy

    world, hal, cw, lw = revision_d()
    mech = hal.mech
    car = hal.carousel
    stub = list(range(16))
    plan = Plan(stub, HmacDrbg(seeded_entropy("stops")))
    world.magazine = [Card(c) for c in stub]
    boxed = world.magazine[-6]                   # the 6th card out
    boxed.up = True
    late = world.magazine[:2]                    # the last two: not there yet
    del world.magazine[:2]
    car.ready()
    mech.load(plan.cards, plan)
    e = expect_fault("jam", mech.feed, ROUTE_OUT)
    assert "face up (%s)" % C.name(boxed.code) in e.message and "face down" in e.message, \
        e.message
    assert boxed in lw.escrow or boxed in lw.chute, (lw.escrow, lw.chute)  # (on its way down)
    assert lw.drops == 5 and mech.pipe.cards == 5, (lw.drops, mech.pipe.cards)
    boxed.up = False
    put_back(world, lw)
    e = expect_fault("empty", mech.feed, ROUTE_OUT)
    assert "still needs 2 card(s)" in e.message, e.message
    world.magazine[:0] = late
    put_back(world, lw)
    e = expect_fault("empty", mech.feed, ROUTE_OUT)
    assert "shuffle tray" in e.message, e.message
    assert [c.code for c in cw.tray] == plan.cards[::-1], "the tray is not the plan's order"
    assert not cw.missed and lw.moving_drop == 0 and lw.double == 0


class QuietSM:
    """A state machine that allocates nothing: its FIFOs as counts."""

    def __init__(self):
        self.tx = 0
        self.rx = 0

    def put(self, word):
        self.tx += 1

    def tx_fifo(self):
        return self.tx

    def rx_fifo(self):
        return self.rx

    def get(self):
        self.rx -= 1
        self.tx -= 1
        return 0

    def active(self, on=None):
        return None


class QuietClock:
    def __init__(self):
        self.t = 0

    def ticks_us(self):
        self.t += 50
        return self.t

    def ticks_diff(self, a, b):
        return a - b

    def ticks_add(self, a, b):
        return a + b


class QuietPin:
    def value(self, v=None):
        return 0


class QuietUart:
    """The reader's UART: what it answers is in `data`, given back byte by byte after a
    write."""

    def __init__(self, data):
        self.data = data
        self.i = len(data)

    def any(self):
        return len(self.data) - self.i

    def readinto(self, buf, n=None):
        buf[0] = self.data[self.i]
        self.i += 1
        return 1

    def write(self, b):
        self.i = 0
        return len(b)


def case_pipeline_allocates_nothing():
    """What the pipeline's per-card loop runs allocates nothing (MicroPython, the heap locked:
    any allocation raises MemoryError): the stepper's planner and queue deep into the loading's
    long move and near its end (its squares stay small ints), the read's request written in
    place and its answer gathered and parsed in place, the card judged, an escrow's beam's answer
    after it gathered and judged the same way. Under CPython the
    same calls run and the answer's fields are checked."""
    from crc import crc16
    from hal.stepper_pio import Stepper

    try:
        import micropython
        lock = micropython.heap_lock
        unlock = micropython.heap_unlock
    except (ImportError, AttributeError):  # CPython
        lock = unlock = lambda: None        # noqa: E731
    world, hal, cw, lw = revision_d()
    mech = hal.mech
    from hal.pipeline_rp2 import Pipeline

    pipe = Pipeline(mech, hal.carousel)
    sm = QuietSM()
    st = Stepper(sm, QuietPin(), QuietPin(), QuietClock(), 12500, 160000, 24000, lambda: None)
    total = 53 * mech.t.spc
    st.start(total, True, pipe.rate, pipe.accel)
    while st.pushed < 100000:    # into the cruise (unlocked: the first segments)
        sm.rx = sm.tx
        st.pump()
    expect = list(range(52))
    seq = (mech.reader.seq + 1) & 0xFF
    body = b"CD,%02X,Qh,0,97" % seq
    answer = b"$" + body + b"*%04X\n" % crc16(body)
    beam = b"EB,1,0"   # escrow 1's beam: clear, answered after the read
    answer += b"$" + beam + b"*%04X\n" % crc16(beam)
    mech.reader.uart = QuietUart(bytearray(answer))
    pipe.n_rx = 0
    pipe.eb_j = 1
    pipe.eb_seen = -1
    pipe.eb_shared = False
    got = [0, 0, 0]
    lock()
    try:
        for _ in range(200):
            sm.rx = sm.tx
            st.pump()
            st.position()
        st.pushed = st.total - 300  # near the end: the braking ramp
        for _ in range(40):
            sm.rx = sm.tx
            st.pump()
        pipe._ask(0)
        got[0] = pipe._listen()
        pipe._judge(0, expect)
        got[1] = pipe.st[0]
        got[2] = pipe._listen()
        pipe._beam(0, expect, None)
    finally:
        unlock()
    assert got[0] is True and pipe.a_code == C.parse("Qh") and pipe.a_conf == 97, pipe.a_code
    assert got[1] == 2, got  # READ
    assert got[2] is False and pipe.eb_j == -1 and pipe.eb_seen == 0, (pipe.eb_j, pipe.eb_seen)
    assert not st.moving() or st.pushed == st.total


TESTS = [case_loader_wiring, case_loader_reshuffle, case_card_caught_in_an_escrow,
         case_servo_driver_dead, case_pockets_empty_after_power_up,
         case_pockets_seen_or_unknown_after_power_up, case_escrow_beam_cannot_tell,
         case_pipeline_time_tells_nothing_of_the_plan, case_escrow_beams_do_not_hold_the_pipeline,
         case_reshuffle_figures_52, case_reshuffle_figures_40, case_two_decks_on_revision_d,
         case_two_decks_on_revision_d_in_hand_reshuffle, case_pipeline_allocates_nothing,
         case_pipeline_stops_on_a_card_it_cannot_take]


if __name__ == "__main__":
    # every case imports tests/mp_carousel_test.py's world besides its own: 256 KB is short
    # on this 64-bit port (a MemoryError importing it); the Pico's own heap is
    # benchmarks/memory.py's to measure
    # The two-deck cases hold the gather tray's mechanism and world besides (tests/mp_decks_test
    # needs 352 KB for revision C alone): 448 KB, and 512 KB for the in-hand reshuffle since the
    # reader board's parts (the escrows' beams, the pocket count) came with the merge of issue 19's
    # two branches (a MemoryError in the world's reader at 448 KB)
    heaps = dict((t.__name__, "384K") for t in TESTS)
    heaps["case_two_decks_on_revision_d"] = "448K"
    heaps["case_two_decks_on_revision_d_in_hand_reshuffle"] = "512K"
    main(TESTS, __file__, heaps)
