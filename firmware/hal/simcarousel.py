# The simulator's carousel (hal/carousel_rp2.py is the Pico's): the engine's reshuffle plan
# (shoe.shuffler.Plan) realised on a model of the pockets, as the real one does it. Each card,
# in the order it comes out of the magazine, goes into the pocket the plan gives that card
# (the Pico reads every card before it enters, so the magazine's order does not matter); the
# carousel turns the shortest way; then it empties the pockets in the plan's drop order onto
# the shuffle tray in one turn the way slot numbers fall, and the tray's stack goes back into
# the magazine as it is. What the magazine then
# holds must be the engine's stub: SimMech.load checks it on every reshuffle.


class SimCarousel:
    def __init__(self, slots):
        self.pockets = [None] * slots
        self.at = 0          # the pocket at the station
        self.travel = 0      # slots turned so far (loading and unloading)
        self.shuffles = 0

    def goto(self, slot, down=False):
        """Turn to `slot` the shortest way, or with down=True the way slot numbers fall (the
        unloading turn: the other way would carry full pockets over the open gate)."""
        from shoe.shuffler import ring_move

        n = len(self.pockets)
        d = (self.at - slot) % n if down else abs(ring_move(self.at, slot, n))
        self.travel += d
        self.at = slot

    def put(self, code, slot):
        """A card read on its way in goes into its pocket (the carousel turns there)."""
        p = self.pockets
        if slot < 0 or p[slot] is not None:
            raise ValueError("carousel: card %d has no free pocket in the plan" % code)
        self.goto(slot)
        p[slot] = code

    def put_many(self, pairs, plan=None):
        """(code, slot) pairs in the order they come: each into its pocket (plan: theirs)."""
        for code, slot in pairs:
            self.put(code, slot)

    def empty(self, plan):
        """One turn the way slot numbers fall empties the pockets onto the shuffle tray in the
        plan's drop order. Returns the tray's stack, next card to feed at the end."""
        p = self.pockets
        tray = []  # the first card out lies at the bottom of the tray, and is fed first
        for slot in plan.drops():
            self.goto(slot, True)
            tray.append(p[slot])
            p[slot] = None
        if [c for c in p if c is not None]:
            raise ValueError("carousel: pockets still full after the unloading turn")
        self.shuffles += 1
        tray.reverse()
        return tray

    def shuffle(self, fed, plan):
        """Load the cards `fed` (in the order they leave the magazine) and unload them.
        Returns the magazine afterwards, next card to feed at the end (SimMech.stack's order)."""
        for code in fed:
            self.put(code, plan.slot_of(code))
        return self.empty(plan)
