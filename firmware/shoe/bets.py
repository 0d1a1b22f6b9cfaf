# The hand's betting on the shoe: shoe.betting's engine fed by the hand's actions, each one
# written to the hand's log after its action entry (so the journal holds the bets and a power
# cut keeps them) and played back from the log when the hand is rebuilt. Loaded only for a
# table configured with betting (docs/betting.md): a shoe dealing without it never imports it.
#
# The round follows the cards: a street (or draw) is refused while the betting round is open,
# and the next round begins at the first action after it. Stud's first actor is found from the
# cards showing: the bring-in by the lowest upcard (razz: the highest, ace low), suits c < d <
# h < s breaking ties; later streets the best hand showing (razz: the lowest), the first seat
# in the deal order on a tie.
from shoe.compat import const
from shoe import betting as B
from shoe import cards as C
from shoe import games as G
from shoe.errors import ShoeError, E_ARG, E_STATE
from shoe.zones import OP_ACTION, OP_BET, OP_PROC, OP_STACK

MAX_AMOUNT = const(0xFFFFFF)  # an amount rides in an entry's three bytes
OOT = const(0x80)  # an action entry's kind | OOT: reported as an action out of turn
# the hand's action numbers (shoe.hand.ACTIONS) whose entry is followed by the seat's total
WITH_TO = ("call", "bet", "raise", "complete", "allin")


class Bets:
    def __init__(self, hand, raw, replaying=False):
        """hand: the shoe.hand.Hand; raw: the configuration's "betting" object; replaying: the
        hand is rebuilt from its log (its folds come back with the actions)."""
        self.hand = hand
        self.replaying = replaying
        self.cfg = B.config(hand.kind, raw, hand.house)
        self.stacks = B.stacks_for(self.cfg, hand.seats)
        self.dead = []  # seats a procedure killed (shoe.procedures.KILLS), for stud's late engine
        self.b = None if hand.kind == G.STUD else self._make(None)

    def _make(self, opener):
        h = self.hand
        b = B.Betting(h.kind, h.seats, h.button, self.cfg, self.stacks, h.rules, h.house,
                      h.draws, opener)
        for s in h.seats:  # seats the dealing procedures killed take no part
            if (s in self.dead or not self.replaying and not h.live(s) and h.seat_states[s]) and \
                    b.live(s):
                b.folded[s] = 1
        return b

    def set_stacks(self, stacks, log=True):
        """The seats' stacks at the start of this hand ({seat: chips}, every seat dealt in),
        given before its first card: the engine is made again with them (the forced bets posted
        as they allow), each logged as a stack entry and its amount (a power cut keeps them)."""
        h = self.hand
        if log and (h.initial_done or h.status != 0):
            raise ShoeError(E_STATE, "the stacks are given at the start of the hand, before its "
                            "first card")
        for s in stacks:
            if s not in h.seats:
                raise ShoeError(E_ARG, "a stack for seat %s, which is not dealt in (seats: %s)"
                                % (s, ", ".join(str(t) for t in h.seats)))
            if not 1 <= stacks[s] <= MAX_AMOUNT:
                raise ShoeError(E_ARG, "seat %d's stack must be 1..%d chips, not %d" % (
                    s, MAX_AMOUNT, stacks[s]))
        for s in h.seats:
            if s not in stacks:
                raise ShoeError(E_ARG, "no stack for seat %d: give every seat's" % s)
        old = self.stacks
        self.stacks = stacks
        try:
            b = None if h.kind == G.STUD else self._make(None)
        except ShoeError:
            self.stacks = old
            raise
        self.b = b
        if log:
            for s in h.seats:
                v = stacks[s]
                h.z.note(OP_STACK, s, 0, 0)
                h.z.note(OP_BET, v & 0xFF, (v >> 8) & 0xFF, v >> 16)

    def kill(self, seat):
        """A dealing procedure killed seat's hand (shoe.hand's DEAD): folded in the betting,
        whatever the turn (shoe.betting.Betting.kill)."""
        self.dead.append(seat)
        if self.b is not None:
            self.b.kill(seat)

    # ---------------------------------------------------------------- the rounds and cards

    def _showing(self, seat, r):
        """Seat's upcards as of betting round r (stud: 3rd street is round 0)."""
        held = self.hand.z.seats[seat][:3 + r]
        return [c & C.CODE for c in held if c & C.UP]

    def _opener(self, r):
        h = self.hand
        live = [s for s in h.deal_order if h.live(s)]
        razz = h.game == "razz"
        best = None
        key = None
        for s in live:
            up = self._showing(s, r)
            if not up:
                continue
            if r == 0:  # the bring-in: the lowest card (razz: the highest, ace low) by suit
                c = up[-1]
                k = (((c >> 2) + 1) % 13 * 4 + (c & 3)) if razz else -c
            else:
                k = _show_key(up, razz)
            if key is None or k > key:
                best, key = s, k
        return best if best is not None else (live[0] if live else None)

    def _sync(self):
        """Make the engine (stud: at the first action) and begin the rounds whose cards are
        out."""
        h = self.hand
        if self.b is None:
            self.b = self._make(self._opener(0))
        b = self.b
        while b.closed and not b.over and b.round < h.streets_done():
            b.next_round(self._opener(b.round + 1) if h.kind == G.STUD else None)
        return b

    def before_street(self):
        """A street or draw may come only when the round's betting is over (TDA 50)."""
        b = self._sync()
        if b.over:
            if len(b.contenders()) < 2:
                raise ShoeError(E_STATE, "the betting is over: seat %d is the only one left; "
                                "end the hand" % b.contenders()[0])
            return
        if not b.closed:
            raise ShoeError(E_STATE, "the betting round is not over: seat %d is to act (%s)"
                            % (b.to_act, b.rule("over")))

    # ---------------------------------------------------------------- actions

    def check(self, seat, kind, amount, oot=False):
        """Would seat's action be accepted? Raises ShoeError naming the rule; changes nothing
        (the round a street began is begun: the same at the next action anyway). oot: the
        dealer reports it as an action out of turn (shoe.betting.Betting.out_of_turn)."""
        if amount is not None and not 0 <= amount <= MAX_AMOUNT:
            raise ShoeError(E_ARG, "an amount is at most %d chips here" % MAX_AMOUNT)
        b = self._sync()
        if oot:
            return b.out_of_turn(seat, kind, amount, True)
        return b.check(seat, kind, amount)

    def resolve(self, seat, kind, amount, chips, oot=False):
        """The action the chips a seat put out make (shoe.chips.resolve), void (kind None) or
        checked like any action; changes nothing."""
        from shoe import chips as CH

        put, smallest, flags = chips
        for v in (put, smallest):
            if not 0 <= v <= MAX_AMOUNT:
                raise ShoeError(E_ARG, "chips are at most %d here" % MAX_AMOUNT)
        b = self._sync()
        out = CH.resolve(b, seat, kind, amount, put, smallest, flags)
        self.check(seat, kind if out[0] is None else out[0], amount if out[0] is None else
                   out[1], oot)
        return out

    def chips_done(self, seat, pid, to_pot):
        """After the action: the chips' procedure logged, and chips over the declaration that
        stay in the pot (their amount in a bet entry after the procedure's)."""
        h = self.hand
        h._proc(pid, seat)
        if to_pot:
            h.z.note(OP_BET, to_pot & 0xFF, (to_pot >> 8) & 0xFF, to_pot >> 16)
            self.b.to_pot(seat, to_pot)

    def act(self, seat, kind, amount, oot=False):
        """Apply a checked action, log the seat's total after it, and count it toward the
        misdeal window from what it did (TDA 36: an action in turn, with chips if it put any
        in; stud's bring-in is a forced bet like the blinds, never an action). An action out
        of turn waits for the seat's turn and counts nothing now."""
        h = self.hand
        if oot:
            rec = self.b.out_of_turn(seat, kind, amount)
            if kind in WITH_TO:
                to = rec[3]
                h.z.note(OP_BET, to & 0xFF, (to >> 8) & 0xFF, to >> 16)
            return rec
        rec = self.b.act(seat, kind, amount)
        if rec[2] != "bringin":
            h.n_actions += 1
            if rec[4] > 0:
                h.n_chips += 1
        if kind in WITH_TO:
            to = rec[3]
            self.hand.z.note(OP_BET, to & 0xFF, (to >> 8) & 0xFF, to >> 16)
        return rec

    def replay(self, log):
        """The betting again from the hand's log entries (after a power cut)."""
        from shoe.hand import ACTIONS
        from shoe.procedures import INDEX, KILLS

        kills = [INDEX[p] for p in KILLS]
        n = len(log)
        stacks = {}
        for i in range(0, n - 4, 4):  # the stacks given for this hand, before its first card
            if log[i] == OP_STACK and log[i + 4] == OP_BET:
                stacks[log[i + 1]] = log[i + 5] | (log[i + 6] << 8) | (log[i + 7] << 16)
        if stacks:
            self.set_stacks(stacks, False)
        i = 0
        while i < n:
            if log[i] == OP_PROC and log[i + 1] in kills and log[i + 2]:
                self.kill(log[i + 2])
            elif log[i] == OP_PROC and i + 4 < n and log[i + 4] == OP_BET:  # chips to the pot
                self.b.to_pot(log[i + 2], log[i + 5] | (log[i + 6] << 8) | (log[i + 7] << 16))
                i += 4
            elif log[i] == OP_ACTION and log[i + 1] in self.dead:
                pass  # the action that found its hand dead: no action in the betting
            elif log[i] == OP_ACTION:
                seat, kind, oot = log[i + 1], ACTIONS[log[i + 2] & 0x7F], log[i + 2] & OOT
                amount = None
                if i + 4 < n and log[i + 4] == OP_BET:
                    amount = log[i + 5] | (log[i + 6] << 8) | (log[i + 7] << 16)
                    i += 4
                self._sync()
                if oot:
                    self.b.out_of_turn(seat, kind, amount)
                else:
                    self.b.act(seat, kind, amount)
            i += 4
        self.replaying = False

    # ---------------------------------------------------------------- what the table sees

    def upcoming(self):
        """The seat to act: in the round under way, or the first of the round whose cards are
        out (the engine begins it at that seat's action)."""
        h = self.hand
        b = self.b
        if b is None:
            return self._opener(0)
        if b.over or not b.closed or b.round >= h.streets_done():
            return b.to_act
        start = self._opener(b.round + 1) if h.kind == G.STUD else b.order[0]
        i = b.order.index(start)
        for k in range(len(b.order)):
            s = b.order[(i + k) % len(b.order)]
            if b.can_act(s):
                return s
        return None

    def view(self):
        """The betting as status shows it: whose turn, the round, the pot, each seat's bet this
        round, its stack (when known) and contribution, what the seat to act may do. A round
        whose cards are out is begun first (as the next action or street would begin it), so
        the view is the same before and after a street refused for it."""
        b = self._sync() if self.b is not None else None
        out = {"structure": self.cfg["structure"], "to_act": self.upcoming()}
        if b is None:
            out["round"] = 0
            return out
        out["round"] = b.round
        out["pot"] = b.total()
        out["over"] = b.over
        seats = {}
        for s in b.seats:
            d = {"bet": b.bet[s], "in": b.put[s]}
            if b.known:
                d["stack"] = b.stack[s]
            if b.folded[s]:
                d["folded"] = True
            elif b.stack[s] == 0:
                d["allin"] = True
            seats[str(s)] = d
        out["seats"] = seats
        if b.to_act is not None and not b.closed:
            opts = {}
            for k, v in b.options().items():
                opts[k] = list(v) if isinstance(v, tuple) else v
            out["options"] = opts
        return out


def _show_key(up, razz):
    """How good the cards showing are (higher acts first): pairs and trips count, then the
    ranks; razz's lowest hand (ace low, pairs worst) gets the highest key."""
    counts = {}
    for c in up:
        r = c >> 2
        if razz:
            r = (r + 1) % 13
        counts[r] = counts.get(r, 0) + 1
    groups = sorted([(n, r) for r, n in counts.items()], reverse=True)
    if razz:
        pattern = [len(up) - len(counts)]
        ranks = sorted([c for c in counts], reverse=True)
        return tuple([-x for x in pattern] + [-r for r in ranks])
    return tuple([n for n, _ in groups] + [r for _, r in groups])
