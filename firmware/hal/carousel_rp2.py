# The shuffler's carousel on the Pico (hardware/SHUFFLER.md), as logic with no hardware in it:
# the stepper (hal.stepper_pio.Stepper on its own PIO state machine, so its pulses never wait
# for the CPU), the tab sensor and the lid (hal.rp2mech.Beam), the gate servo's PWM and the
# clock come in as arguments; hal/rp2.py wires them when pinmap.json says the carousel is
# fitted, the tests pass fakes. ShufflingMechanism is the feed mechanism with the carousel
# behind it, driven by the plan the engine draws (shoe.shuffler.Plan).
#
# Geometry. `pos` counts steps forward (DIR asserted: the slot number at the station rises);
# pocket k is at the station when pos = k x steps_per_slot (mod a turn). The ring carries a
# tab per pocket, centred on it, tab_steps wide, and a wider one, index_tab_steps, at pocket 0
# (the index); one slotted sensor at the station sees them. Turning forward a tab's sensor
# line rises at centre - half its width and falls at centre + half; turning back, the other
# way round.
#
# Position check. Every confirmed edge must come within index_tolerance_steps of where the
# step count puts it (a stalled motor slips 4 full steps at a time, more than the tolerance),
# every edge a move passes must be seen, and a stopped carousel must read its pocket's tab;
# else it stops safe (steps halted, driver off, gate closed) and raises MechanismFault: lost
# steps, or a dead sensor. The pocket is checked before a card goes in, so a slip never puts
# a card in the wrong pocket. A count off by whole pockets (the ring turned by hand while its
# driver was off) fools the pockets' tabs but not the index tab, told by its width. Loading
# moves pass it on a fixed schedule (the first card of a reshuffle, every index_every-th after
# it) and are padded to their kind's bound (a whole turn, else half a turn), the unloading
# turn to the bound of any plan: the time tells nothing of the plan (SHUFFLER.md). Other moves
# are routed past it whenever the travel since it was last seen would exceed a turn.
#
# A reshuffle (ShufflingMechanism): load(stub, plan) only takes the plan; the next feed does
# the work, so a fault (an empty magazine, a jam, lost steps) comes out of feed() like any
# other mechanism fault and the next feed picks up where it stopped. Each card of the
# magazine is fed to the hold position and read; the carousel turns the shortest way to the
# pocket the plan gives that card (the magazine's order does not matter); the card goes down
# the diverter's shuffle route into it. Cards the reader rejects (face up, unreadable, two at
# once, not of the plan) go to the reject bin and are asked for again at the end. Then, gate
# open, one turn the way slot numbers fall drops the pockets onto the shuffle tray in the
# plan's order; the operator puts the tray's stack into the magazine as it is, which the next
# feed waits for. After power-up the pockets' contents are unknown: the first reshuffle
# empties them all onto the tray first.
from hal.motion import move_ms
from hal.rp2mech import EMPTY, FEW, LID_OPEN, Mechanism, MechanismFault
from shoe.cards import CODE

try:
    from typing import TYPE_CHECKING  # type: ignore
except ImportError:  # MicroPython
    TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Optional  # noqa: F401  (type comments)

ROUTE_SHUFFLE = 3        # the diverter's fourth position (pinmap.json diverter.pulse_us.shuffle)
LOST_STEPS = "carousel_lost_steps"
NO_INDEX = "carousel_no_index"
POCKET = "carousel_pocket"
MARGIN = 1.05    # a padded move's time over its ideal trapezoid
WAY_ANY = 0      # goto: the shortest way, or past the index tab when a turn went by without it
WAY_SHORT = 1    # the shortest way (half a turn at most)
WAY_INDEX = 2    # the way past the index tab

__all__ = ["Carousel", "CarouselTiming", "ShufflingMechanism", "ROUTE_SHUFFLE"]


class CarouselTiming:
    """The carousel's figures, from the pin map (hal.pins.PinMap)."""

    def __init__(self, pm):
        cs = pm.carousel_stepper
        self.slots = cs.slots
        self.sps = cs.steps_per_slot
        self.rev = cs.slots * cs.steps_per_slot
        self.cruise = cs.cruise_steps_per_s
        self.accel = cs.accel_steps_per_s2
        self.max_rate = cs.max_steps_per_s
        self.home_rate = cs.home_steps_per_s
        self.tab_half = cs.tab_steps // 2          # half a pocket's tab
        self.index_half = cs.index_tab_steps // 2  # half the index tab (pocket 0)
        self.tol = cs.index_tolerance_steps
        self.settle_ms = cs.settle_ms
        self.drop_ms = cs.drop_ms
        g = cs.gate
        self.closed_ns = g.closed_us * 1000
        self.open_ns = g.open_us * 1000
        self.gate_ms = g.settle_ms
        self.beam_us = pm.debounce.beam_us
        # every loading move takes a fixed time, however far it goes (the ideal trapezoid,
        # which the Stepper's ramps never exceed, plus a fifth): the time of a reshuffle tells
        # nothing of its plan. The index tab is checked on a fixed schedule, every
        # index_every-th card (from the first), whose move goes the way past it: a whole turn
        # at most (load_move_ms); every other move goes the shortest way, half a turn at most
        # (half_move_ms)
        self.load_move_ms = self.bound_ms(self.rev)
        self.half_move_ms = self.bound_ms(self.rev // 2)
        self.index_every = cs.index_every_cards

    def bound_ms(self, steps):
        """What a move of `steps` is padded to: the ideal trapezoid (which the Stepper's plan
        never exceeds: 9 ms under it in the fake world) plus 5 % for the checks at its end."""
        return int(move_ms(steps, self.cruise, self.accel) * MARGIN) + 1

    def unload_ms(self, n):
        """The time an unloading turn of n pockets is padded to, from the gate open to the
        last drop done: n drops, and n - 1 moves the way slot numbers fall whose gaps (a slot
        or more each) add up to less than a turn. A move's time is concave in its length, so
        the gaps take longest when they are equal (Jensen): the bound needs no plan."""
        if n <= 1:
            return self.drop_ms * n
        gap = (self.slots - 1) * self.sps / (n - 1)
        return int(n * self.drop_ms + (n - 1) * move_ms(gap, self.cruise, self.accel) * MARGIN)


class Carousel:
    """stepper: hal.stepper_pio.Stepper; sensor (the tabs), lid: hal.rp2mech.Beam; gate:
    machine.PWM of the gate servo; clock: ticks_ms/ticks_us/ticks_diff/sleep_ms; t:
    CarouselTiming; tick feeds the watchdog; idle (set by the mechanism) keeps the link served
    while the carousel waits."""

    def __init__(self, stepper, sensor, lid, gate, clock, t, tick=None):
        self.st = stepper
        self.sensor = sensor
        self.lid = lid
        self.gate = gate
        self.clock = clock
        self.t = t
        self.tick = tick
        self.idle = None
        self.pos = 0
        self.homed = False
        self.pockets = None  # type: Any  # the card in each pocket (None: empty); None: unknown
        self.travel = 0          # steps turned, all moves
        self.checked = 0         # self.travel when the index tab was last where it should be
        self.checks = 0          # edges seen where they should be
        self.indexes = 0         # ... of them the index tab's
        self.seen = [0] * (2 * t.slots + 16)  # the edges of the move under way (no allocation
        self.nseen = 0                          # in the motion loop): positions, how many
        self.t_fill = None       # ticks_ms when the last card went into a pocket
        gate.duty_ns(t.closed_ns)

    # ---------------------------------------------------------------- geometry

    def _wrap(self, x):
        """x steps as the nearest offset from a whole turn, in [-rev/2, rev/2)."""
        r = self.t.rev
        return (x + r // 2) % r - r // 2

    def slot_at(self):
        """The pocket at the station, or -1 when the carousel is between pockets."""
        sps = self.t.sps
        k = (self.pos + sps // 2) // sps
        if abs(self.pos - k * sps) > self.t.tol:
            return -1
        return k % self.t.slots

    def _half(self, k):
        """Half the width of pocket k's tab."""
        return self.t.index_half if k % self.t.slots == 0 else self.t.tab_half

    def _scan(self, a, b, index_only=False, check=False):
        """The first tab edge in the open range (a + tol, b - tol), a < b (index_only: of the
        index tab); check: the first one the move under way did not see. None if there is none."""
        t = self.t
        lo = a + t.tol
        hi = b - t.tol
        k = (lo - t.sps) // t.sps
        while k * t.sps - t.index_half < hi:
            if not index_only or k % t.slots == 0:
                h = self._half(k)
                x = k * t.sps - h
                if lo < x < hi and not (check and self._saw(x)):
                    return x
                x = k * t.sps + h
                if lo < x < hi and not (check and self._saw(x)):
                    return x
            k += 1
        return None

    def _saw(self, x):
        tol = self.t.tol
        seen = self.seen
        for i in range(self.nseen):
            if -tol <= seen[i] - x <= tol:
                return True
        return False

    def _note(self, p):
        if self.nseen < len(self.seen):
            self.seen[self.nseen] = p
            self.nseen += 1

    # ---------------------------------------------------------------- motion

    def _tick(self):
        if self.tick is not None:
            self.tick()

    def _safe(self):
        """Stop safe: steps halted, the driver off, the gate closed; home again before use."""
        if self.st.moving():
            self.st.halt()
        self.st.enable(False)
        self.gate.duty_ns(self.t.closed_ns)
        self.homed = False

    def _fail(self, kind, message):
        self._safe()
        raise MechanismFault(kind, message)

    def _move(self, steps, forward, rate=None, stop=False):
        """Turn `steps` steps; every edge is checked and None returned. stop (homing, the
        position not known): end at the first falling edge and return its position, the
        rising edges before it in self.seen."""
        st = self.st
        b = self.sensor
        clock = self.clock
        sign = 1 if forward else -1
        origin = self.pos
        if steps <= 0:
            return None
        b.settle()
        self.nseen = 0
        st.enable(True)
        st.start(steps, forward, rate)
        while True:
            self._tick()
            moving = st.pump()
            now = clock.ticks_us()
            if self.lid.raw():  # the driver is off already (U4): the position is lost
                self.pos = origin + sign * st.halt()
                self._fail(LID_OPEN, "the lid was opened while the carousel turned: close it; "
                                     "the carousel finds its index again at the next feed")
            e = b.update(now)
            if e:
                p = origin + sign * st.position()
                if not stop:
                    self._edge(p, e > 0, forward, origin)
                elif e > 0:
                    self._note(p)
                else:
                    self.pos = origin + sign * st.halt()
                    self.travel += sign * (self.pos - origin)
                    return p
            if not moving:
                break
        self.pos = origin + sign * st.position()
        self.travel += steps
        if not stop:
            self._missed(origin, self.pos)
        return None

    def _edge(self, p, rising, forward, origin):
        t = self.t
        k = (p + t.sps // 2) // t.sps  # the tab whose edge this is: the nearest centre
        h = self._half(k)
        off = p - (k * t.sps - h if rising == forward else k * t.sps + h)
        if off > t.tol or off < -t.tol:
            self.pos = p
            self._fail(LOST_STEPS, "tab %d passed the carousel's sensor %d steps from where the "
                       "step count put it (%d allowed): the carousel lost steps; check the belt, "
                       "the motor current, that nothing drags on the pockets, and the tabs"
                       % (k % t.slots, off, t.tol))
        self._note(p)
        self.checks += 1
        if k % t.slots == 0:
            self.indexes += 1
            self.checked = self.travel + (p - origin if p > origin else origin - p)

    def _missed(self, a, b):
        lo, hi = (a, b) if a < b else (b, a)
        x = self._scan(lo, hi, False, True)
        if x is None:
            return
        if not self.nseen:
            self._fail(NO_INDEX, "the carousel's sensor saw no tab edge while it turned (the "
                       "first due at step %d): check the sensor (J14) and its cable"
                       % (x % self.t.rev))
        self._fail(LOST_STEPS, "the tab edge due at step %d did not pass the carousel's sensor: "
                   "the carousel lost steps (or a tab is gone); check the belt, the motor "
                   "current and the tabs" % (x % self.t.rev))

    def _wait(self, ms):
        clock = self.clock
        t0 = clock.ticks_ms()
        while clock.ticks_diff(clock.ticks_ms(), t0) < ms:
            self._tick()
            if self.idle is not None:
                self.idle()
            clock.sleep_ms(1)

    def _set_gate(self, ns):
        self.gate.duty_ns(ns)
        self._wait(self.t.gate_ms)

    def home(self):
        """Find the index: slowly forward, tab by tab, until one is as wide as the index tab;
        then back to pocket 0, where its tab must read."""
        t = self.t
        self.homed = False
        wide = t.tab_half + t.index_half  # between a pocket's tab's width and the index's
        for _ in range(t.slots + 2):
            p = self._move(2 * t.sps, True, t.home_rate, True)
            if p is None:
                self._fail(NO_INDEX, "the carousel's sensor saw no tab over two pockets (dead or "
                                     "stuck): check the sensor (J14), its cable and the belt")
            if self.nseen and p - self.seen[self.nseen - 1] > wide:
                self.pos = self.pos - p + t.index_half  # the index tab's falling edge, forward
                self.homed = True
                self.checked = self.travel
                self.goto(0)
                return
        self._fail(NO_INDEX, "the carousel turned a whole turn without finding its index tab: "
                             "check the tabs and the sensor (J14)")

    def goto(self, slot, down=False, way=WAY_ANY):
        """Turn until `slot` is at the station: the shortest way (or, when the travel since
        the last index check would pass a turn, the way past the index), or with down=True
        the way slot numbers fall (the unloading turn). way=WAY_SHORT: the shortest way
        whatever the travel (half a turn at most); WAY_INDEX: the way past the index tab (a
        whole turn if the carousel is there already)."""
        t = self.t
        if not self.homed:
            self.home()
        self._settled()
        fwd = (slot * t.sps - self.pos) % t.rev
        back = t.rev - fwd if fwd or way == WAY_INDEX else 0
        if down:
            forward = False
        else:
            forward = fwd <= back
            n = fwd if forward else back
            if way == WAY_INDEX or (way == WAY_ANY and self.travel - self.checked + n > t.rev):
                a = self.pos
                if forward:
                    crosses = self._scan(a, a + fwd, True)
                else:
                    crosses = self._scan(a - back, a, True)
                if crosses is None:
                    forward = not forward
        self._move(fwd if forward else back, forward)
        self.sensor.settle()
        if self.slot_at() != slot or not self.sensor.active:
            self._fail(LOST_STEPS, "the carousel stopped at step %d without pocket %d's tab at "
                       "the sensor: it lost steps" % (self.pos % t.rev, slot))

    def load_to(self, slot, k=1):
        """goto(slot) for the k-th card (from 0) of a reshuffle, in a time fixed by k alone:
        how far the carousel turned, which depends on where the plan puts the card, is not to
        be read from the reshuffle's duration (nor from the link's timing: the loop serves it
        all along). Every t.index_every-th card goes the way past the index tab
        (t.load_move_ms), the others the shortest way (t.half_move_ms)."""
        t = self.t
        if k % t.index_every == 0:
            self._padded(slot, WAY_INDEX, t.load_move_ms)
        else:
            self._padded(slot, WAY_SHORT, t.half_move_ms)

    def _settled(self):
        """Wait until the last card has slid into its pocket (settle_ms after the fill): the
        carousel may turn. (In a reshuffle the next card's pick has taken longer.)"""
        if self.t_fill is not None:
            left = self.t.settle_ms - self.clock.ticks_diff(self.clock.ticks_ms(), self.t_fill)
            if left > 0:
                self._wait(left)
            self.t_fill = None

    def _padded(self, slot, way, ms):
        if not self.homed:
            self.home()
        self._settled()  # (not part of the padded time: it does not depend on the plan)
        t0 = self.clock.ticks_us()
        self.goto(slot, False, way)
        self._until(t0, ms)

    def _until(self, t0, ms):
        """Wait until ms after t0 (ticks_us), then to the ms timer's next tick, to the
        microsecond timer's grain: the link is served while more than 2 ms are left, the rest
        is a tight loop (so a padded time does not drift by the millisecond sleeps' overshoot,
        and what follows, timed in ms, starts at the same phase whatever the plan)."""
        clock = self.clock
        end = ms * 1000
        while True:
            left = end - clock.ticks_diff(clock.ticks_us(), t0)
            if left <= 0:
                break
            if left > 2000:
                self._tick()
                if self.idle is not None:
                    self.idle()
                clock.sleep_ms(1)
        # then to the millisecond timer's next tick (the microsecond timer wraps at 2**30, not
        # a whole number of ms: its own phase would drift from the ms timer's at each wrap)
        m = clock.ticks_ms()
        while clock.ticks_ms() == m:
            pass

    def ready(self):
        """Homed, and every pocket's contents known: after power-up they are emptied onto
        the tray (whatever a cut-off reshuffle left in them)."""
        if not self.homed:
            self.home()
        if self.pockets is None:
            self.unload(list(range(self.t.slots - 1, -1, -1)), True)

    def fill(self, code, slot):
        """A card went down the shuffle route into the pocket at the station."""
        if self.slot_at() != slot or self.pockets[slot] is not None:
            self.pockets = None  # cannot tell where it went: empty them all before the next
            self._fail(POCKET, "a card went into the carousel away from its pocket %d" % slot)
        self.pockets[slot] = code
        self.t_fill = self.clock.ticks_ms()

    def unload(self, drops, purge=False):
        """Empty the pockets `drops` onto the tray, in that order: one turn, slot numbers
        falling, gate open. The list is consumed as the cards fall (a fault leaves the rest to
        do). purge: every pocket, contents unknown."""
        t = self.t
        p = self.pockets
        if not purge:
            gaps = 0
            for i in range(len(drops)):
                if p[drops[i]] is None:
                    raise ValueError("pocket %d is empty" % drops[i])
                if i:
                    gaps += (drops[i - 1] - drops[i]) % t.slots
            full = 0
            for c in p:
                full += c is not None
            if full != len(drops) or (drops and gaps >= t.slots):
                raise ValueError("the drops are not the full pockets in one falling turn")
        if not drops:
            return
        # constant time too: the move to the first pocket (from the last card's, which the
        # plan chose) is padded to half a turn's; the turn to the bound of any plan's gaps
        self._padded(drops[0], WAY_SHORT, t.half_move_ms)
        self._set_gate(t.open_ns)
        t0 = self.clock.ticks_us()
        bound = t.unload_ms(len(drops))
        first = True
        while drops:
            if not first:
                self.goto(drops[0], True)
            first = False
            self._wait(t.drop_ms)
            if p is not None:
                p[drops[0]] = None
            drops.pop(0)
        self._until(t0, bound)
        self._set_gate(t.closed_ns)
        if purge:
            self.pockets = [None] * t.slots

    def rest(self):
        """The reshuffle is done: the driver off (the ring keeps its place; if a hand turns
        it, the index tab tells at the next pass)."""
        self.st.enable(False)


class Job:
    """A reshuffle under way: the plan, the cards not yet in their pockets, then the pockets
    still to empty."""

    def __init__(self, plan):
        self.plan = plan
        self.left = list(plan.cards)
        self.drops = None  # type: Any  # then the pockets still to empty, in order


class ShufflingMechanism(Mechanism):
    """hal.rp2mech.Mechanism with the carousel: load(stub, plan) realises the engine's plan at
    the next feed. carousel: Carousel; the rest as Mechanism."""

    def __init__(self, carousel, stepper, beams, reader, diverter, clock, t, tick=None,
                 motor_volts=None, min_volts=0):
        Mechanism.__init__(self, stepper, beams, reader, diverter, clock, t, tick, motor_volts,
                           min_volts)
        self.carousel = carousel
        self.job = None  # type: Optional[Job]
        self.tray = False        # a shuffled stack waits on the shuffle tray

    def load(self, stub, plan=None):
        Mechanism.load(self, stub)
        self.job = Job(plan) if plan is not None else None
        self.tray = False

    def deliver(self, codes, stub):
        Mechanism.deliver(self, codes, stub)
        job = self.job
        if job is not None:  # found at the output after a power cut: not for the carousel
            for c in self.delivered:
                if c in job.left:
                    job.left.remove(c)

    def feed(self, route):
        job = self.job
        if job is not None:
            self._shuffle(job)
        if self.tray:
            b = self.b
            b.magazine.settle()
            left = self._left()
            if not b.magazine.active and left is not None and left > FEW:
                raise MechanismFault(EMPTY, "the reshuffled stack is on the shuffle tray: put it "
                                            "into the magazine face down, as it is, then feed "
                                            "again")
            self.tray = False
        return Mechanism.feed(self, route)

    def _read(self):
        """The card at the hold position is read: if it goes into the carousel, turn its
        pocket to the station now, while it waits."""
        r = Mechanism._read(self)
        job = self.job
        h = self.held
        if (job is not None and job.drops is None and isinstance(r, tuple) and not r[1]
                and h is not None and not (h.double or h.short or h.broken)
                and r[0] in job.left):
            self.carousel.load_to(job.plan.slot_of(r[0]), len(job.plan.cards) - len(job.left))
        return r

    def _shuffle(self, job):
        car = self.carousel
        car.idle = self.idle
        car.ready()
        if job.drops is None:
            self._load_all(job)
            pockets = car.pockets
            job.drops = [s for s in job.plan.drops() if pockets[s] is not None]
        car.unload(job.drops)
        car.rest()
        self.job = None
        self.tray = True
        stack = [c for c in job.plan.cards if c not in self.delivered]
        Mechanism.load(self, stack)

    def _load_all(self, job):
        """Every card still to load into its pocket, one at a time (revision D's loader
        pipelines them: hal/loader_rp2.py)."""
        while job.left:
            self._load_one(job)

    def _load_one(self, job):
        """Feed one card of the magazine into its pocket (or, rejected, to the reject bin).
        Not one of the hand's feeds: nothing is committed, the step's count stays."""
        saved = self.before
        feeds = self.feeds
        self.before = None
        self.rate = self.t.shuffle_rate
        self.acc = self.t.shuffle_accel
        try:
            reads = Mechanism.feed(self, ROUTE_SHUFFLE)
        except MechanismFault as e:
            if e.kind != EMPTY:
                raise
            raise MechanismFault(EMPTY, "the magazine is empty and the reshuffle still needs %d "
                                        "card(s): put them face down into the magazine (look in "
                                        "the reject bin and on the shuffle tray), then feed again"
                                 % len(job.left))
        finally:
            self.before = saved
            self.feeds = feeds
            self.rate = None
            self.acc = None
        if self.last_route == ROUTE_SHUFFLE and len(reads) == 1:
            code = reads[0]
            self.carousel.fill(code, job.plan.slot_of(code))
            job.left.remove(code)
            return
        exp = self.expect
        for raw in reads:  # rejected: a card of the plan is expected back, but not in the
            code = raw & CODE  # magazine until the operator returns it (the empty check)
            if code in job.left and exp is not None:
                exp.add(code)
                self.unread += 1
