# The simulator's revision D carousel (hardware/SHUFFLER.md "Revision D": the pipelined loader),
# used by hal/simmech.py when the pin map's `loader` section is fitted. The pockets, the ring
# and the two escrows are modelled as hal/simcarousel.py models revision B's; the time is
# hal/fastpath.py's schedule, card by card, on hardware/fastpath.json's figures (deployed as
# fastpath.json beside pinmap.json):
# - each card, in the order it comes out of the magazine, is read on the fly, sent by the
#   Y-chute's flipper to the escrow over the station nearer its pocket, held by that escrow's
#   latch while the ring turns its pocket under it (a move padded to a quarter turn's bound),
#   and let fall; the feed picks the next one meanwhile (one card every cycle_us);
# - each card's pocket is its place in the plan's order (fastpath.FastPath.park_map: the first
#   out in the pocket before the parking window, and so on), so that the unloading, one
#   non-stop turn from the parking window (pockets never loaded: the gate opens under them),
#   drops the plan's order: the tray's stack is what revision B's carousel leaves;
# - at power-up, before the shoe takes its first command, the homing turn (a whole turn,
#   padded) and, only when the pocket sensor sees cards a power cut left in them, one unloading
#   turn that empties them onto the shuffle tray: no reshuffle carries either (SimMech.power_up,
#   run as the simulator makes its carousel, at the mechanism's first use, and counted as the
#   boot's; a loader that did not home at power-up homes at its first reshuffle);
# - the next deck's unloading turn (two decks) runs on its own: the ring's stepper and the
#   gate need neither the card path nor the link, so a dealing command is not held by it; the
#   carousel's next user (the next deck's loading, an in-hand reshuffle) waits for what is left
#   of it, counted down by what the mechanism does meanwhile (fastpath.deal_wait_us).
# So the time depends on the card count alone, never on the plan or the ring's position
# (fastpath.py checks each real move against its bound and takes the later).
from hal.simcarousel import SimCarousel

__all__ = ["FastCarousel", "model"]




def model(pm):
    """hal.fastpath.FastPath on this shoe's pin map and fastpath.json."""
    from hal.fastpath import on

    return on(pm)


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
        self.caught_at = 0               # armed: the k-th card (from 1) of the next reshuffle
        #                                  stays on its latch (SimMech.arm(ESCROW_CAUGHT))
        self.stopped = None              # the stop that reshuffle met, for SimMech's next feed
        self.trace = None                # the last run's cards: (station, read, release, in)
        self.boot_us = 0                 # the power-up's homing (and purge) turns
        self.turning_us = 0              # what is left of an unloading turn running on its own
        self.turn_waits = 0              # times the carousel's next user waited for one
        self.turn_wait_us = 0            # ... the longest of those waits

    def power_up(self):
        """At power-up, before any command: the homing turn, in which the pocket sensor sees
        whether a power cut left cards in the pockets; if it did, one unloading turn empties
        them onto the shuffle tray (the operator puts them into the magazine: they are read
        again at the next reshuffle). Returns the time it took (fastpath.power_up_us)."""
        if self.homed:
            return 0
        purge = self._start()[1]
        if purge:
            self.at = self.m.park + 1  # where the unloading turn ends (_unload)
        us = self.m.power_up_us(purge)
        self.boot_us += us
        self.busy_us += us
        return us

    def elapse(self, us):
        """The mechanism did something else for us (a card dealt, a stop): an unloading turn
        running on its own went on meanwhile."""
        if self.turning_us:
            self.turning_us = max(0, self.turning_us - us)

    def _wait_turn(self):
        """The carousel's next user waits for the end of an unloading turn still running."""
        if self.turning_us:
            self.turn_waits += 1
            us = self.turning_us
            self.turn_wait_us = max(self.turn_wait_us, us)
            self.turning_us = 0
            self._spend(us)

    def _spend(self, us):
        self.busy_us += us
        self.spend(us)

    def _start(self):
        """(power_up, purge) for the next run: a loader that did not home at power-up
        (power_up) homes first, and empties the pockets first when the pocket sensor sees
        cards in them (a power cut mid-reshuffle)."""
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
        if slot < 0 or slot >= self.m.park or p[slot] is not None:
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
        self._wait_turn()
        power_up, purge = self._start()
        trace = []
        r = self.m.reshuffle([s for _c, s in pairs], self.at, power_up, purge, trace)
        for i in range(len(pairs)):
            self._place(pairs[i][0], pairs[i][1], trace[i][0])
        self.trace = trace
        self._spend(r["total_us"] if unload else r["load_us"])
        return r

    def _pockets(self, pairs, plan):
        """(code, plan slot) pairs as (code, pocket): revision D parks the plan's order
        (FastPath.park_map)."""
        m = self.m.park_map(plan.drops())
        return [(c, m[s]) for c, s in pairs]

    def put(self, code, slot, plan=None):
        self.put_many([(code, slot)], plan)

    def put_many(self, pairs, plan=None):
        """A run of cards (the next deck's, in a gap between the hand's steps): one pipeline
        from the first card's pick to the last one's fall. plan: whose slots the pairs give."""
        if pairs:
            self._run(self._pockets(pairs, plan), False)

    def empty(self, plan):
        """The next deck's non-stop unloading turn, started: it runs on its own (the loader is
        busy for its time, the card path and the link are not); the carousel's next user waits
        for what is left of it."""
        self._wait_turn()
        us = self.m.unload_us()
        self.busy_us += us
        self.turning_us = us
        return self._unload()

    def _unload(self):
        """One turn the way pocket numbers fall, from the parking window over the opening:
        the pockets empty in pocket order, park - 1 first."""
        p = self.pockets
        n = len(p)
        start = self.m.park + 1  # the parking window over the opening (hal/loader_rp2.py)
        d = (self.at - start) % n
        self.travel += min(d, n - d) + n
        self.at = start
        tray = []
        for k in range(self.m.park - 1, -1, -1):
            if p[k] is not None:
                tray.append(p[k])
                p[k] = None
        for c in p:
            if c is not None:
                raise ValueError("carousel: a card in the parking window")
        self.shuffles += 1
        tray.reverse()
        return tray

    def shuffle(self, fed, plan):
        """A whole reshuffle of the hand's stub: the pipeline, then the unloading turn, in the
        schedule's time. With a card armed to be caught in its escrow, the escrow's beam stops
        the reshuffle there (`stopped`: SimMech's next feed raises it); the operator puts the
        card on the magazine and the next feed carries on: that card goes through the path
        once more (a card alone: the pipeline's first card's time), the result the same."""
        self.stopped = None
        pairs = self._pockets([(c, plan.slot_of(c)) for c in fed], plan)
        k = self.caught_at
        self.caught_at = 0
        self.last = self._run(pairs, True)
        if 0 < k <= len(pairs):
            from shoe.cards import name
            from shoe.faults import MechanismFault

            station = self.trace[k - 1][0]
            self.stopped = MechanismFault(
                "escrow_caught", "a card (%s) is caught in escrow %d of the carousel's loader: "
                "open the lid, take it out, put it face down on top of the magazine, close the "
                "lid and feed again" % (name(pairs[k - 1][0]), station))
            self._spend(self.last["first_card_us"])
        return self._unload()
