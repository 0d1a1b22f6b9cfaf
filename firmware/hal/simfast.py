# The simulator's revision D carousel (hardware/SHUFFLER.md "Revision D": the pipelined loader),
# used by hal/simmech.py when the pin map's `loader` section is fitted. The pockets, the ring
# and the two escrows are modelled as hal/simcarousel.py models revision B's; the time is
# hal/fastpath.py's schedule, card by card, on hardware/fastpath.json's figures (deployed as
# fastpath.json beside pinmap.json):
# - each card, in the order it comes out of the magazine, is read on the fly, sent by the
#   Y-chute's flipper to the escrow over the station nearer its pocket, held by that escrow's
#   latch while the ring turns its pocket under it (a move padded to a quarter turn's bound),
#   and let fall; the feed picks the next one meanwhile (one card every cycle_us);
# - the unloading is one non-stop turn in slot order from the plan's cut (the same drops as
#   revision B: Plan.drops()), the tray's stack the plan's order;
# - the first reshuffle after power-up homes first (a whole turn, padded) and, when the pocket
#   sensor sees cards a power cut left in them, empties them first (one more unloading turn).
# So the time depends on the card count and power-up alone, never on the plan or the ring's
# position (fastpath.py checks each real move against its bound and takes the later).
from hal.simcarousel import SimCarousel

__all__ = ["FastCarousel", "fitted", "model"]


def fitted(pm):
    """The pin map (a dict) says the shoe has revision D's loader."""
    ld = pm.get("loader")
    return isinstance(ld, dict) and ld.get("fitted") is True


def model(pm):
    """hal.fastpath.FastPath on this shoe's pin map and fastpath.json (the deployed root's,
    else the checkout's hardware/)."""
    import json

    from hal.fastpath import FastPath

    here = __file__.rsplit("/", 1)[0] if "/" in __file__ else "."
    for path in ("fastpath.json", here + "/../../hardware/fastpath.json"):
        try:
            f = open(path)
        except OSError:
            continue
        try:
            return FastPath(pm, json.load(f))
        finally:
            f.close()
    raise OSError("no fastpath.json beside the pin map: revision D's loader takes its figures "
                  "from it (copy hardware/fastpath.json into the shoe's root)")


class FastCarousel(SimCarousel):
    """m: hal.fastpath.FastPath; spend(us): the mechanism is busy that long (SimMech counts it,
    and waits it out when the virtual shoe runs its reshuffles in real time)."""

    def __init__(self, slots, m, spend):
        SimCarousel.__init__(self, slots)
        self.m = m
        self.spend = spend
        self.homed = False               # the homing turn since power-up is done
        self.escrow = [None] * m.stations  # the card each escrow's latch holds
        self.last = None                 # the last whole reshuffle's schedule (fastpath dict)
        self.stations_used = [0] * m.stations
        self.busy_us = 0                 # the loader's time, all reshuffles and runs

    def _spend(self, us):
        self.busy_us += us
        self.spend(us)

    def _start(self):
        """(power_up, purge) for the next run: the first after power-up homes, and empties the
        pockets first when the pocket sensor sees cards in them (a power cut mid-reshuffle)."""
        if self.homed:
            return False, False
        self.homed = True
        purge = False
        for c in self.pockets:
            if c is not None:
                purge = True
        if purge:
            self.pockets = [None] * len(self.pockets)
        return True, purge

    def _place(self, code, slot, station):
        """The card through escrow `station` into `slot`: the ring brings the pocket under that
        station; the latch lets go."""
        p = self.pockets
        if slot < 0 or p[slot] is not None:
            raise ValueError("carousel: card %d has no free pocket in the plan" % code)
        n = len(p)
        at = (slot - station * n // self.m.stations) % n
        d = (at - self.at) % n
        self.travel += min(d, n - d)
        self.at = at
        self.escrow[station] = code
        self.stations_used[station] += 1
        p[slot] = code
        self.escrow[station] = None

    def _run(self, pairs, unload):
        """Load (code, slot) pairs in that order through the pipeline; unload: then the
        non-stop unloading turn. Spends the schedule's time; returns the schedule."""
        power_up, purge = self._start()
        trace = []
        r = self.m.reshuffle([s for _c, s in pairs], self.at, power_up, purge, trace)
        for i in range(len(pairs)):
            self._place(pairs[i][0], pairs[i][1], trace[i][0])
        self._spend(r["total_us"] if unload else r["load_us"])
        return r

    def put(self, code, slot):
        self._run([(code, slot)], False)

    def put_many(self, pairs):
        """A run of cards (the next deck's, in a gap between the hand's steps): one pipeline
        from the first card's pick to the last one's fall."""
        if pairs:
            self._run(pairs, False)

    def empty(self, plan):
        """The non-stop unloading turn (its time, when not part of a whole reshuffle)."""
        self._spend(self.m.unload_us())
        return self._unload(plan)

    def _unload(self, plan):
        p = self.pockets
        tray = []
        drops = plan.drops()
        if drops:  # to the first pocket (padded to half a turn), then one whole turn
            n = len(p)
            d = (self.at - drops[0]) % n
            self.travel += min(d, n - d) + n
            self.at = drops[0]
        for slot in drops:
            tray.append(p[slot])
            p[slot] = None
        for c in p:
            if c is not None:
                raise ValueError("carousel: pockets still full after the unloading turn")
        self.shuffles += 1
        tray.reverse()
        return tray

    def shuffle(self, fed, plan):
        """A whole reshuffle of the hand's stub: the pipeline, then the unloading turn, in the
        schedule's time."""
        self.last = self._run([(c, plan.slot_of(c)) for c in fed], True)
        return self._unload(plan)
