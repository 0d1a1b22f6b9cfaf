"""Rule 38, checked from outside the engine: one burn a street.

A BurnWatch follows a hand's log operation by operation (it reads only the log and the count of
streets or draw rounds dealt, never the engine's own burn bookkeeping) and attributes every card
that goes to the burns to the street (or draw round) whose operation burned it. After each
operation: no street has more than one burn, and a burn never happens outside a street or a draw
round. The documented exceptions are counted as what they are, not as a street's burn:

* `extra-burn-stays` (TDA 38): the second card of a double feed on a burn stays burned;
* `flop4-scramble` (TDA 39-A): the card picked from a four-card flop is the turn's burn with
  `flop4_pick_is_turn_burn`, else an extra burn;
* `premature-turn-aside` (RRoP Hold'em 8): the turn is re-dealt with a burn and the river comes
  without one, so the burn the set-aside turn took is the river's, taken early (once: a turn
  set aside a second time keeps its burn, and its re-deal takes none).

A street a procedure promised "without a burn" (a premature street's re-deal, a four-card flop's
new flop, the turn after a 39-A pick, the river after a set-aside turn) already has its burn
counted, so a burn there is a second one and fails the check.

It also collects the ordered pairs of procedures that followed one another in a hand, for the
state machine's coverage report."""

from shoe.record import log_entries

# procedures that are not errors at the table (the reboot's RP-4 reshuffle counts as what it is)
_QUIET = ("stub-exhausted",)


class BurnViolation(AssertionError):
    pass


class BurnWatch:
    def __init__(self, hand):
        self.hand = hand
        self.pos = 0             # log entries already read
        self.burned = {}         # street (1-based) -> burns counted for it
        self.extras = []         # (street, card, why): the documented exceptions
        self.procs = []          # procedure ids in order, for the pairs
        self.kind = None

    def after(self, op, hand=None):
        """Read what operation `op` (deal, street, draw, action, expose, premature, jam, ...)
        logged (hand: the hand, if it was rebuilt since); raise BurnViolation if a street now
        has two burns."""
        if hand is not None:
            self.hand = hand
        h = self.hand
        entries = log_entries(h, self.pos)
        self.pos = len(h.z.log) // 4
        street = h.streets_done()
        stays = 0
        pick = None
        for e in entries:
            p = e.get("procedure")
            if p is not None:
                if p not in _QUIET:
                    self.procs.append(p)
                if p == "extra-burn-stays":
                    stays += 1
                elif p == "flop4-scramble":
                    pick = street + 1 if h.house["flop4_pick_is_turn_burn"] else 0
                elif p == "premature-turn-aside":
                    # the set-aside turn's burn is the river's: the river comes without one
                    # (a second set-aside turn, the river's burn already taken early: the
                    # re-dealt turn keeps its burn, like any premature street's re-deal)
                    n = street + 1  # (the turn was taken back: streets_done is the flop)
                    if not self.burned.get(n + 1):
                        self.burned[n + 1] = self.burned.pop(n, 0)
                continue
            if e.get("to") != "burns":
                continue
            card = e["card"]
            if op not in ("street", "draw"):
                raise BurnViolation("%s burned %s outside a street or draw round" % (op, card))
            if stays and e.get("from") is None:
                stays -= 1
                self.extras.append((street, card, "extra-burn-stays"))
                continue
            if pick is not None and e.get("from") == "board":
                n, pick = pick, None
                if n == 0:
                    self.extras.append((street, card, "flop4-scramble"))
                    continue
                self._count(n, card, "the four-card flop's pick (the turn's burn)")
                continue
            self._count(street, card, op)

    def _count(self, n, card, why):
        self.burned[n] = self.burned.get(n, 0) + 1
        if self.burned[n] > 1:
            raise BurnViolation("street %d took %d burns (the last %s, by %s): Rule 38 allows "
                                "one; procedures %s" % (n, self.burned[n], card, why,
                                                        ", ".join(self.procs)))

    def pairs(self):
        """The ordered pairs of procedures that followed one another in this hand."""
        out = set()
        for i in range(1, len(self.procs)):
            if self.procs[i] != self.procs[i - 1]:
                out.add((self.procs[i - 1], self.procs[i]))
        return out
