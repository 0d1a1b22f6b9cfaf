# Revision D's pipelined card path on the Pico (hardware/SHUFFLER.md "Revision D"): the loop that
# runs the stages of hal/fastpath.py's schedule at once on different cards, imported by
# hal/loader_rp2.py at a shoe's first reshuffle (only when the pin map's loader is fitted).
#
# One loop drives both steppers (each on its PIO state machine: the loop keeps their FIFOs
# topped up) and times the servos: while the carousel turns to card k's pocket, card k-1 falls
# from its escrow into its own, and the feed picks card k+1, which the reader reads on the fly.
# - The feed never stops while loading: one move of n card cycles at the carousel's pace
#   (fastpath's cycle_us: the feed's speed rounded down to the PIO's grain, so it never
#   outruns the ring), the pick roller home again at its end.
# - Each card's lead is placed by the throat beam (as revision B stops at the hold position a
#   fixed step count after it): the reader's strobed read is requested as the card's index
#   corner crosses the window (`$RD`, the same request as a held card's; the reader board
#   strobes its LEDs on it), and its answer is awaited without stopping anything.
# - Once card k is read, the flipper is set to the station its pocket comes under (the nearer
#   one, from where the ring goes for card k-1). The ring's move for card k starts when card k
#   is read and card k-1 is in its pocket, and takes fastpath's move_bound_us whatever its
#   length; the latch is commanded lead_us + latch_us before that padded end (so the card meets
#   a pocket that has stopped, whatever the plan), closed again when the card is in at the
#   latest (a servo frame and in_us after), and the next move starts from that instant.
# Every deadline is counted from the one before it on the schedule, not from when the loop saw
# it pass: the loop's own jitter (a tab edge, an I2C write) does not add up, and the time per
# card depends on the card's number alone (tests/mp_loader_test.py measures it over plans).
#
# A card the pipeline cannot load stops it: the reader's answer comes when the card is past the
# diverter (its tail leaves the exit nip 1.7 mm of travel before the 60 ms read ends), so a card
# read face up, unreadable, two at once, or not of the stub goes into its escrow and stays on
# its closed latch; the feed stops, the cards already on a latch go into their pockets, and the
# fault asks the operator for the cards in the path, the chute and the escrows (face down on top
# of the magazine); the next feed carries on with the cards still to load. So do a card that does
# not come (the magazine empty: `empty`, with the count still needed; else a misfeed: `jam`),
# the lid, a silent reader, and the carousel's own faults.
#
# The escrows' beams (hal/loader_board.py's $EB, on the reader board) are asked without stopping
# the loop: when a latch closes again after its card fell, the request goes out on the reader's
# line and its answer is gathered byte by byte with the reads' (both lines parsed in place), the
# ring's next move starting meanwhile as the schedule says, so a card's time is the same whatever
# the answer took. The answer must be in before the next latch lets go (or within the reader's
# timeout, for the last card): a card still seen stops the loading with escrow_caught naming it
# and its escrow (it is counted out of its pocket again), a beam the board cannot tell stops it
# with reader_fault, no answer by the deadline with reader_silent (a card left unseen would fall
# into the next card's pocket).
#
# No allocation in the per-card loop: the state of the cards in flight is in lists made once
# (four slots: a card is read, one falls, one is on its latch, one is picked), the reader's
# answer is gathered in a bytearray and parsed in place (its CRC over the buffer's range), the
# request is a bytearray rewritten in place, the times are small ints (ticks_us).
from crc import crc16_range
from hal.carousel_rp2 import LOST_STEPS, ROUTE_SHUFFLE
from hal.loader_board import beam, silent
from hal.readerline import CD, EB, RD, frame
from hal.stepper_pio import GAP, SEG, STEP_HZ, half_for
from shoe import cards as C
from shoe.compat import const
from shoe.faults import EMPTY, JAM, LID_OPEN, READER_SILENT, MechanismFault

ARRIVE_US = const(1000)  # the margin on a card's arrival at its latch
RING = const(4)          # cards in flight at most (a power of two: the slots are i & 3)
HEX = b"0123456789ABCDEF"
FLAGS = ("0", "1", "?")  # a 0/1/? field: the back (Reader.back, hal/decks_rp2.py), a beam
# a card's state (the slots' `st`)
PICKED = const(0)        # its lead passed the double-feed beam
ASKED = const(1)         # its read is requested
READ = const(2)          # read, to be loaded
GONE = const(3)          # in its pocket
BAD = const(4)           # it cannot be loaded (why: the slot's `why`)
# why a card stops the pipeline
W_UNREAD = const(1)
W_UP = const(2)
W_DOUBLE = const(3)
W_FOREIGN = const(4)
W_SILENT = const(5)
WHY = ("", "unreadable", "face up", "two cards at once", "not of the stub", "no answer from the "
       "reader")

__all__ = ["Pipeline"]


class Pipeline:
    """mech: hal.loader_rp2.LoaderMechanism (its feed stepper, beams, reader, diverter, clock,
    Timing); car: its StationCarousel (its stepper, tab sensor, escrows, LoaderTiming lt, and
    fast, the hal.fastpath.FastPath)."""

    def __init__(self, mech, car):
        t = mech.t
        fp = car.fast
        self.m = mech
        self.car = car
        self.spc = t.spc
        # the feed's pace: the card cycle (the ring's), and slow enough that the flipper is set
        # before a read card reaches it: the read, the reader's UART both ways, a servo frame
        # and its throw, between the strobe and the card's lead at the flipper (hal/fastpath.py
        # leaves the UART out: 1.2 ms of margin for its 2.9 ms). Rounded to the PIO's grain
        # (a step's period h cycles of 0.5 us, twice: high and low), never faster than asked
        lt = car.lt
        rate = fp.spc * 1000000 // fp.cycle_us
        h = half_for(rate)
        need = t.read_ms * 1000 + lt.link_us + lt.frame_us + lt.latch_us
        span = int(fp.steps_flip - fp.steps_read)
        while h * 2 * 1000000 // STEP_HZ * span < need:
            h += 1
        self.rate = (STEP_HZ + 2 * h - 1) // (2 * h)  # (half_for of it is h again)
        self.step_us = h * 2 * 1000000 // STEP_HZ     # a step's period, us
        # the feed motor's own corner speed on the loading route (hardware/fastpath.json's
        # feed_steps_per_s), over the pin map's max_steps_per_s for the dealing route
        self.max_rate = int(fp.feed_max)
        self.accel = t.shuffle_accel
        # (in the feed's steps: from the lead at the double-feed beam D, beyond the take-away
        # nip, a card moves with the rollers)
        self.read_after_t = t.hold_after_throat - int(2 * t.spm)  # the corner over the window
        self.out_after_d = t.card_steps + t.exit_steps  # the lead at D -> the tail out of the nip
        self.double_steps = t.double_steps
        self.reach_d = t.tail_d_steps - t.card_steps + t.spc // 8  # D must block by then
        # the lead at D -> the lead at its escrow's latch (the chute's card keeps the path's
        # speed: fastpath's steps_at)
        self.escrow_after_d = int(fp.steps_escrow) - (t.tail_d_steps - t.card_steps)
        self.stuck_steps = 2 * t.card_steps                     # T blocked longer: a jam
        self.bound_us = fp.move_bound_us
        self.cmd_us = fp.move_bound_us - lt.lead_us - lt.latch_us   # the latch's command
        self.open_us = lt.latch_us + lt.frame_us                    # ... to its latest release
        self.fall_us = lt.in_us                                     # release -> the card in
        self.timeout_us = t.timeout_ms * 1000
        # the cards in flight, slot i & 3 for card i
        self.st = [0] * RING
        self.code = [0] * RING
        self.why = [0] * RING
        self.d_on = [0] * RING      # feed position when its lead blocked D
        self.t_on = [0] * RING      # ... T
        self.asked = [0] * RING     # ticks_us of the read request
        self.station = [0] * RING
        self.target = [0] * RING    # the pocket at station 0 when its pocket is under its station
        self.req = bytearray(frame(RD + ",00"))  # seq and CRC rewritten in place (_ask)
        # the escrows' beams, when the reader board has them (hal/loader_rp2.py's fit): each
        # station's $EB request made once
        self.beams = car.esc.clear is not None
        self.eb_req = [frame("%s,%d" % (EB, j)) for j in range(lt.stations)]
        self.cd = CD.encode()
        self.eb = EB.encode()
        self.eb_j = -1              # the escrow whose beam's answer is awaited (-1: none)
        self.eb_code = 0            # ... the card that fell from it
        self.eb_at = 0              # ... when asked (ticks_us)
        self.eb_seen = -1           # its answer: 0 clear, 1 a card, 2 cannot tell (-1: none yet)
        self.eb_shared = False      # a later card may lie on that latch when the board looks
        # the board reads the beam when it takes the request: at the latest after a read under
        # way and both lines' bytes (in the feed's steps)
        self.look_steps = (t.read_ms * 1000 + lt.link_us) // self.step_us + 1
        self.rx = bytearray(t.max_len + 8)
        self.one = bytearray(1)
        self.ranks = C.RANKS.encode()
        self.suits = C.SUITS.encode()
        # the answer parsed in place
        self.a_seq = 0
        self.a_code = 0
        self.a_up = 0
        self.a_conf = 0
        self.a_back = -1
        self.cards = 0              # cards loaded by the last run
        self.last_us = 0            # the last run's time, from its first pick to its last card in

    # ---------------------------------------------------------------- the reader, on the fly

    def _ask(self, i):
        """Request card i's read (the reader strobes as the request arrives)."""
        m = self.m
        r = m.reader
        r.seq = (r.seq + 1) & 0xFF
        q = self.req
        q[4] = HEX[r.seq >> 4]
        q[5] = HEX[r.seq & 15]
        crc = crc16_range(q, 1, 6)
        q[7] = HEX[crc >> 12]
        q[8] = HEX[(crc >> 8) & 15]
        q[9] = HEX[(crc >> 4) & 15]
        q[10] = HEX[crc & 15]
        self._listen()  # what came before: a beam's answer taken, an old read's dropped
        r.uart.write(q)
        s = i & 3
        self.asked[s] = m.clock.ticks_us()
        self.st[s] = ASKED
        self.asking = i

    def _hex(self, at, n):
        v = 0
        b = self.rx
        for k in range(at, at + n):
            c = b[k]
            d = c - 48 if 48 <= c <= 57 else c - 55 if 65 <= c <= 70 else -1
            if d < 0:
                return -1
            v = v * 16 + d
        return v

    def _parse(self, n):
        """The line rx[0:n] (its newline dropped): True for a well-formed $CD answer to the
        request under way, its fields in a_code (-1: unreadable), a_up, a_conf, a_back; an $EB
        answer for the beam awaited sets eb_seen."""
        b = self.rx
        star = n - 5
        if n < 10 or b[0] != 36 or b[star] != 42 or b[3] != 44:
            return False
        if self._hex(star + 1, 4) != crc16_range(b, 1, star):
            self.m.reader.frames_bad += 1
            return False
        if b[1] == self.eb[0] and b[2] == self.eb[1]:  # '$EB,<j>,<seen>'
            if n == 12 and b[5] == 44 and b[4] - 48 == self.eb_j:
                c = b[6]
                self.eb_seen = c - 48 if c in (48, 49) else 2
            return False
        if n < 12 or b[1] != self.cd[0] or b[2] != self.cd[1]:
            return False  # not '$CD,'
        if self._hex(4, 2) != self.m.reader.seq or b[6] != 44:
            return False
        r = b[7]
        s = b[8]
        code = -1
        if r == 74 and s == 107:  # 'Jk'
            code = C.JOKER
        else:
            for k in range(13):
                if self.ranks[k] == r:
                    for j in range(4):
                        if self.suits[j] == s:
                            code = k * 4 + j
        if b[9] != 44 or b[11] != 44 or b[10] not in (48, 49):
            code = -1
        self.a_up = b[10] - 48
        conf = 0
        k = 12
        while k < star and 48 <= b[k] <= 57:
            conf = conf * 10 + b[k] - 48
            k += 1
        self.a_conf = conf
        self.a_back = -1
        if k + 1 < star and b[k] == 44:
            c = b[k + 1]
            self.a_back = c - 48 if c in (48, 49) else 2
        self.a_code = code
        return True

    def _listen(self):
        """Bytes of the answer, as they come: True once the whole answer is in (parsed)."""
        u = self.m.reader.uart
        one = self.one
        b = self.rx
        while u.any():
            u.readinto(one, 1)
            c = one[0]
            if c == 10:
                n = self.n_rx
                if n and b[n - 1] == 13:
                    n -= 1
                self.n_rx = 0
                if self._parse(n):
                    return True
            elif self.n_rx < len(b):
                b[self.n_rx] = c
                self.n_rx += 1
            else:
                self.n_rx = 0  # noise with no line end
        return False

    def _judge(self, i, expect):
        """Card i's answer: READ with its code, or BAD with why."""
        s = i & 3
        m = self.m
        code = self.a_code
        why = self.why[s]
        if why == 0:
            if code < 0 or self.a_conf < m.t.min_confidence:
                why = W_UNREAD
            elif self.a_up:
                why = W_UP
            elif code == C.JOKER or code not in expect:
                why = W_FOREIGN
        self.code[s] = code
        self.why[s] = why
        self.st[s] = BAD if why else READ
        m.reader.alive = True
        m.reader.back = None if self.a_back < 0 else FLAGS[self.a_back]

    # ---------------------------------------------------------------- the run

    def run(self, expect, slot_of, n):
        """Load n cards from the magazine into their pockets through the pipeline: expect,
        the codes still to load (a card's code is taken out as it falls into its pocket);
        slot_of(code) its plan slot (the pocket: car.where, set by car.use()).
        Returns when all n are in; raises MechanismFault (the feed stopped safe, the cards
        already on a latch in their pockets) when a card cannot be loaded."""
        m = self.m
        car = self.car
        clock = m.clock
        fst = m.st
        cst = car.st
        b = m.b
        spc = self.spc
        esc = car.esc
        lt = car.lt
        sps = car.t.sps
        slots = car.t.slots
        st = self.st
        for s in range(RING):
            st[s] = GONE
            self.why[s] = 0
        self.n_rx = 0
        self.asking = -1
        self.eb_j = -1
        self.cards = 0
        m.div.set(ROUTE_SHUFFLE)
        while not m.div.settled():
            m._wait()
        if not cst.enabled:  # (the ring's driver on the servo driver acts from its next frame)
            cst.enable(True)
            car._wait(lt.frame_us // 1000 + 1)
        for bm in (b.double, b.throat):
            bm.settle()
        ring_at = car.slot_at()     # where the ring is, or goes for the last card routed
        routed = 0                  # cards whose station is chosen, the flipper set
        picked = 0                  # cards whose lead blocked D
        put = 0                     # cards in their pockets
        moving = -1                 # the card the ring's move is for (-1: none)
        latched = False             # its latch commanded
        c_origin = 0
        c_sign = 1
        c_steps = 0
        c_target = 0
        c_run = False               # the ring's stepper is moving
        fault = None
        free_at = clock.ticks_us()  # when the ring may turn for the next card (the last in)
        end_us = 0                  # the padded move's end
        arrive = 0                  # when its card reaches its latch
        stopping = False
        fst.enable(True)
        top = fst.max_rate
        fst.max_rate = self.max_rate
        # n cycles, and one more (it ends as the last card falls) so that the last card leaves
        # the exit nip at the path's speed; the pick roller ends at home (turn 0)
        fst.start((n + 1) * spc, True, self.rate, self.accel)
        fst.max_rate = top
        t0 = clock.ticks_us()
        try:
            while put < n or self.eb_j >= 0:  # (and the last beam's answer)
                m._tick()
                if fst.moving():
                    fst.pump()
                if c_run:
                    c_run = cst.pump()
                now = clock.ticks_us()
                if b.lid.raw():
                    raise MechanismFault(LID_OPEN, "the lid was opened while the carousel was "
                                         "loading: take the cards out of the path, the chute and "
                                         "the escrows, put them face down on top of the magazine, "
                                         "close the lid and feed again")
                p = fst.position()
                # ---- the feed's beams: where each card is
                e = b.double.update(now)
                if e > 0:
                    i = p // spc  # the card of this cycle
                    s = i & 3
                    if i < picked:  # a second lead in one cycle: two cards
                        self.why[(picked - 1) & 3] = W_DOUBLE
                    elif i - put >= RING - 1 and not stopping:  # the ring fell behind the feed
                        fault = MechanismFault(JAM, "the carousel fell behind the feed while "
                                               "loading: " + self._tell())
                        stopping = True
                    elif i >= n and not stopping:  # more cards than the reshuffle's
                        fault = MechanismFault(JAM, "the magazine holds more cards than the "
                                               "reshuffle's: " + self._tell())
                        stopping = True
                    elif not stopping:
                        st[s] = PICKED
                        self.why[s] = 0
                        self.d_on[s] = p
                        self.t_on[s] = -1
                        picked = i + 1
                elif e < 0 and picked:
                    s = (picked - 1) & 3
                    if p - self.d_on[s] > self.double_steps:
                        self.why[s] = W_DOUBLE
                e = b.throat.update(now)
                if e > 0 and picked and not stopping:
                    s = (picked - 1) & 3
                    if self.t_on[s] < 0:
                        self.t_on[s] = p
                if not stopping:
                    # a card that does not come: the magazine ran out, or a misfeed
                    i = picked
                    if i < n and p >= i * spc + self.reach_d:
                        b.magazine.settle()
                        kind = JAM if b.magazine.active else EMPTY
                        fault = MechanismFault(kind, self._missing(kind, n - put))
                        stopping = True
                    # T blocked far too long: a card stuck in the throat
                    if b.throat.active and picked:
                        s = (picked - 1) & 3
                        if self.t_on[s] >= 0 and p - self.t_on[s] > self.stuck_steps:
                            fault = MechanismFault(JAM, "a card stuck in the throat while the "
                                                   "carousel was loading: " + self._tell())
                            stopping = True
                    # the next read, when its card's corner is over the window
                    if self.asking < 0 and picked:
                        i = picked - 1
                        s = i & 3
                        if st[s] == PICKED and self.t_on[s] >= 0 and \
                                p >= self.t_on[s] + self.read_after_t:
                            self._ask(i)
                got = self._listen() if self.asking >= 0 or self.eb_j >= 0 else False
                if self.eb_j >= 0:
                    self._beam(now, expect, slot_of)
                if self.asking >= 0:
                    i = self.asking
                    s = i & 3
                    if got:
                        self._judge(i, expect)
                        self.asking = -1
                    elif clock.ticks_diff(now, self.asked[s]) > self.timeout_us:
                        self.why[s] = W_SILENT
                        st[s] = BAD
                        self.asking = -1
                    if st[s] == BAD and fault is None:
                        fault = MechanismFault(READER_SILENT if self.why[s] == W_SILENT else
                                               JAM, self._rejected(i))
                        stopping = True
                if stopping and fst.moving():
                    fst.halt()
                    m.homed = False
                # ---- the flipper, as soon as a card is read: the station its pocket comes
                # under (the nearer one, from where the ring goes for the card before it)
                if routed < picked and st[routed & 3] == READ:
                    s = routed & 3
                    pocket = car.where[slot_of(self.code[s])]
                    j = 0
                    best = slots
                    for k in range(lt.stations):
                        d = (pocket - k * car.half - ring_at) % slots
                        if slots - d < d:
                            d = slots - d
                        if d < best:
                            best = d
                            j = k
                    esc.route(j)
                    car.used[j] += 1
                    self.station[s] = j
                    self.target[s] = (pocket - j * car.half) % slots
                    ring_at = self.target[s]
                    routed += 1
                # ---- the carousel: one card at a time, on the schedule
                if moving < 0 and put < picked:
                    s = put & 3
                    if st[s] == READ and put < routed and (not stopping or
                                                           p >= self.d_on[s] + self.out_after_d):
                        c_target = self.target[s]
                        # the padded move starts when the last card is in (or now, if later)
                        start = now if clock.ticks_diff(now, free_at) > 0 else free_at
                        end_us = clock.ticks_add(start, self.bound_us)
                        # when the card's lead reaches its latch, at the feed's pace: it lets
                        # go at the latch's latest release or then, whichever is later
                        ahead = self.d_on[s] + self.escrow_after_d - p
                        # (each PIO segment of SEG steps adds its GAP cycles)
                        # (and ARRIVE_US more: the feed's position is read a loop's turn
                        # from `now`, and a card slides the chute at about the path's speed)
                        arrive = clock.ticks_add(now, (ahead * self.step_us + ahead * GAP //
                                                       (SEG * 2) if ahead > 0 else 0) + ARRIVE_US)
                        fwd = (c_target * sps - car.pos) % car.t.rev
                        back = car.t.rev - fwd if fwd else 0
                        c_sign = 1 if fwd <= back else -1
                        c_steps = fwd if c_sign > 0 else back
                        c_origin = car.pos
                        moving = put
                        latched = False
                        if c_steps:
                            car.sensor.settle()
                            car.nseen = 0
                            cst.start(c_steps, c_sign > 0)
                            c_run = True
                    elif stopping:
                        break  # nothing more goes in: the fault is raised below
                elif moving < 0 and stopping:
                    break
                if moving < 0 and not stopping and not fst.moving() and \
                        (put >= picked or st[put & 3] == PICKED):
                    # the feed's move is over and the next card never reached the reader
                    fault = MechanismFault(JAM, "a card did not reach the reader while the "
                                           "carousel was loading: " + self._tell())
                    stopping = True
                if moving >= 0:
                    s = moving & 3
                    if c_steps:
                        e = car.sensor.update(now)
                        if e:
                            car._edge(c_origin + c_sign * cst.position(), e > 0, c_sign > 0,
                                      c_origin)
                        if not c_run and not cst.moving() and c_steps:
                            car.pos = c_origin + c_sign * cst.position()
                            car.travel += c_steps
                            car._missed(c_origin, car.pos)
                            car.sensor.settle()
                            if car.slot_at() != c_target or not car.sensor.active:
                                self._lost("the carousel stopped at step %d without pocket %d's "
                                           "tab at the sensor: it lost steps"
                                           % (car.pos % car.t.rev, c_target))
                            c_steps = 0
                    left = clock.ticks_diff(end_us, now)
                    if not latched and left <= lt.lead_us + lt.latch_us:
                        if self.eb_j >= 0:  # the last beam unheard: this card must not fall
                            raise silent(self.eb_j)
                        esc.drv.pulse(lt.ch_latch[self.station[s]], lt.release_us)
                        latched = True
                        free_at = clock.ticks_add(end_us, self.open_us - lt.lead_us - lt.latch_us)
                        if clock.ticks_diff(arrive, free_at) > 0:
                            free_at = arrive
                        free_at = clock.ticks_add(free_at, self.fall_us)
                    if latched and clock.ticks_diff(now, free_at) >= 0:
                        if c_steps:  # the ring did not stop within its bound: the card fell
                            self._lost("the carousel's move overran its time: the card may have "
                                       "fallen beside its pocket")
                        j = self.station[s]
                        esc.drv.pulse(lt.ch_latch[j], lt.hold_us)
                        esc.releases += 1
                        code = self.code[s]
                        if self.beams:  # is the escrow empty? (answered while the loop runs)
                            self.m.reader.uart.write(self.eb_req[j])
                            self.eb_j = j
                            self.eb_code = code
                            self.eb_at = now
                            self.eb_seen = -1
                            self.eb_shared = self._shared(j, put + 1, picked, routed, p, stopping)
                        car.pockets[slot_of(code)] = code
                        expect.remove(code)
                        if m.expect is not None:
                            m.expect.discard(code)
                        st[s] = GONE
                        put += 1
                        self.cards = put
                        moving = -1
            if put < n and fault is None:
                fault = MechanismFault(JAM, self._rejected(put))
            if fault is not None:
                if fault.kind == EMPTY:  # (counted now: the cards on latches went in)
                    fault = MechanismFault(EMPTY, self._missing(EMPTY, n - put))
                raise fault
            while fst.pump():  # the feed's last cycle: the pick roller home
                m._tick()
                clock.ticks_us()  # (the stepper's plan runs on the timer)
                if b.lid.raw():
                    raise MechanismFault(LID_OPEN, "the lid was opened at the end of the "
                                         "carousel's loading: close it and feed again")
            self.last_us = clock.ticks_diff(clock.ticks_us(), t0)
        except MechanismFault:
            if fst.moving():
                fst.halt()
            m.homed = False
            m._safe()
            car._safe()
            raise
        m.turn = 0
        b.home.settle()
        if not b.home.active:
            m.homed = False
        fst.enable(False)

    def _beam(self, now, expect, slot_of):
        """The beam's answer awaited (eb_j): a card still in that escrow stops the loading
        (escrow_caught: the card counted out of its pocket again, to be loaded by the next
        feed), so does a beam the board cannot tell (reader_fault) or no answer within the
        reader's timeout (reader_silent); clear, or a card seen that may be a later one
        (eb_shared: _shared), nothing more awaited."""
        j = self.eb_j
        seen = self.eb_seen
        if seen < 0:
            if self.m.clock.ticks_diff(now, self.eb_at) > self.timeout_us:
                raise silent(j)
            return
        self.eb_j = -1
        if beam(j, FLAGS[seen]) or self.eb_shared:
            return
        code = self.eb_code
        self.car.pockets[slot_of(code)] = None
        expect.append(code)
        if self.m.expect is not None:
            self.m.expect.add(code)
        self.cards -= 1
        raise self.car.esc.caught_in(j, code)

    def _shared(self, j, i, picked, routed, p, stopping):
        """Whether a card after the one that just fell from latch j (cards i .. picked - 1) may
        already lie on that latch when the board reads its beam: down j's chute (its station,
        or the flipper's when it is not routed: a card the loader cannot take) with its lead at
        the latch by then (after a stop, once its tail left the exit nip: it slides on). On the
        schedule the next card reaches its latch about 135 ms after the last one closed, so
        this is only so after a stop, whose fault asks for the escrows' cards anyway."""
        while i < picked:
            s = i & 3
            k = self.station[s] if i < routed else self.car.esc.station
            if k == j and (p + self.look_steps >= self.d_on[s] + self.escrow_after_d or
                           (stopping and p >= self.d_on[s] + self.out_after_d)):
                return True
            i += 1
        return False

    def _lost(self, message):
        """The ring is not where its card falls: the pockets' contents unknown (emptied before
        the next reshuffle), the carousel stopped safe."""
        self.car.pockets = None
        self.car._fail(LOST_STEPS, message)

    def _tell(self):
        return "open the lid, take the cards out of the path, the chute and the escrows, put " \
               "them face down on top of the magazine, close the lid and feed again"

    def _missing(self, kind, left):
        if kind == EMPTY:
            return "the magazine is empty and the reshuffle still needs %d card(s): put them " \
                   "face down into the magazine (look in the path and the escrows too), then " \
                   "feed again" % left
        return "no card came out of the magazine while the carousel was loading: " + self._tell()

    def _rejected(self, i):
        s = i & 3
        why = self.why[s]
        what = WHY[why] if why else "not loaded"
        if why in (W_UP, W_FOREIGN) and self.code[s] >= 0:
            what += " (%s)" % C.name(self.code[s])
        return "a card the loader could not take (%s) stopped it: %s%s" % (
            what, self._tell(), " (turn it face down)" if why == W_UP else "")
