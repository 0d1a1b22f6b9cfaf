# The pipelined loader's timing (revision D, designed: hardware/SHUFFLER.md "Revision D"), the
# simulator's model of it: a reshuffle's schedule, card by card, from hardware/pinmap.json's
# figures (the card path, the feed's steps, the reader, the carousel's pockets) and
# hardware/fastpath.json's (each with its source). Integer microseconds throughout: the
# model's grain is 1 us.
#
# The stages run at once on different cards: the feed picks card k+1 and the camera reads it
# on the fly (no stop at the hold position) while the carousel turns to card k's pocket and
# card k-1 falls from the escrow into its own. The feed never stops while loading: it runs at
# the pace of the slowest stage, one card a cycle. The carousel's part of a card is fixed: a
# move padded to the bound of the longest it may be (a quarter turn: two stations half a turn
# apart, the nearer one used), then the wait for the card to fall in; the unloading is one
# turn without stops, padded from its start pocket; the homing turn padded to a whole turn.
# So the schedule depends on the card's number only, never on the plan; the model computes
# each move's real time from the plan and takes the later of the two, so a move over its
# bound would show as a spread between plans (benchmarks/table.py measures it).
from hal.motion import move_ms

G_MM_S2 = 9810.0

__all__ = ["FastPath", "load", "on"]


def on(pm):
    """The FastPath of the shoe whose pin map (a dict) is pm, on its fastpath.json: the
    working folder's (a shoe's root), the image's beside hal/, else the checkout's hardware/."""
    import json

    here = __file__.rsplit("/", 1)[0] if "/" in __file__ else "."
    for path in ("fastpath.json", here + "/../fastpath.json", here + "/../../hardware/fastpath.json"):
        try:
            f = open(path)
        except OSError:
            continue
        try:
            return FastPath(pm, json.load(f))
        finally:
            f.close()
    raise OSError("no fastpath.json beside the pin map: revision D's loader takes its figures "
                  "from it (hardware/fastpath.json, in the shoe's root)")


def load(hardware):
    """(FastPath, pin map dict, fastpath dict) from a hardware/ folder's pinmap.json and
    fastpath.json."""
    import json

    with open(hardware + "/pinmap.json") as f:
        pm = json.load(f)
    with open(hardware + "/fastpath.json") as f:
        fp = json.load(f)
    return FastPath(pm, fp), pm, fp


def _fall_us(mm):
    """Microseconds a card falls `mm` from rest."""
    return int(1e6 * (2.0 * mm / G_MM_S2) ** 0.5)


def _val(fp, key):
    v = fp[key]
    return v["value"] if isinstance(v, dict) else v


class FastPath:
    """pm: hardware/pinmap.json as a dict; fp: hardware/fastpath.json as a dict."""

    def __init__(self, pm, fp):
        fs = pm["feed_stepper"]
        path = pm["path"]
        cs = pm["carousel_stepper"]
        self.slots = cs["slots"]
        self.sps = cs["steps_per_slot"]
        self.rev = self.slots * self.sps
        self.stations = _val(fp, "stations")
        self.car_v = float(_val(fp, "carousel_steps_per_s"))
        self.car_a = float(_val(fp, "carousel_accel_steps_per_s2"))
        if self.car_v > cs["max_steps_per_s"]:
            raise ValueError("fastpath: the carousel's speed is over carousel_stepper's maximum")
        spm = fs["full_steps_per_rev"] * fs["microsteps"] / (3.141592653589793 *
                                                              fs["roller_diameter_mm"])
        ratio = fs["pick_roller_diameter_mm"] / float(fs["pick_reduction"] *
                                                      fs["roller_diameter_mm"])
        take = path["takeaway_nip_mm"]
        self.spc = fs["steps_per_card"]
        self.feed_max = float(_val(fp, "feed_steps_per_s"))
        self.feed_a = float(fs["shuffle_accel_steps_per_s2"])
        L = path["card_length_mm"]

        def steps_at(x):  # from the pick's start to the card's lead at x mm (MECHANISM.md)
            if x <= take:
                return x / ratio * spm
            return (take / ratio + (x - take)) * spm

        self.steps_read = steps_at(path["reader_window_mm"][1])
        self.steps_flip = steps_at(_val(fp, "flipper_mm"))
        self.steps_escrow = steps_at(_val(fp, "escrow_mm"))
        self.read_us = pm["reader"]["read_ms"] * 1000
        self.latch_us = _val(fp, "latch_ms") * 1000
        # a servo takes a new position from its next pulse: up to a frame after the command
        self.frame_us = _val(fp, "servo_frame_ms") * 1000
        drop = _val(fp, "escrow_drop_mm")
        self.lead_us = _fall_us(drop)          # release -> the lead at the pocket's mouth
        self.in_us = _fall_us(drop + L)        # release -> the tail past the rim
        self.card_fall_us = _fall_us(L)        # a card falls its own length (unloading)
        # the carousel's bounds: a loading move (the nearer station: a quarter turn with two),
        # the move to the unloading turn's first pocket (half a turn), the homing turn
        self.move_bound_us = self.bound_us(self.rev // (2 * self.stations))
        self.half_bound_us = self.bound_us(self.rev // 2)
        home_v = float(_val(fp, "home_steps_per_s"))
        self.home_v = home_v
        self.home_us = int(1e6 * (self.rev / home_v + home_v / self.car_a) * 1.05) + 1
        g = cs["gate"]
        self.gate_us = g["settle_ms"] * 1000
        # the unloading turn: each pocket over the opening for a card's fall of its length
        opening = _val(fp, "gate_open_pockets")
        # (5 % slower than the fall allows, the moves' margin: at the limit itself a
        # pocket's card would leave the opening as it finishes falling)
        pockets_per_s = opening * 1e6 / (self.card_fall_us * 1.05)
        # the parking window: the pockets over the opening when the gate opens, never loaded
        # (open with cards over it, they would fall at once, out of order)
        self.park = self.slots - opening
        turn_v = pockets_per_s * self.sps
        self.unload_turn_us = int(1e6 * (self.rev / turn_v + turn_v / self.car_a)) + 1
        self.turn_v = turn_v
        # the card cycle: the carousel's fixed part (a padded move, then the card falls in)
        # or the feed's at its maximum speed, whichever is longer
        car_us = self.move_bound_us + self.frame_us + self.in_us - self.lead_us
        feed_us = int(1e6 * self.spc / self.feed_max)
        self.pick_us = feed_us  # a card's pick at the feed's top speed: the least a card takes
        self.cycle_us = max(car_us, feed_us)
        self.feed_v = 1e6 * self.spc / self.cycle_us  # the feed's speed while loading

    def park_map(self, drops):
        """{plan slot: pocket} for a plan whose pockets empty in the order `drops`
        (shuffler.Plan.drops(): the cut's first): the first out goes into pocket park - 1,
        the next into park - 2, and so on, so that the non-stop turn, starting with the
        parking window (pockets park .. slots - 1, always empty) over the opening, drops them
        in the plan's order. A function of the plan's order alone: what the tray gets is the
        plan's permutation, as revision B's unloading gives it."""
        out = {}
        for j in range(len(drops)):
            out[drops[j]] = self.park - 1 - j
        return out

    def bound_us(self, steps):
        """A move's padded time: its ideal trapezoid + 5 %, as revision B pads (MARGIN)."""
        return int(move_ms(steps, self.car_v, self.car_a) * 1050) + 1

    def move_us(self, steps):
        return int(move_ms(steps, self.car_v, self.car_a) * 1000) if steps else 0

    def _reach_us(self, steps):
        """From the feed's start until `steps` are made (accelerating to the loading speed,
        then at it): the feed starts once per reshuffle and never stops while loading."""
        v, a = self.feed_v, self.feed_a
        ramp = v * v / (2.0 * a)
        if steps <= ramp:
            return int(1e6 * (2.0 * steps / a) ** 0.5)
        return int(1e6 * (v / a + (steps - ramp) / v))

    def station_move(self, pos, slot):
        """The ring's move (steps) to bring `slot` under the nearer station, and the station
        (0 ..stations-1; station j lies j x slots/stations pockets on from station 0)."""
        best = None
        for j in range(self.stations):
            d = (slot - j * self.slots // self.stations - pos) % self.slots
            d = min(d, self.slots - d)
            if best is None or d < best[0]:
                best = (d, j)
        return best[0] * self.sps, best[1]

    def unload_us(self):
        """The unloading: to its first pocket (padded to half a turn), the gate (its servo acts
        from its next frame), one turn without stops (each pocket over the opening for a
        card's fall), the last card's fall, the gate closed."""
        return self.half_bound_us + 2 * (self.gate_us + self.frame_us) + self.unload_turn_us + \
            self.card_fall_us

    def power_up_us(self, purge=False):
        """The carousel's work at power-up, before the shoe takes its first command: the
        homing turn (padded to a whole turn: it tells nothing of where the ring stopped), in
        which the pocket sensor sees whether a power cut left cards in the pockets, and then,
        only if it did, one unloading turn that empties them onto the shuffle tray (their
        order does not matter: they are fed and read again). No reshuffle carries either."""
        return self.home_us + (self.unload_us() if purge else 0)

    def deal_wait_us(self):
        """The longest a dealing command waits for the loader with two decks: the card in
        flight on the shared path when it comes (the gather tray's picks stop at once; the
        dealing card is picked in the next slot of the feed's cycle). The next deck's
        unloading turn never holds it: the ring turns on its own (its stepper's PIO program
        and the gate's servo, timed by the clock), the card path free; only the carousel's
        next user (the next deck's loading, an in-hand reshuffle) waits for the turn's end."""
        return self.cycle_us

    def reshuffle(self, slots, start=0, power_up=False, purge=False, trace=None):
        """The schedule of a reshuffle whose cards go, in the order they come, into the pockets
        `slots` (the plan's slot of each card); the ring starting with pocket `start` at
        station 0. power_up: the homing turn first (a loader that did not home at power-up:
        power_up_us); purge: the pocket sensor saw cards left by a power cut (one unloading
        turn empties them first). The simulator does both at power-up (hal/simfast.py's
        FastCarousel.power_up), so its reshuffles carry neither.
        Returns a dict of microseconds: total, loading, unloading, the first card's wait, and
        the largest real move against its bound. trace (a list): gets each card's
        (station, read, release, in) in microseconds, in the order the cards come."""
        t0 = 0
        ring = 0  # when the carousel is free
        if power_up:
            ring = self.home_us
        if purge:
            ring += self.unload_us()
        cyc = self.cycle_us
        # the feed starts so that the first card is read as the carousel becomes free (at
        # once, unless the homing turn or the purge comes first)
        t0 = max(0, ring - self._reach_us(self.steps_read) - self.read_us)
        pos = start
        worst = 0
        fed = 0
        last_in = ring
        flip_late = 0
        clash = 0
        for k in range(len(slots)):
            pick = t0 + k * cyc
            read = pick + self._reach_us(self.steps_read + k * self.spc) - \
                self._reach_us(k * self.spc) + self.read_us
            at_flip = pick + self._reach_us(self.steps_flip + k * self.spc) - \
                self._reach_us(k * self.spc)
            at_escrow = pick + self._reach_us(self.steps_escrow + k * self.spc) - \
                self._reach_us(k * self.spc)
            if read + self.frame_us + self.latch_us > at_flip:
                flip_late += 1
            if k and at_escrow < last_in:  # the last card has not left the escrow yet
                clash += 1
            steps, _station = self.station_move(pos, slots[k])
            real = self.move_us(steps)
            worst = max(worst, real)
            start_move = max(read, ring)
            # the latch lets go lead_us before the padded move ends at the earliest (not before
            # the card is on it), a servo frame later at the latest; the card is in its pocket
            # in_us after it let go
            release = max(start_move + max(real, self.move_bound_us), at_escrow) - self.lead_us
            ring = release + self.frame_us + self.in_us
            last_in = ring
            if trace is not None:
                trace.append((_station, read, release, ring))
            pos = (slots[k] - _station * self.slots // self.stations) % self.slots
            fed = pick
        unload = self.unload_us()
        total = last_in + unload
        return {"total_us": total, "load_us": last_in, "unload_us": unload,
                "cycle_us": cyc, "first_card_us": last_in - (len(slots) - 1) * cyc
                if slots else 0, "worst_move_us": worst, "move_bound_us": self.move_bound_us,
                "flipper_late": flip_late, "escrow_clash": clash, "last_pick_us": fed, "end_pos": pos}
