# Revision D's loader on the Pico (hardware/SHUFFLER.md "Revision D"; the pin map's `loader`),
# imported by hal/rp2wire.py only when it is fitted (a revision B or C shoe never loads it).
#
# The parts: a Y-chute's flipper sends each read card to one of two escrows, over pockets half
# a turn apart (stations 0 and 1), each closed by a latch; the three are servos on a PCA9685
# servo driver on the Pico's own I2C (ServoDriver), which also drives the carousel's gate servo
# and its driver's enable (their GPIOs became the I2C bus). The carousel (StationCarousel,
# hal.carousel_rp2.Carousel with two stations) brings a card's pocket under the nearer station,
# a quarter turn at most, in a time padded to the quarter turn's bound (hal/fastpath.py's
# move_bound_us) whatever the plan; the latch lets the card fall once the ring has stopped;
# the ring turns again once the card is in (the tail past the rim). The unloading is one
# non-stop turn the way slot numbers fall at the speed that keeps each pocket over the gate's
# opening for a card's fall, from a first pocket reached in a padded half turn. After power-up
# the homing turn (padded to a whole turn) runs the pocket sensor past every pocket: only if it
# saw cards (a power cut mid-reshuffle) does the first reshuffle empty them first.
#
# Timing: a servo takes a new position from its next pulse, up to a frame (20 ms at 50 Hz)
# after the command, and needs latch_ms to throw; a latch commanded at c lets go between
# c + latch and c + latch + frame. Escrows.release_at() commands it so that the earliest
# release is lead_us before the padded move's end (the card's lead meets a pocket that has
# stopped) and returns when the card is in at the latest (release + frame + in_us).
#
# The card path (hal/rp2mech.py's feed, with the carousel's ShufflingMechanism) is revision
# B's here: each card stops at the hold position to be read, and the carousel turns while it
# waits; the stages do not yet overlap on the Pico (the feed reading on the fly is the model's
# and the simulator's: hal/fastpath.py, hal/simfast.py).
from hal.carousel_rp2 import LOST_STEPS, WAY_SHORT, Carousel, ShufflingMechanism
from shoe.compat import const
from shoe.faults import MechanismFault

# the PCA9685's registers and bits (NXP PCA9685 datasheet Rev. 4, 7.3 "Register definitions")
MODE1 = const(0x00)
MODE2 = const(0x01)
LED0 = const(0x06)        # LEDn_ON_L at 0x06 + 4n, then ON_H, OFF_L, OFF_H
PRE_SCALE = const(0xFE)
RESTART = const(0x80)
AI = const(0x20)          # register auto-increment: a channel's four bytes in one transfer
SLEEP = const(0x10)       # the oscillator off: PRE_SCALE may only be written while it is set
ALLCALL = const(0x01)
OUTDRV = const(0x04)      # MODE2: totem-pole outputs
FULL = const(0x10)        # bit 4 of ON_H / OFF_H: the output fully on / off
STEPS = const(4096)       # a PWM period's counts
ESCROW = "escrow_caught"
DRIVER = "servo_driver"

__all__ = ["ServoDriver", "Channel", "Output", "Escrows", "LoaderTiming", "StationCarousel",
           "LoaderMechanism", "ESCROW", "DRIVER", "fit", "timing"]


def timing(pm, fast):
    """(CarouselTiming at revision D's motion profile, LoaderTiming): pm the pin map
    (hal.pinview.PinMap), fast its hal.fastpath.FastPath."""
    from hal.carousel_rp2 import CarouselTiming
    from hal.readerline import RD, frame

    lt = LoaderTiming(fast, pm.data["loader"])
    # a card of the stop-and-go path (the next deck's, between the hand's steps) leaves the
    # exit nip at the shuffle route's speed and slides that fast to its escrow's latch
    b = pm.budget()
    fs = pm.feed_stepper
    path = pm.path
    ratio = fs.pick_roller_diameter_mm / float(fs.pick_reduction * fs.roller_diameter_mm)
    out = (path.takeaway_nip_mm / ratio + path.exit_nip_mm + path.card_length_mm -
           path.takeaway_nip_mm) * b["steps_per_mm"]
    lt.chute_us = int((fast.steps_escrow - out) * 1000000 / fs.shuffle_steps_per_s) + 1
    rd = pm.reader  # a read's request and its answer on the reader's UART (10 bits a byte)
    lt.link_us = (len(frame(RD + ",00")) + rd.frame.max_len // 2) * 10 * 1000000 // rd.baud + 1
    ct = CarouselTiming(pm)
    ct.cruise = lt.cruise
    ct.accel = lt.accel
    ct.home_rate = lt.home_rate
    return ct, lt


def fit(hal, sensor, lid, make_stepper, reader=None):
    """The carousel of a revision D shoe (hal/rp2wire.py, when the pin map's loader is
    fitted): the servo driver on the Pico's I2C (the GPIOs of the signals the loader names),
    the gate servo and the carousel driver's enable on its channels, the escrows, the pocket
    sensor and the escrows' beams through the reader board (reader: hal.rp2mech.Reader; the
    messages hal/loader_board.py's). Returns the StationCarousel."""
    import machine
    from hal.fastpath import on

    pm = hal.pm
    ld = pm.loader
    Pin = machine.Pin
    i2c = machine.I2C(ld.i2c.id, freq=ld.i2c.freq_hz, scl=Pin(pm.gpio(ld.i2c.scl)),
                      sda=Pin(pm.gpio(ld.i2c.sda)))
    sd = ld.servo_driver
    drv = ServoDriver(i2c, sd.address, sd.freq_hz, sd.osc_hz, hal.clock)
    fast = on(pm.data)
    ct, lt = timing(pm, fast)
    esc = Escrows(drv, hal.clock, lt)
    en = Output(drv, ld.channels.carousel_en, 1 - pm.level("carousel_en"))
    cst, hal.carousel_sm = make_stepper(hal, pm.carousel_stepper, ct.cruise, ct.accel, en)
    gate = Channel(drv, ld.channels.gate)
    gate.duty_ns(ct.closed_ns)
    car = StationCarousel(cst, sensor, lid, gate, hal.clock, ct, lt, fast, esc, hal.tick)
    if reader is not None:
        from hal.loader_board import EscrowBeams, PocketSensor

        def wait():
            car._wait(1)
        esc.clear = EscrowBeams(reader, wait).clear
        car.pockets_seen = PocketSensor(reader, wait)
    return car


class ServoDriver:
    """The PCA9685 at `address` on i2c (machine.I2C): 50 Hz frames for servos, channels as
    pulses in us or full on/off. Every write is one transfer of a channel's four registers
    from a buffer made once (no allocation when a servo moves)."""

    def __init__(self, i2c, address, freq_hz, osc_hz, clock):
        self.i2c = i2c
        self.addr = address
        self.clock = clock
        self.prescale = int(osc_hz / (STEPS * freq_hz) + 0.5) - 1
        self.period_us = (self.prescale + 1) * STEPS * 1000000 // osc_hz  # the real frame
        self.buf = bytearray(4)
        self.one = bytearray(1)
        self.started = False
        self.users = []   # Channel and Output: what they hold is written when the chip starts

    def _write(self, reg, buf):
        try:
            self.i2c.writeto_mem(self.addr, reg, buf)
        except OSError:
            raise MechanismFault(DRIVER, "the loader's servo driver (PCA9685 at 0x%02x) does not "
                                         "answer on I2C: check its cable and its 5 V supply"
                                 % self.addr)

    def _reg(self, reg, value):
        self.one[0] = value
        self._write(reg, self.one)

    def start(self):
        """Set the frame (PRE_SCALE, written while the oscillator sleeps), wake it, wait the
        500 us it takes to settle, then turn auto-increment on; read PRE_SCALE back (a
        driver that lost its power shows here); then every channel's output as its user holds
        it. Not at the wiring: a driver that does not answer stops the carousel's first move
        (a fault the operator sees), not the boot."""
        self._reg(MODE1, SLEEP | AI | ALLCALL)
        self._reg(PRE_SCALE, self.prescale)
        self._reg(MODE2, OUTDRV)
        self._reg(MODE1, AI | ALLCALL)
        self.clock.sleep_ms(1)
        self._reg(MODE1, RESTART | AI | ALLCALL)
        try:
            got = self.i2c.readfrom_mem(self.addr, PRE_SCALE, 1)[0]
        except OSError:
            got = -1
        if got != self.prescale:
            raise MechanismFault(DRIVER, "the loader's servo driver (PCA9685 at 0x%02x) did not "
                                         "take its frame: check its cable and its 5 V supply"
                                 % self.addr)
        self.started = True
        for u in self.users:
            u.apply()

    def pulse(self, ch, us):
        """Channel ch's pulse: us long, from the start of each frame."""
        off = (us * STEPS + self.period_us // 2) // self.period_us
        b = self.buf
        b[0] = 0
        b[1] = 0
        b[2] = off & 0xFF
        b[3] = off >> 8
        self._write(LED0 + 4 * ch, b)

    def level(self, ch, on):
        """Channel ch fully on or fully off (a logic output: the carousel driver's enable)."""
        b = self.buf
        b[0] = 0
        b[1] = FULL if on else 0
        b[2] = 0
        b[3] = 0 if on else FULL
        self._write(LED0 + 4 * ch, b)


class Channel:
    """A servo on a channel of the driver, with machine.PWM's duty_ns face (the gate servo of
    hal.carousel_rp2.Carousel)."""

    def __init__(self, drv, ch):
        self.drv = drv
        self.ch = ch
        self.ns = 0
        drv.users.append(self)

    def duty_ns(self, ns=None):
        if ns is None:
            return self.ns
        self.ns = ns
        self.apply()
        return None

    def apply(self):
        if self.drv.started:
            self.drv.pulse(self.ch, self.ns // 1000)


class Output:
    """A logic output on a channel, with machine.Pin's value() face (the carousel driver's
    enable, which hal.stepper_pio.Stepper switches)."""

    def __init__(self, drv, ch, value=0):
        self.drv = drv
        self.ch = ch
        self.v = 1 if value else 0
        drv.users.append(self)

    def value(self, v=None):
        if v is None:
            return self.v
        v = 1 if v else 0
        if v != self.v:
            self.v = v
            self.apply()
        return None

    def apply(self):
        if self.drv.started:
            self.drv.level(self.ch, self.v)

    def __call__(self, v=None):
        return self.value(v)


class LoaderTiming:
    """Revision D's figures: fp, hal.fastpath.FastPath (hardware/fastpath.json on the pin map),
    and the pin map's `loader` section as ld (pulses)."""

    def __init__(self, fp, ld):
        self.stations = fp.stations
        self.move_ms = fp.move_bound_us / 1000.0     # a loading move, padded (a quarter turn)
        self.half_ms = fp.half_bound_us / 1000.0     # the move to the unloading turn's start
        self.home_ms = fp.home_us / 1000.0           # the homing turn, padded
        self.turn_ms = (fp.unload_turn_us + fp.card_fall_us) / 1000.0  # the non-stop turn
        self.turn_rate = int(fp.turn_v)              # steps/s of the non-stop turn
        self.cruise = int(fp.car_v)
        self.accel = int(fp.car_a)
        self.home_rate = int(fp.home_v)
        self.lead_us = fp.lead_us                    # release -> the lead at the pocket's mouth
        self.in_us = fp.in_us                        # release -> the tail past the rim
        self.latch_us = fp.latch_us                  # a servo's throw
        self.frame_us = fp.frame_us                  # ... from its next pulse
        self.link_us = 0                             # a read's bytes on the UART (timing())
        self.chute_us = 0                            # exit nip -> latch, stop-and-go (timing())
        self.flipper_us = list(ld["flipper_us"])
        self.hold_us = ld["latch_us"]["hold"]
        self.release_us = ld["latch_us"]["release"]
        ch = ld["channels"]
        self.ch_flipper = ch["flipper"]
        self.ch_latch = [ch["latch_%d" % j] for j in range(fp.stations)]


class Escrows:
    """The Y-chute's flipper and the escrows' latches on the servo driver; clock: the HAL's
    (ticks_us, ticks_diff, sleep_ms); lt: LoaderTiming; clear(station) -> True when that
    escrow's beam sees no card (None: no beam)."""

    def __init__(self, drv, clock, lt, clear=None):
        self.drv = drv
        self.clock = clock
        self.lt = lt
        self.clear = clear
        self.station = -1
        self.held = [None] * lt.stations   # the card each latch holds (its code)
        self.releases = 0
        self.caught = None                 # the card the last release left in its escrow

    def start(self):
        """The servo driver started, the latches closed, the flipper to station 0."""
        self.drv.start()
        for j in range(self.lt.stations):
            self.drv.pulse(self.lt.ch_latch[j], self.lt.hold_us)
        self.station = -1
        self.route(0)

    def route(self, station):
        """The flipper to `station`'s chute (the card's pocket comes under that station)."""
        if station != self.station:
            self.drv.pulse(self.lt.ch_flipper, self.lt.flipper_us[station])
            self.station = station

    def release_at(self, station, code, end_us, idle=None):
        """The card `code` waits on `station`'s latch; the ring's padded move ends at end_us
        (ticks_us). Command the latch so that it lets go lead_us before end_us at the earliest,
        wait until the card is in at the latest, close the latch, and check the escrow is
        empty. Returns ticks_us when done."""
        lt = self.lt
        clock = self.clock
        self.held[station] = code
        at = end_us - lt.lead_us - lt.latch_us
        while clock.ticks_diff(at, clock.ticks_us()) > 0:
            if idle is not None and clock.ticks_diff(at, clock.ticks_us()) > 2000:
                idle()
        t = clock.ticks_us()
        self.drv.pulse(lt.ch_latch[station], lt.release_us)
        done = t + lt.latch_us + lt.frame_us + lt.in_us
        while clock.ticks_diff(done, clock.ticks_us()) > 0:
            if idle is not None and clock.ticks_diff(done, clock.ticks_us()) > 2000:
                idle()
        self.drv.pulse(lt.ch_latch[station], lt.hold_us)
        self.releases += 1
        if self.clear is not None and not self.clear(station):
            raise self.caught_in(station, code)
        self.held[station] = None
        return clock.ticks_us()

    def caught_in(self, station, code):
        """The card `code` left in `station`'s escrow (its beam sees it after the latch closed
        again): noted, and the fault that stops the reshuffle (hal/pipeline_rp2.py's too)."""
        self.caught = code
        return MechanismFault(ESCROW, "a card (%s) is caught in escrow %d of the carousel's "
                                      "loader: open the lid, take it out, put it face down on "
                                      "top of the magazine, close the lid and feed again"
                              % (code_name(code), station))


def code_name(code):
    from shoe.cards import name

    return name(code)


class StationCarousel(Carousel):
    """hal.carousel_rp2.Carousel with revision D's two stations, the escrows (Escrows) and the
    non-stop unloading turn. t: CarouselTiming at revision D's motion profile (LoaderTiming's
    cruise and accel); lt: LoaderTiming; fast: the hal.fastpath.FastPath it comes from (the
    parking map); pockets_seen: the pocket sensor (hal.loader_board.PocketSensor: start()
    before the homing turn, seen() after it -> the cards it saw, None: it cannot tell).
    `pockets` is kept by the plan's slots, as Carousel's (what ShufflingMechanism reads); each
    plan slot's card goes into the pocket of its place in the plan's order (FastPath.park_map,
    set by use()), so that the non-stop turn from the parking window drops them in that
    order."""

    def __init__(self, stepper, sensor, lid, gate, clock, t, lt, fast, escrows, tick=None,
                 pockets_seen=None):
        Carousel.__init__(self, stepper, sensor, lid, gate, clock, t, tick)
        self.lt = lt
        self.fast = fast
        self.esc = escrows
        self.pockets_seen = pockets_seen
        self.pocket_count = None             # the pocket sensor's count of the last homing turn
        self.half = t.slots // lt.stations   # pockets between two stations
        self.end_us = None                   # ticks_us when the last padded move ends
        self.used = [0] * lt.stations
        self.where = {}                      # plan slot -> pocket (use())
        self.plan = None                     # ... of this plan

    def use(self, plan):
        """The reshuffle's plan: where each of its slots' cards goes."""
        self.where = self.fast.park_map(plan.drops())
        self.plan = plan

    def under(self, pocket, station):
        """The pocket at station 0 when `pocket` is under `station`."""
        return (pocket - station * self.half) % self.t.slots

    def nearer(self, pocket):
        """The station `pocket` reaches with the shortest move from where the ring is."""
        t = self.t
        at = (self.pos + t.sps // 2) // t.sps
        best = 0
        bd = t.slots
        for j in range(self.lt.stations):
            d = (self.under(pocket, j) - at) % t.slots
            d = min(d, t.slots - d)
            if d < bd:
                bd = d
                best = j
        return best

    def home(self):
        """Homing, padded to a whole turn at the homing rate (it tells nothing of where the
        last reshuffle left the ring); the servo driver started first, after power-up."""
        if not self.esc.drv.started:
            self.esc.start()
        sensor = self.pockets_seen if self.pockets is None else None  # (only after power-up)
        if sensor is not None:
            sensor.start()
        t0 = self.clock.ticks_us()
        Carousel.home(self)
        self._until(t0, self.lt.home_ms)
        if sensor is not None:
            self.pocket_count = sensor.seen()

    def _move(self, steps, forward, rate=None, stop=False):
        """Carousel._move; the driver's enable is a servo driver's output, which changes at
        the end of its PWM cycle: a move that enables the driver waits that frame first."""
        if steps > 0 and not self.st.enabled:
            self.st.enable(True)
            self._wait(self.lt.frame_us // 1000 + 1)
        return Carousel._move(self, steps, forward, rate, stop)

    def _set_gate(self, ns):
        """The gate servo acts from its next pulse: its settle time counts from a frame on."""
        self.gate.duty_ns(ns)
        self._wait(self.t.gate_ms + self.lt.frame_us // 1000)

    def load_to(self, slot, k=1):
        """The k-th card's pocket under the nearer station, the flipper to that station's
        chute, in the padded quarter turn whatever the plan. (The index is checked at each
        reshuffle's homing or unloading turn, both whole turns; every tab edge as ever.)"""
        pocket = self.where[slot]
        j = self.nearer(pocket)
        self.esc.route(j)
        self.used[j] += 1
        if not self.homed:
            self.home()
        self._settled()
        t0 = self.clock.ticks_us()
        self.goto(self.under(pocket, j), False, WAY_SHORT)
        self.end_us = t0 + int(self.lt.move_ms * 1000)
        self._until(t0, self.lt.move_ms)

    def fill(self, code, slot):
        """The card came down the chute onto its station's latch: let it fall into the pocket
        of `slot` (which must be under that station), timed from the padded move's end."""
        j = self.esc.station
        pocket = self.where.get(slot, -1)
        if pocket < 0 or self.slot_at() != self.under(pocket, j) or \
                self.pockets[slot] is not None:
            self.pockets = None
            self._fail(LOST_STEPS if self.slot_at() < 0 else "carousel_pocket",
                       "a card waits in escrow %d away from its pocket %d" % (j, pocket))
        # the card slides down the chute from the exit nip onto its latch meanwhile: the latch
        # lets go once it is there (the card's path stopped at the hold: its move is done)
        now = self.clock.ticks_us()
        end = self.clock.ticks_add(now, self.lt.chute_us + self.lt.lead_us)
        if self.end_us is not None and self.clock.ticks_diff(self.end_us, end) > 0:
            end = self.end_us
        self.esc.release_at(j, code, end, self.idle)
        self.pockets[slot] = code
        self.t_fill = None   # the card is in: the ring may turn at once
        self.end_us = None

    def ready(self):
        """Homed; after power-up the pocket sensor's count from the homing turn decides whether
        the pockets are emptied first (only when it saw cards, or cannot tell)."""
        if not self.homed:
            self.home()
        if self.pockets is None:
            seen = self.pocket_count
            self.pocket_count = None
            if seen == 0:
                self.pockets = [None] * self.t.slots
            else:
                self.unload([], True)

    def unload(self, drops, purge=False):
        """One non-stop turn the way pocket numbers fall, the gate open: it opens under the
        parking window (never loaded), reached in a padded half turn; every pocket then passes
        over the opening for a card's fall, in pocket order (the plan's: use()); the turn is
        padded to its bound; every tab edge is checked as in any move. purge: the pockets'
        contents unknown (after power-up), the same turn. (The opening spans the pocket at
        the station, the one before it and the two after: pockets park .. park + 3 with
        park + 1 at the station.)"""
        t = self.t
        lt = self.lt
        p = self.pockets
        if not purge:
            if not drops:
                return
            for s in drops:
                if p[s] is None:
                    raise ValueError("pocket %d is empty" % s)
        t0 = self.clock.ticks_us()
        self.goto(self.fast.park + 1, False, WAY_SHORT)  # the window over the opening
        self._until(t0, lt.half_ms)
        self._set_gate(t.open_ns)
        t0 = self.clock.ticks_us()
        self._move(t.rev, False, lt.turn_rate)
        self.sensor.settle()
        self._until(t0, lt.turn_ms)
        self._set_gate(t.closed_ns)
        del drops[:]
        self.pockets = [None] * t.slots


class LoaderMechanism(ShufflingMechanism):
    """hal.carousel_rp2.ShufflingMechanism on revision D's StationCarousel: each reshuffle's
    plan is given to the carousel (where its cards go) before its cards move, and its cards go
    in through the pipeline (hal/pipeline_rp2.py: the feed, the reader on the fly, the ring and
    the latches at once on different cards), made at the first reshuffle."""

    pipe = None

    def _load_all(self, job):
        """The cards still to load, through the pipeline, into the pockets of the plan's
        order (StationCarousel.use)."""
        self.carousel.use(job.plan)
        if job.left:
            self._load_run(job.left, job.plan)

    def _load_run(self, left, plan):
        """The cards `left` (codes, taken out as they go in) from the magazine into the pockets
        `plan` gives them, through the pipeline; a card caught in an escrow is asked back as a
        rejected card is (the operator puts it on the magazine, the reader reads it again)."""
        self.retries = 0
        self._ready()  # the lid, the path clear, the magazine, the reader, the pick roller home
        if self.pipe is None:
            from hal.pipeline_rp2 import Pipeline

            self.pipe = Pipeline(self, self.carousel)
        try:
            self.pipe.run(left, plan.slot_of, len(left))
        except MechanismFault as e:
            if e.kind == ESCROW:
                self.carousel.esc.caught = None
            raise
