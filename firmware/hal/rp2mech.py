# The real shoe's mechanism, as logic with no hardware in it: every pin, the PIO stepper, the
# reader's UART, the servo's PWM and the clock come in as constructor arguments (hal/rp2.py
# passes machine/rp2 objects, the tests pass fakes). The Mechanism has SimMech's interface:
# feed(route) moves one card through the path and returns what the reader saw (codes, bit 64
# = face up), or raises MechanismFault before reporting anything.
#
# One card cycle (hardware/MECHANISM.md): pick -> the double-feed beam D -> the throat beam T ->
# stop at the hold position (a fixed step count after T) -> read -> set the diverter -> eject
# the rest of the pick roller's turn, which ends at pick_home. Positions are counted in steps of
# the turn ("turn coordinates", net of reversals), so a measurement survives a reverse-and-retry.
#
# Faults:
#   jam       no card at D or T within its window, or T still blocked after the eject window:
#             stop, reverse jam_reverse_steps, go again; after jam_retries the motor is switched
#             off and MechanismFault("jam") is raised (a feed whose jams the retries cleared
#             is counted in `recovered`). Also: a card left in the path (after a fault or a
#             power cut) refuses the next feed until the operator takes it out.
# The kinds, their codes and MechanismFault are shoe/faults.py's (shared with the simulator).
#   empty     nothing reaches D and the magazine beam is clear (or the beam is clear before the
#             pick while the stub is more than a few cards): no card moved.
#   lid_open  the lid is open before a feed, or opens while a card moves (the lid cuts the
#             driver in hardware; the PIO is stopped too): the card in flight goes back under
#             the stack by hand and is fed again; the engine never saw it.
#   reader_silent  the reader does not answer a status request before a feed, or neither a
#             read nor a status request at the hold: the card stays at the hold position and is
#             read again by the next feed.
#   reader_fault   the reader answers its status with a fault (CAMERA, LIGHT).
#   motor_power    the motor supply is under its minimum.
#   double_feed_unresolved  two cards came together and one of them cannot be read: both stay
#             in the path for the operator.
# Every fault is raised before any card of that feed is reported, so the engine's state is
# unchanged and, once the operator has fixed the cause, the same feed is simply retried.
#
# Not faults (the feed returns): a double feed (D blocked longer than timing.double_feed_ms at
# cruise, speed-corrected by the D-to-T time, or two blocked spells, or D clear when T blocks):
# both cards are read (the second after moving the pair on by their measured offset) and go to
# the reject bin, and both codes are returned for the engine's double-feed procedures. A face-up
# card, a short (torn) card: reject bin, returned with the face-up bit (a scrap). A card outside
# the loaded stub (foreign, duplicate, joker): reject bin, returned as read. An unreadable card
# (no valid report after the retries, "??", or under min_confidence): reject bin, returned as
# nothing (the engine feeds the next card); it is listed in Mechanism.rejected.
from hal.readerline import CD, MAX_LEN, RD, REPLY, ST, frame, parse_frame  # noqa: F401
from shoe import cards as C
from shoe.faults import (MechanismFault, JAM, EMPTY, LID_OPEN, READER_SILENT, READER_FAULT,
                         DOUBLE_UNRESOLVED, MOTOR_POWER, MAGAZINE_FEW as FEW, REVERSE_DIVISOR,
                         ROUTE_REJECT)

SILENT = -1      # Reader.read_card: no byte came back at all
UNREADABLE = -2  # Reader.read_card: answers, but no card

ROSC_RANDOMBIT = 0x4006001C  # ROSC RANDOMBIT register (RP2040 datasheet 2.17.8)
# WATCHDOG_CTRL (0x40058000) through its atomic-clear alias (+0x3000): writing bit 30 (ENABLE)
# stops the watchdog, which machine.WDT cannot do (RP2040 datasheet 2.1.2 and 4.7)
WATCHDOG_CTRL_CLR = 0x40058000 + 0x3000
WATCHDOG_ENABLE = 1 << 30


# --------------------------------------------------------------------------------- figures

class Timing:
    """The figures the mechanism needs, from the pin map (hal.pins.PinMap)."""

    def __init__(self, pm):
        fs = pm.feed_stepper
        tm = pm.timing
        path = pm.path
        rd = pm.reader
        b = pm.budget()
        self.spc = fs.steps_per_card
        self.cruise = fs.cruise_steps_per_s
        self.max_rate = fs.max_steps_per_s
        # a card into the carousel goes to no player: it runs faster (MECHANISM.md)
        self.shuffle_rate = fs.shuffle_steps_per_s
        self.shuffle_accel = fs.shuffle_accel_steps_per_s2
        self.accel = fs.accel_steps_per_s2
        spm = b["steps_per_mm"]
        self.spm = spm
        self.double_reach_ms = tm.double_reach_ms
        self.throat_reach_ms = tm.throat_reach_ms
        self.throat_clear_ms = tm.throat_clear_ms
        self.settle_ms = tm.diverter_settle_ms
        self.jam_retries = tm.jam_retries
        self.reverse_steps = tm.jam_reverse_steps
        # double feed: D's blocked length, in steps at cruise (MECHANISM.md: steps are immune
        # to a stall in mid-card); one card is card_steps long
        self.double_steps = tm.double_feed_ms * self.cruise // 1000
        self.min_steps = tm.card_min_ms * self.cruise // 1000
        self.card_steps = int(path.card_length_mm * spm)
        self.dt_steps = int((path.throat_beam_mm - path.double_beam_mm) * spm)  # D to T
        self.hold_after_throat = int(b["hold_after_throat_steps"])
        self.tail_d_steps = int(b["double_tail_steps"])  # a single card's tail clears D
        # from the tail clearing D to the tail leaving the exit nip, plus 2 mm
        self.exit_steps = int((path.exit_nip_mm - path.double_beam_mm + 2) * spm)
        self.exit_t_steps = int((path.exit_nip_mm - path.throat_beam_mm + 2) * spm)  # from T
        self.beam_us = pm.debounce.beam_us
        self.lid_us = pm.debounce.lid_ms * 1000
        self.button_us = pm.debounce.button_ms * 1000
        self.key_us = pm.debounce.key_ms * 1000
        self.read_ms = rd.read_ms
        self.timeout_ms = rd.timeout_ms
        self.retries = rd.retries
        self.min_confidence = rd.min_confidence
        self.max_len = rd.frame.max_len
        self.creep = max(self.cruise // 8, 400)  # homing speed, steps/s


# --------------------------------------------------------------------------------- sensors

class Beam:
    """A debounced input (a beam, the lid, the home flag): `active` follows the pin once the
    new level has held for hold_us. update() returns +1 / -1 on a confirmed edge, else 0."""

    def __init__(self, pin, level, hold_us, clock):
        self.pin = pin
        self.level = level
        self.hold = hold_us
        self.clock = clock
        self.active = pin.value() == level
        self.t_raw = None

    def raw(self):
        return self.pin.value() == self.level

    def update(self, now):
        a = self.pin.value() == self.level
        if a == self.active:
            self.t_raw = None
            return 0
        if self.t_raw is None:
            self.t_raw = now
            if self.hold > 0:
                return 0
        if self.clock.ticks_diff(now, self.t_raw) < self.hold:
            return 0
        self.active = a
        self.t_raw = None
        return 1 if a else -1

    def settle(self):
        """Take the pin's level as it is now (no debounce): before a move starts."""
        self.active = self.raw()
        self.t_raw = None


class Beams:
    def __init__(self, double, throat, magazine, home, lid):
        self.double = double      # D: blocked = active
        self.throat = throat      # T
        self.magazine = magazine  # active = cards in the magazine
        self.home = home          # pick roller at home
        self.lid = lid            # active = lid open


# --------------------------------------------------------------------------------- reader

class Reader:
    """The card reader on a UART: '$RD,<seq>' asks for the card at the hold position, the reader
    answers '$CD,<seq>,<card>,<face_up>,<confidence>'. A report with a bad CRC or another seq
    is dropped; no valid report within timeout_ms repeats the request (retries). '$ST' (no
    fields) asks for the reader's status, answered by '$ST,<code>'; the reader also sends it by
    itself after power-up. `wait` (given per call) runs while an answer is awaited."""

    def __init__(self, uart, clock, timeout_ms, retries, min_confidence, max_len=MAX_LEN):
        self.uart = uart
        self.clock = clock
        self.timeout_ms = timeout_ms
        self.retries = retries
        self.min_confidence = min_confidence
        self.max_len = max_len
        self.seq = 0
        self.buf = bytearray()
        self.alive = None      # None: not asked yet; True: answered last time; False: silent
        self.status = None     # the last status code heard
        self.heard = False     # bytes arrived since the last request
        self.frames_bad = 0
        self.back = None       # the last report's back field (revision C's reader board)

    def _send(self, body):
        self._drain()
        self.buf = bytearray()
        self.heard = False
        self.uart.write(frame(body))

    def _drain(self):
        n = self.uart.any()
        if n:
            data = self.uart.read(n)
            if data:
                self.heard = True
                self.buf.extend(data)
                if len(self.buf) > 4 * self.max_len and b"\n" not in self.buf:
                    self.buf = bytearray()  # noise with no line end: drop it

    def _frames(self):
        """Complete frames received so far (bad ones counted and dropped)."""
        self._drain()
        out = []
        while True:
            i = self.buf.find(b"\n")
            if i < 0:
                return out
            line = self.buf[:i]
            self.buf = self.buf[i + 1:]
            if line and line[-1] == 0x0D:
                line = line[:-1]
            f = parse_frame(line, self.max_len)
            if f is None:
                self.frames_bad += 1
                continue
            if f[0] == ST and len(f) == 2:
                self.status = f[1]
                self.alive = True
            out.append(f)

    def _await(self, match, wait):
        t0 = self.clock.ticks_ms()
        while True:
            for f in self._frames():
                if match(f):
                    return f
            if self.clock.ticks_diff(self.clock.ticks_ms(), t0) >= self.timeout_ms:
                return None
            wait()

    def read_card(self, wait):
        """(code, face_up, confidence), UNREADABLE or SILENT. (_await's loop in line: wait()
        runs at the bottom of the shoe's deepest stack, Link.idle's comment.)"""
        heard = False
        for _ in range(self.retries + 1):
            self.seq = (self.seq + 1) & 0xFF
            seq = "%02X" % self.seq
            self._send(RD + "," + seq)
            f = None
            t0 = self.clock.ticks_ms()
            while f is None:
                for g in self._frames():
                    if g[0] == CD and len(g) in REPLY[RD][2] and g[1] == seq:
                        f = g
                        break
                else:
                    if self.clock.ticks_diff(self.clock.ticks_ms(), t0) >= self.timeout_ms:
                        break
                    wait()
            heard = heard or self.heard
            if f is None:
                continue
            self.alive = True
            self.back = f[5] if len(f) == 6 else None  # two decks: the back (hal/decks_rp2.py)
            try:
                conf = int(f[4])
                code = C.parse(f[2])
            except ValueError:
                return UNREADABLE  # '??' or a name the reader should not send
            if conf < self.min_confidence or f[3] not in ("0", "1"):
                return UNREADABLE
            return (code, f[3] == "1", conf)
        if not heard:
            self.alive = False
            return SILENT
        return UNREADABLE

    def ask(self, name, arg, wait):
        """A request of the board's with one field (hal/readerline.py's REPLY: $MG, $PK, $EB):
        its reply's fields, echoing arg, or None if no good one came (after the retries)."""
        reply, counts = REPLY[name][1], REPLY[name][2]
        for _ in range(self.retries + 1):
            self._send(name + "," + arg)
            f = self._await(lambda f: f[0] == reply and len(f) in counts and f[1] == arg, wait)
            if f is not None:
                self.alive = True
                return f
        return None

    def ping(self, wait):
        """The reader's status code ('READY', ...), or None if it does not answer."""
        for _ in range(self.retries + 1):
            self._send(ST)
            f = self._await(lambda f: f[0] == ST and len(f) == 2, wait)
            if f is not None:
                return f[1]
        self.alive = False
        return None


# --------------------------------------------------------------------------------- diverter

class Diverter:
    """The diverter servo on a 50 Hz PWM: one pulse width per route."""

    def __init__(self, pwm, pulse_us, settle_ms, clock):
        self.pwm = pwm
        self.pulse_us = pulse_us  # indexed by route: output, burn, reject
        self.settle_ms = settle_ms
        self.clock = clock
        self.route = None
        self.t = clock.ticks_ms()

    def set(self, route):
        if route != self.route:
            self.pwm.duty_ns(self.pulse_us[route] * 1000)
            self.route = route
            self.t = self.clock.ticks_ms()

    def settled(self):
        return self.clock.ticks_diff(self.clock.ticks_ms(), self.t) >= self.settle_ms


# --------------------------------------------------------------------------------- USB port

class UsbPort:
    """The protocol on USB CDC: reads never block (a poller says when a byte is there). Every
    read feeds the watchdog, so a main loop that stops polling the line resets the Pico."""

    def __init__(self, inp, out, poller, tick=None, on_close=None):
        self.inp = inp
        self.out = out
        self.poller = poller
        self.tick = tick
        self.on_close = on_close

    def close(self):
        """Maintenance: the loop has ended and the REPL takes the line back."""
        self.tick = None
        if self.on_close is not None:
            self.on_close()
            self.on_close = None

    def read_into(self, buf):
        if self.tick is not None:
            self.tick()
        n = 0
        size = len(buf)
        while n < size:
            # a byte waiting? ipoll, not poll: poll(0) returns a new list at every call (the
            # idle loop's every poll), ipoll the poller itself, yielding a tuple it owns. In
            # line, not a function: the mechanism's waits read the line at the bottom of the
            # shoe's deepest stack (Link.idle)
            for _ in self.poller.ipoll(0):  # (a method call: no bound method is made)
                break
            else:
                break
            b = self.inp.read(1)
            if not b:
                break
            buf[n] = b[0]
            n += 1
        return n

    def write(self, data):
        mv = memoryview(data)
        while len(mv):
            k = self.out.write(mv)
            if k is None:
                k = len(mv)
            mv = mv[k:]


# --------------------------------------------------------------------------------- mechanism

class Cycle:
    """What the sensors saw of the card(s) of one feed, in turn coordinates."""

    def __init__(self):
        self.d_on = None    # D blocked since (an open spell)
        self.spells = []    # (on, off) of D's finished blocked spells
        self.d_seen = False
        self.t_on = None    # T blocked at
        self.d_at_t = None  # the start of D's spell when T blocked (speed reference)
        self.broken = False  # D was clear when T blocked


class Held:
    """The card (or pair) stopped at the hold position, and the verdict on it. D's blocked
    length is measured in steps: scaled by the nominal D-to-T distance over the measured one
    (worn or slipping rollers), or, after a jam retry before T (where the card stood while the
    motor turned), counted from T's edge on: length = (D clears - T blocks) + D-to-T."""

    def __init__(self, cyc, t, slipped=False):
        spells = list(cyc.spells)
        if cyc.d_on is not None:  # still blocking D at the hold: longer than anything single
            spells.append((cyc.d_on, cyc.d_on + 2 * t.card_steps))
        num, den = 1, 1
        if cyc.t_on is not None and cyc.d_at_t is not None:
            dt = cyc.t_on - cyc.d_at_t
            if t.dt_steps // 2 < dt < t.dt_steps * 2:
                num, den = t.dt_steps, dt  # the card's real speed vs the motor's
        lengths = []
        for on, off in spells:
            if slipped and cyc.d_at_t == on and off > cyc.t_on:
                lengths.append(off - cyc.t_on + t.dt_steps)
            else:
                lengths.append((off - on) * num // den)
        self.lengths = lengths
        self.spells = len(spells)
        self.broken = cyc.broken
        longest = max(lengths) if lengths else 0
        self.double = self.spells > 1 or longest > t.double_steps
        self.short = not self.double and (self.spells == 0 or longest < t.min_steps)
        if self.spells > 1:  # a gap between them: lead to lead
            self.offset = spells[-1][0] - spells[0][0]
        else:  # shingled: the pair's length less one card
            self.offset = max(0, longest - t.card_steps) if self.double else 0
        self.tail = spells[-1][1] if spells else t.tail_d_steps  # the last tail left D here
        self.first = ()     # the first card's read, for a double


class Mechanism:
    """The feed mechanism. stepper: hal.stepper_pio.Stepper; beams: Beams; reader: Reader;
    diverter: Diverter; clock: ticks_ms/ticks_us/ticks_diff/sleep_ms; t: Timing; tick: feeds the
    watchdog; motor_volts: returns the motor supply in volts (or None: not checked)."""

    double_route = ROUTE_REJECT
    fired = 0  # faults the simulator injected (hal/simmech.py counts them; telemetry): none here

    def __init__(self, stepper, beams, reader, diverter, clock, t, tick=None, motor_volts=None,
                 min_volts=0):
        self.st = stepper
        self.b = beams
        self.reader = reader
        self.div = diverter
        self.clock = clock
        self.t = t
        self.tick = tick
        self.motor_volts = motor_volts
        self.min_volts = min_volts
        # SimMech's interface
        self.misrouted = False   # a servo has no feedback: never known to be misrouted
        self.feeds = 0
        self.idle = None
        self.before = None
        self.delivered = []
        # the hardware's state
        self.expect = None       # the stub's cards as the engine loaded them (None: unknown)
        self.unread = 0          # cards that left since load() without a readable report
        self.held = None         # Held: a card waiting at the hold position after a fault
        self.cyc = None
        self.homed = False
        self.turn = 0            # steps into the current card cycle (net of reversals)
        self.origin = 0          # self.turn where the current move started
        self.rejected = []       # (reason, code or None) of cards sent to the reject bin
        self.notes = []          # the last few things that happened: (what, detail)
        self.last_route = None
        self.last = None         # the last feed's Held (lengths, double...)
        self.rate = None         # the card's speed (None: the cruise; a reshuffle's: faster)
        self.acc = None          # ... and its acceleration (None: the stepper's)
        self.retries = 0         # jam retries during the last feed
        self.recovered = 0       # feeds whose jams the reverse-and-retry cleared (since boot)

    # ---------------------------------------------------------------- SimMech's interface

    def next_deck(self):
        """The two-deck shoe's next deck (SimMech.next_deck): no gather tray is fitted on the
        Pico's revisions yet (hardware/SHUFFLER.md "Two decks"), so every hand shuffles its
        own deck."""
        return None

    def gather(self, cards, rng):
        """SimMech.gather: nothing to load without a gather tray."""

    def next_status(self):
        """SimMech.next_status: no next deck."""
        return None

    def load(self, stub, plan=None):
        """The stub, as SimMech.load; the plan of a reshuffle is for a carousel
        (hal.carousel_rp2.ShufflingMechanism): without one the stub's order is not known."""
        self.expect = set(c & C.CODE for c in stub)
        self.unread = 0

    def _left(self):
        """Cards the magazine should still hold (None: not known)."""
        if self.expect is None:
            return None
        return len(self.expect) - self.unread

    def begin_step(self):
        self.feeds = 0

    def between(self):
        """The link's idle time between commands (two decks load there: hal/decks_rp2.py)."""

    def pending(self):
        return 0

    def arm(self, kind, at=0, code=0):
        raise ValueError("simulated faults exist only in the simulator")

    def inspect(self):
        """After a power cut: [] when a card is still in the path (the feed under way did not
        deliver it), None when the path is clear (without an output sensor the shoe cannot tell
        whether the card left or never moved)."""
        if self.b.double.raw() or self.b.throat.raw():
            return []
        return None

    def deliver(self, codes, stub):
        codes = [c for c in codes if c & C.CODE in stub]
        self.delivered = codes
        taken = [c & C.CODE for c in codes]
        self.expect = set(c for c in stub if c not in taken)
        self.unread = 0

    def feed(self, route):
        self.feeds += 1
        self.misrouted = False
        if self.delivered:  # found at the output after a power cut: placed now, nothing moves
            if self.before is not None:
                self.before(route)
            return [self.delivered.pop(0)]
        self.retries = 0
        self._ready()
        if self.before is not None:
            self.before(route)  # the shoe commits what happened so far before a card moves
        self.st.enable(True)
        try:
            h = self.held
            if h is None:
                h = self._to_hold()
            out = self._read_and_eject(h, route)
        except MechanismFault:
            self._safe()
            raise
        self.st.enable(False)
        if self.retries:
            self.recovered += 1
        return out

    # ---------------------------------------------------------------- checks before a feed

    def _ready(self):
        b = self.b
        self._tick()
        for beam in (b.double, b.throat, b.magazine, b.home, b.lid):
            beam.settle()
        if b.lid.active:
            self.held = None
            raise MechanismFault(LID_OPEN, "the lid is open: close it, then feed again")
        if self.motor_volts is not None:
            v = self.motor_volts()
            if v < self.min_volts:
                raise MechanismFault(MOTOR_POWER, "the motor supply reads %.1f V (at least %.1f V "
                                     "needed): check the 24 V supply" % (v, self.min_volts))
        if self.held is not None and not (b.throat.active or b.double.active):
            self.held = None  # the held card was taken out
        if self.held is None and (b.double.active or b.throat.active):
            raise MechanismFault(JAM, "a card is in the path: open the lid, take it out, put it "
                                      "back under the stack, close the lid and feed again")
        left = self._left()
        if self.held is None and not b.magazine.active and (left is None or left > FEW):
            raise MechanismFault(EMPTY, "the magazine is empty: load the cards, then feed again")
        if self.reader.alive is not True:
            status = self.reader.ping(self._wait)
            if status is None:
                raise MechanismFault(READER_SILENT, "the card reader does not answer: check its "
                                                    "cable and power, then feed again")
            if status != "READY":
                self.reader.alive = None  # asked again before the next feed
                raise MechanismFault(READER_FAULT, "the card reader reports %s" % status)
        if not self.homed:
            self._home()

    # ---------------------------------------------------------------- motion

    def _tick(self):
        if self.tick is not None:
            self.tick()

    def _note(self, what, detail=None):
        self.notes.append((what, detail))
        if len(self.notes) > 16:
            self.notes.pop(0)

    def _run(self, steps, forward, watch=None, rate=None, accel=None):
        """Move `steps` steps, tracking the beams (and the card cycle, if one is under way).
        watch(ms since the start, D's edge, T's edge) may return a reason to stop (a jam),
        which is then returned. The lid opening stops everything."""
        st = self.st
        b = self.b
        clock = self.clock
        sign = 1 if forward else -1
        self.origin = origin = self.turn
        if steps <= 0:
            return None
        st.start(steps, forward, rate, accel)
        t0 = clock.ticks_ms()
        cyc = self.cyc
        while True:
            self._tick()
            moving = st.pump()
            self.turn = origin + sign * st.position()
            now = clock.ticks_us()
            if b.lid.raw():  # the driver is already off (hardware); stop the steps too
                self.turn = origin + sign * st.halt()
                self.homed = False
                self.held = None
                raise MechanismFault(LID_OPEN, "the lid was opened while a card was moving: take "
                                     "the card out of the path, put it back under the stack, "
                                     "close the lid and feed again")
            ed = b.double.update(now)
            et = b.throat.update(now)
            if cyc is not None and (ed or et):
                self._track(cyc, forward, ed, et)
            if watch is not None:
                why = watch(clock.ticks_diff(clock.ticks_ms(), t0), ed, et)
                if why is not None:
                    self.turn = origin + sign * st.halt()
                    return why
            if not moving:
                self.turn = origin + sign * st.position()
                return None

    def _track(self, cyc, forward, ed, et):
        """D's blocked spells and T's arrival, in turn coordinates; a reverse undoes what it
        moves back over."""
        if ed > 0:
            if forward:
                cyc.d_on = self.turn
                cyc.d_seen = True
            elif cyc.spells:  # a tail came back under D: that spell is open again
                cyc.d_on = cyc.spells.pop()[0]
        elif ed < 0:
            if forward and cyc.d_on is not None:
                cyc.spells.append((cyc.d_on, self.turn))
                cyc.d_on = None
            elif not forward:  # a lead went back out of D: that spell never happened
                cyc.d_on = None
        if et > 0 and forward and cyc.t_on is None:
            cyc.t_on = self.turn
            if self.b.double.active and cyc.d_on is not None:
                cyc.d_at_t = cyc.d_on
            else:
                cyc.broken = True
            self.st.retarget(cyc.t_on + self.t.hold_after_throat - self.origin)
        elif et < 0 and not forward and cyc.t_on is not None:
            cyc.t_on = None  # the lead went back out of the throat
            cyc.d_at_t = None
            cyc.broken = False

    def _to_hold(self):
        t = self.t
        self.cyc = cyc = Cycle()
        for beam in (self.b.double, self.b.throat):
            beam.settle()
        while True:
            why = self._pick(cyc)
            if why is None:
                break
            if not cyc.d_seen and not self.b.magazine.raw() and (
                    not self._left() or self.retries >= t.jam_retries):
                # nothing came and the beam says the magazine is empty (with a few cards left
                # the beam reads clear too: those get the misfeed retries first)
                self.cyc = None
                self._home(t.cruise // 2)
                raise MechanismFault(EMPTY, "no card came out and the magazine beam is clear: "
                                            "load the cards, then feed again")
            self.retries += 1
            self._note(JAM, why)
            if self.retries > t.jam_retries:
                self.cyc = None
                self.homed = False
                raise MechanismFault(JAM, "%s, %d times: open the lid, clear the path, put the "
                                          "card back under the stack, close the lid and feed "
                                          "again" % (why, self.retries))
            if cyc.d_seen:
                self._reverse()  # back the card out of where it stuck, then on again
            else:  # a misfeed: nothing left the gate; back to home, the pick arc tries again
                self._home(t.cruise // 2)
        h = self.held = self.last = Held(cyc, t, self.retries > 0)
        self.cyc = None
        return h

    def _pick(self, cyc):
        """Forward until the card stops at the hold position. None, or why it jammed."""
        t = self.t

        def watch(ms, ed, et):
            if not cyc.d_seen and ms > t.double_reach_ms:
                return "no card reached the double-feed beam within %d ms" % t.double_reach_ms
            if cyc.d_seen and cyc.t_on is None and ms > t.throat_reach_ms:
                return "the card did not reach the throat within %d ms" % t.throat_reach_ms
            return None

        if cyc.t_on is not None:
            steps = cyc.t_on + t.hold_after_throat - self.turn
        else:
            steps = t.spc - self.turn
        why = self._run(steps, True, watch, self.rate, self.acc)
        if why is None and cyc.t_on is None:
            return "the card did not reach the throat"
        return why

    def _reverse(self):
        self._run(self.t.reverse_steps, False, None, self.t.cruise // REVERSE_DIVISOR)

    def _home(self, rate=None):
        """Back (the safe way: the pick arc pushes the stack against the magazine's wall) until
        the pick roller's home flag, at most about one turn."""
        b = self.b
        t = self.t
        b.home.settle()
        if not b.home.active:
            saved = self.cyc
            self.cyc = None
            self.st.enable(True)
            steps = (self.turn if 0 < self.turn < t.spc else t.spc) + t.spc // 8
            self._run(steps, False, lambda ms, ed, et: "home" if b.home.raw() else None,
                      rate or t.creep)
            self.cyc = saved
            b.home.settle()
            if not b.home.active:
                self._safe()
                raise MechanismFault(JAM, "the pick roller does not find its home position: "
                                          "check the pick_home flag and the belt")
        self.turn = 0
        self.homed = True

    def _safe(self):
        """Stop safe: steps stopped, driver off, diverter to reject. A card held at the read
        position stays where it is (the roller's position stays known); after a jam or a move
        cut short, the roller is homed again before the next card."""
        if self.st.moving():
            self.st.halt()
            self.homed = False
        self.st.enable(False)
        self.div.set(ROUTE_REJECT)

    # ---------------------------------------------------------------- read and eject

    def _wait(self):
        """While the motor stands still: keep the link and the watchdog going."""
        self._tick()
        if self.b.lid.raw():
            self.held = None
            self.homed = False
            raise MechanismFault(LID_OPEN, "the lid was opened during a feed: take the card out of "
                                           "the path, put it back under the stack, close the lid "
                                           "and feed again")
        if self.idle is not None:
            self.idle()
        self.clock.sleep_ms(1)

    def _read(self):
        r = self.reader.read_card(self._wait)
        if r == SILENT:
            if self.reader.ping(self._wait) is None:
                raise MechanismFault(READER_SILENT, "the card reader stopped answering: the card "
                                     "waits at the reader; check the reader's cable and power, "
                                     "then feed again")
            r = UNREADABLE
        return r

    def _read_and_eject(self, h, route):
        reject = h.double or h.short or h.broken
        self.div.set(ROUTE_REJECT if reject else route)
        r = self._read()
        if h.double:
            if not h.first:
                if not isinstance(r, tuple):
                    self.held = None
                    raise MechanismFault(DOUBLE_UNRESOLVED, "two cards came together and the first "
                                         "cannot be read: take both out of the path, put them back "
                                         "under the stack and feed again")
                h.first = r
                self._run(h.offset, True)  # the second card's lead to the read position
                r = self._read()
            if not isinstance(r, tuple):
                self.held = None
                raise MechanismFault(DOUBLE_UNRESOLVED, "two cards came together and the second "
                                     "cannot be read: take both out of the path, put them back "
                                     "under the stack and feed again")
            reads = [h.first[0] | (C.UP if h.first[1] else 0), r[0] | (C.UP if r[1] else 0)]
            final = self.double_route
            self._note("double_feed", h.lengths)
            for c in reads:
                self.rejected.append(("double_feed", c))
        elif not isinstance(r, tuple):
            final = ROUTE_REJECT
            reads = []
            self.unread += 1
            self.rejected.append(("unreadable", None))
        else:
            code, up, _ = r
            if up or h.short or h.broken:
                final = ROUTE_REJECT
                reads = [code | C.UP]
                self.rejected.append(("face_up" if up else "short", code))
            elif code == C.JOKER or (self.expect is not None and code not in self.expect):
                final = ROUTE_REJECT
                reads = [code]
                self.rejected.append(("foreign", code))
            else:
                final = route
                reads = [code]
        if len(self.rejected) > 16:
            self.rejected.pop(0)
        self.div.set(final)
        while not self.div.settled():
            self._wait()
        self._eject(h)
        self.held = None
        self.last_route = final
        if self.expect is not None:
            for c in reads:
                self.expect.discard(c & C.CODE)
        return reads

    def _eject(self, h):
        """The rest of the turn. The card's end is tracked by the sensors, not assumed: from
        the tail leaving D (exit_steps) and, last, from the tail leaving T (exit_t_steps), so
        a card that slipped in a jam still gets all the way out; while T stays blocked the move
        goes on, and T must clear within throat_clear_ms (longer by a pair's offset). Then the
        pick roller goes back to home if the card took it past."""
        t = self.t
        b = self.b
        st = self.st
        extra = max(0, h.tail - t.tail_d_steps) * 1000 // t.cruise
        window = t.throat_clear_ms + extra
        b.double.settle()
        if b.double.active:  # a pair still under D: its tail decides
            end = [t.spc + t.card_steps // 2]
        else:
            end = [max(t.spc, h.tail + t.exit_steps)]
        limit = t.spc + t.card_steps
        tries = 0
        while True:
            b.throat.settle()

            def watch(ms, ed, et):
                if ed < 0:  # a pair's tail leaves D
                    end[0] = max(t.spc, self.turn + t.exit_steps)
                    st.retarget(end[0] - self.origin)
                if et < 0:  # the tail leaves T: out of the exit nip exit_t_steps later
                    end[0] = max(t.spc, self.turn + t.exit_t_steps)
                    st.retarget(end[0] - self.origin)
                if b.throat.active:
                    if ms > window:
                        return "the card did not clear the throat within %d ms" % window
                    if st.total - st.position() < 600 and end[0] < limit:  # keep going
                        end[0] = min(limit, self.turn + 800)
                        st.retarget(end[0] - self.origin)
                return None

            why = self._run(end[0] - self.turn, True, watch, self.rate, self.acc)
            if why is None and not b.throat.active:
                break
            why = why or "the card is still in the throat"
            tries += 1
            self.retries += 1
            self._note(JAM, why)
            if tries > t.jam_retries:
                self.homed = False
                raise MechanismFault(JAM, "%s, %d times: open the lid, take the card out of the "
                                          "throat, put it back under the stack, close the lid and "
                                          "feed again" % (why, tries))
            self._reverse()
        self.turn -= t.spc
        b.home.settle()
        if self.turn != 0 or not b.home.active:
            self.homed = False
            self._home()
