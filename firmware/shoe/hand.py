# One hand at the table: the shoe's operations and the procedures it applies by itself.
# Every operation checks everything first (raising ShoeError) and only then changes state, so a
# rejected operation changes nothing. Cards change zone only through Zones.move().
from shoe.compat import const
from shoe import cards as C
from shoe import games as G
from shoe import house as H
from shoe.errors import ShoeError, E_ARG, E_STATE
from shoe.faults import MechanismFault, ROUTE_OUT, ROUTE_BURN
from shoe.progress import (  # noqa: F401 (the status values: the hand's users take them here)
    B_DONE, B_NOBURN, B_NOBURN_SEEN, B_OWED, COMPLETE, CTX_BURN, CTX_DEAL, CTX_DRAW, CTX_FLOP,
    CTX_FLOPBURN, CTX_REPLACE, CTX_STREET, DEALING, LEDGER, MISDEAL, DO_DEAL, DO_DRAW, DO_STREET,
    P_BURN, P_CARDS, P_DEAL, P_DRAW, P_DRAWBURN, STATUS_NAMES, Step, VOID)
from shoe.rng import cut
from shoe.shuffler import Plan
from shoe.zones import (Zones, STUB, BOARD, BURNS, MUCK, ASIDE, SEAT0, NOWHERE,
                        OP_SHUFFLE, OP_CUT, OP_PROC, OP_ACTION, OP_STATUS, OP_FAULT,
                        MIX_STUB)

# seat states
LIVE = const(1)
FOLDED = const(2)
DEAD = const(3)

ACTIONS = ("check", "call", "bet", "raise", "fold", "allin", "complete", "bringin")
CHIPS = (False, True, True, True, False, True, True, True)


class Hand:
    def __init__(self, game, seats, button, rules="tda2024", house=None, rng=None, mech=None,
                 order=None):
        """order: the deck in load order (first card out first); None shuffles with rng."""
        if game not in G.GAMES:
            raise ShoeError(E_ARG, "unknown game %r (games: %s)" % (game, ", ".join(G.names())))
        kind, deck_kind, hole, draws, maxp = G.GAMES[game]
        try:
            settings = H.profile(rules, house)
        except ValueError as e:
            raise ShoeError(E_ARG, str(e))
        seats = _check_seats(seats, maxp, game)
        if kind != G.STUD or button is not None:
            if not isinstance(button, int) or isinstance(button, bool) or not (
                    G.SEAT_MIN <= button <= G.SEAT_MAX):
                raise ShoeError(E_ARG, "button must be a seat number 1..10, not %r" % (button,))
        deck = C.deck(deck_kind)
        if order is not None:
            if len(order) != len(deck) or sorted(order) != deck:
                raise ShoeError(E_ARG, "deck must hold each of the game's %d cards once" % len(deck))
        self.game = game
        self.rules = rules
        self.house = settings
        self.kind = kind
        self.deck_kind = deck_kind
        self.hole = hole
        self.draws = draws
        self.button = button
        self.seats = seats
        self.deal_order = _deal_order(seats, button if kind != G.STUD else 0)
        self.rng = rng
        self.mech = mech
        self.z = Zones(deck, seats)
        self.seat_states = bytearray(G.SEAT_MAX + 1)
        for s in seats:
            self.seat_states[s] = LIVE
        self.status = DEALING
        self.reason = None
        self.reason_num = None
        self.initial_total = hole * len(seats)
        self.initial_done = 0
        self.nstreet = 0          # later streets dealt (board: 1 flop .. 3 river; stud: 1 = 4th)
        self.draw_round = 0
        self.window_closed = False
        self.n_actions = 0
        self.n_chips = 0
        self.dispensed = 0
        self.first_two = bytearray(b"\xff\xff")
        self.exposures = 0
        self.boxed_initial = 0
        self.extra_initial = 0
        self.replace_queue = []   # seats owed a card for an exposed one, after the deal
        self.down3 = []           # stud seats whose third card comes down (RP-10-A)
        self.burn_for = bytearray(b"\xff" * LEDGER)  # the burn ledger (B_*), by street
        self.returning = []       # aside cards to return to the stub before the next street
        self.step = Step()        # the step in progress: what a power cut or a fault interrupts
        self.last_street = None   # cards of the last street step, for a premature report
        self.discards = bytearray(C.NCODES)  # draw discards in the muck: round * 16 + seat
        self.bets = None          # the betting (shoe.bets.Bets) when the table is bet
        if order is None:
            self._reshuffle(MIX_STUB, False)
        else:
            stub = self.z.stub
            for i in range(len(order)):
                stub[len(order) - 1 - i] = order[i]
            self._load()

    # ---------------------------------------------------------------- queries

    def live(self, seat):
        return self.seat_states[seat] == LIVE

    def live_seats(self):
        return [s for s in self.deal_order if self.seat_states[s] == LIVE]

    def window_open(self):
        """The misdeal window (TDA 36 substantial action, or Robert's two actions)."""
        if self.window_closed:
            return False
        if self.house["misdeal_window"] == "tda36":
            return not (self.n_actions >= 3 or (self.n_actions >= 2 and self.n_chips >= 1))
        return self.n_actions < 2

    def initial_complete(self):
        return self.initial_done >= self.initial_total

    def streets_total(self):
        return self.draws if self.kind == G.DRAW else G.streets(self.kind)

    def streets_done(self):
        return self.draw_round if self.kind == G.DRAW else self.nstreet

    # What the table may do next, asked by the front panel (panel.py), the device and the
    # scenario runner instead of reading the step record (pokerkit's can_* style).

    def in_progress(self):
        """The hand is being dealt (not complete, misdealt or void)."""
        return self.status == DEALING

    def can_resume(self):
        """True while an operation a stopping fault stopped waits to be finished: the same
        command again finishes it (the mechanism goes on counting its cards), and every other
        dealing command is refused until then."""
        return self.step.stopped is not None

    def stopped_command(self):
        """The command that finishes what a stopping fault stopped, as (name, a, b): "deal",
        "street", "draw", "premature", or "report" with the seat and the card (1-based) whose
        replacement was stopped; None when nothing waits (can_resume() is False)."""
        return self.step.stopped

    # ---------------------------------------------------------------- checks

    def can_report_exposed(self):
        """(seat, index) of the card a dealer can report exposed (the last dealt face down to a
        seat and still there, face down; index 1-based), or None (shoe/irregular.py reads the
        log)."""
        return _irregular("last_down_card", self)

    def _check_dealing(self):
        if self.status != DEALING:
            raise ShoeError(E_STATE, "the hand is over (%s)" % STATUS_NAMES[self.status])

    def _check_seat(self, seat):
        if not isinstance(seat, int) or isinstance(seat, bool) or seat not in self.z.seats:
            raise ShoeError(E_ARG, "seat %r is not in this hand (seats: %s)" % (
                seat, ", ".join(str(s) for s in self.seats)))

    def _check_street(self):
        if not self.initial_complete():
            raise ShoeError(E_STATE, "the initial deal is not complete")
        if self.bets is not None:
            self.bets.before_street()
        if self.streets_done() >= self.streets_total():
            raise ShoeError(E_STATE, "no %s left in %s" % (
                "draw" if self.kind == G.DRAW else "street", self.game))
        if len(self.live_seats()) < 2:
            raise ShoeError(E_STATE, "fewer than two live hands: end the hand")

    # ---------------------------------------------------------------- operations

    def deal(self, count=None):
        """The initial deal, or only the next `count` cards of it. A deal a power cut
        interrupted is finished first (to the target it had)."""
        self._check_dealing()
        again = self._again(DO_DEAL)
        if self.step.kind == P_DEAL or again:
            self._start(DO_DEAL)
            self.last_street = None
            self._continue()
            return
        remaining = self.initial_total - self.initial_done
        if remaining <= 0:
            raise ShoeError(E_STATE, "the initial deal is already complete")
        if count is not None:
            if not isinstance(count, int) or isinstance(count, bool) or not (
                    1 <= count <= remaining):
                raise ShoeError(E_ARG, "cards must be 1..%d, not %r" % (remaining, count))
        self._start(DO_DEAL)
        self.last_street = None
        self.step.want = self.initial_done + (remaining if count is None else count)
        self.step.kind = P_DEAL
        self._finish_deal()

    def _finish_deal(self):
        r = self._deal_initial(self.step.want)
        if r >= 0:
            self.step.kind = 0
        return r

    def street(self):
        """The next street: burn, then the board cards or one card per live stud seat."""
        self._check_dealing()
        if self.kind == G.DRAW:
            raise ShoeError(E_STATE, "%s has draw rounds, not streets" % self.game)
        again = self._again(DO_STREET)
        if self.step.kind in (P_BURN, P_CARDS):  # a street a power cut or a fault interrupted
            self._start(DO_STREET)
            if self.last_street is None:
                self.last_street = []
            self._finish_street()
            return
        if again:  # the street is out; a procedure after it still owes cards
            self._start(DO_STREET)
            self._continue()
            return
        self._check_street()
        self._start(DO_STREET)
        self.window_closed = True
        self.nstreet += 1
        self.last_street = []
        if self.kind == G.BOARD:
            self._board_street()
        else:
            self._stud_street()

    def draw(self, discards):
        """One draw round: burn, then each live seat in turn discards and draws back to its
        hand size. A round a power cut interrupted is finished by the same request: cards a
        seat already threw in this round count as discarded, and the burn is not taken twice."""
        self._check_dealing()
        if self.kind != G.DRAW:
            raise ShoeError(E_STATE, "%s has no draw" % self.game)
        self._again(DO_DRAW)
        resuming = self.step.kind in (P_DRAWBURN, P_DRAW)
        if not resuming:
            self._check_street()
        if not isinstance(discards, dict):
            raise ShoeError(E_ARG, "discards must map seats to cards")
        tag = (self.draw_round if resuming else self.draw_round + 1) * 16
        for seat in sorted(discards):  # (a fixed order: the same first complaint everywhere)
            self._check_seat(seat)
            if not self.live(seat):
                raise ShoeError(E_STATE, "seat %d is not in the hand" % seat)
            held = [c & C.CODE for c in self.z.seats[seat]]
            seen = []
            for code in discards[seat]:
                thrown = resuming and self.z.where[code] == MUCK and \
                    self.discards[code] == tag + seat
                if (code not in held and not thrown) or code in seen:
                    raise ShoeError(E_ARG, "seat %d does not hold %s" % (seat, C.name(code)))
                seen.append(code)
        self._start(DO_DRAW)
        self.last_street = None
        if not resuming:
            self.window_closed = True
            self.draw_round += 1
            self.step.kind = P_DRAWBURN
        if self.step.kind == P_DRAWBURN:
            if self._burn(CTX_BURN) < 0:
                return
            self.step.kind = P_DRAW
        for seat in self.deal_order:
            if self.seat_states[seat] != LIVE or seat not in discards:
                continue
            for code in discards[seat]:
                if self.z.where[code] == SEAT0 + seat:
                    self.z.move(code, MUCK)
                    self.discards[code] = tag + seat
            while len(self.z.seats[seat]) < self.hole:
                if len(self.z.stub) <= 1:
                    self._draw_reshuffle(seat)
                if not self.z.stub:
                    self._proc("stub-exhausted", seat)
                    break
                if self._fill(SEAT0 + seat, False, CTX_DRAW) < 0:
                    return
        self.step.kind = 0

    def action(self, seat, kind, amount=None, oot=False, chips=None):
        """A betting action in turn; it feeds the misdeal window. A fold mucks the seat's cards.
        With the table's betting (self.bets) it is checked first and its amount logged; oot:
        reported as an action out of turn (the betting's procedure, docs/betting.md); chips:
        (put, smallest, flags), the chips the seat put out with it and how: the rulebooks'
        procedures (shoe.chips) make the action of them, logged after it."""
        self._check_dealing()
        pid = None
        if chips is not None:
            if self.bets is None or not self.initial_done or kind not in ACTIONS:
                raise ShoeError(E_STATE, "the chips put out are dealt with on a table that is "
                                "bet, once its cards are dealt")
            if self.step.stopped is not None:
                self._again(None)  # (refused: finish the stopped operation first)
            kind, amount, pid, to_pot = self.bets.resolve(seat, kind, amount, chips, oot)
            if kind is None:  # void (seed 003): nothing but the procedure; the seat acts again
                self._proc(pid, seat)
                return
        if self.bets is not None and self.initial_done and kind in ACTIONS:
            self.bets.check(seat, kind, amount, oot)
        elif oot:
            raise ShoeError(E_STATE, "an action out of turn is dealt with on a table that is bet")
        op = ("action", seat, ACTIONS.index(kind) if kind in ACTIONS else -1)
        if self._again(op):  # the cards it made the shoe deal first, then the action itself
            self._start(op)
            if self._continue() < 0:
                return
        else:
            self._check_seat(seat)
            if kind not in ACTIONS:
                raise ShoeError(E_ARG, "unknown action %r (actions: %s)" % (
                    kind, ", ".join(ACTIONS)))
            if not self.live(seat):
                raise ShoeError(E_STATE, "seat %d is not in the hand" % seat)
            if self.initial_done == 0:
                raise ShoeError(E_STATE, "no cards have been dealt yet")
            self._start(op)
            if not self.initial_complete():
                # a deal a power cut stopped is finished; otherwise the seats are short
                r = self._finish_deal() if self.step.kind == P_DEAL else \
                    self._short_at_action(seat)
                if r < 0:
                    return
        k = op[2]
        self.z.note(OP_ACTION, seat, k | (0x80 if oot else 0))
        if self.bets is None:  # (with betting, the bets count what the action really did)
            self.n_actions += 1
            if CHIPS[k]:
                self.n_chips += 1
        if kind == "fold" and self.seat_states[seat] == LIVE:
            self._kill(seat, FOLDED)
        if self.bets is not None and self.seat_states[seat] != DEAD:  # (a dead hand: folded)
            self.bets.act(seat, kind, amount, oot)
            if pid is not None:
                self.bets.chips_done(seat, pid, to_pot)

    def expose(self, seat, index):
        """By dealer error, that seat's index-th card (1-based, in the order received) was exposed."""
        return _irregular("expose", self, seat, index)

    def premature(self):
        """The cards of the last street step were dealt before betting had finished (RP-5)."""
        return _irregular("premature", self)

    def jam(self, mixed_with=(), order_kept=False):
        """The stub is disordered, optionally mixed with the muck and/or burns (RP-4)."""
        return _irregular("jam", self, mixed_with, order_kept)

    def misdeal(self):
        """The floor declares a misdeal: only while the misdeal window is open."""
        self._check_dealing()
        if not self.window_open():
            raise ShoeError(E_STATE, "the misdeal window has closed (%s): the hand must proceed" % (
                "TDA 36 substantial action" if self.house["misdeal_window"] == "tda36"
                else "two players have acted"))
        self._end(MISDEAL, "misdeal-floor")

    def end(self):
        """The hand is over. Cards kept aside for a later burn go to the muck."""
        self._check_dealing()
        self.last_street = None
        kept = [v for v in self.burn_for if v < 64] + self.returning
        if kept:
            self._proc("reserved-burn-mucked")
            for code in kept:
                self.z.move(code, MUCK)
            self.burn_for = bytearray(b"\xff" * LEDGER)
            self.returning = []
        self._over()
        self.status = COMPLETE
        self.z.note(OP_STATUS, COMPLETE)

    # ---------------------------------------------------------------- dealing

    def _initial_slot(self, i):
        n = len(self.deal_order)
        rnd = i // n
        seat = self.deal_order[i - rnd * n]
        up = self.kind == G.STUD and G.STUD_DEAL_UP[rnd] and seat not in self.down3
        return seat, up

    def _deal_initial(self, end):
        while self.initial_done < end:
            seat, up = self._initial_slot(self.initial_done)
            if self.seat_states[seat] != LIVE:
                self.initial_done += 1
                continue
            r = self._dispense(SEAT0 + seat, up, CTX_DEAL)
            if r < 0:
                return -1
            self.initial_done += r
        if self.initial_complete():
            return self._after_initial()
        return 0

    def _after_initial(self):
        if self._pay() < 0:
            return -1
        while self.replace_queue:
            seat = self.replace_queue.pop(0)
            self._proc("exposed-replaced", seat)
            if self._owe(SEAT0 + seat, False, CTX_REPLACE) < 0:
                return -1
        return 0

    def _board_street(self):
        s = self.nstreet
        if self.returning and s == 3:
            self._proc("premature-turn-return")
            self._gather(self.returning)
            self.returning = []
            self._reshuffle(MIX_STUB)  # (the river's burn was taken with the set-aside turn)
        self.step.want = len(self.z.board) + G.BOARD_STREETS[s - 1]
        self.step.kind = P_BURN
        self._finish_street()

    def _stud_street(self):
        s = self.nstreet
        community = s == G.STUD_LAST and self._short_stub()
        self.step.want = len(self.z.board) + 1 if community else 0
        self.step.kind = P_BURN
        self._finish_street()

    def _finish_street(self):
        """Burn, then the street's cards; re-entered after a power cut from where it stopped
        (step.kind says whether the burn is done; step.want is the board's target length, or
        0 for one card to each live stud seat)."""
        s = self.nstreet
        board = self.z.board
        flop = self.kind == G.BOARD and s == 1
        if self.step.kind == P_BURN:
            if self._burn(CTX_FLOPBURN if flop else CTX_BURN) < 0:
                return
            self.step.kind = P_CARDS
        want = self.step.want
        if want:
            ctx = CTX_FLOP if flop else CTX_STREET
            while len(board) < want:
                if self._dispense(BOARD, True, ctx) < 0:
                    return
        else:
            up = G.STUD_STREETS[s - 1]
            for seat in self.deal_order:
                if self.seat_states[seat] == LIVE and len(self.z.seats[seat]) < 3 + s:
                    if self._fill(SEAT0 + seat, up, CTX_STREET) < 0:
                        return
        self.step.kind = 0
        if flop and (self.burn_for[1] == B_NOBURN or self.burn_for[1] == B_NOBURN_SEEN):
            self._no_burn_flop(want - 3)
        elif flop and len(board) > want:
            self._four_card_flop(want - 3)

    def _short_stub(self):
        """RP-10-H, before 7th street. Returns True when a community card is dealt instead."""
        return _irregular("short_stub", self)

    # ---------------------------------------------------------------- the burn ledger

    def _burn(self, ctx):
        """The burn of the street (or draw round) being dealt, as the ledger has it: the top of
        the stub if it owes one, the card kept aside for it if there is one, none if its burn is
        taken (a premature street dealt again, a 39-A pick, a set-aside turn's river)."""
        n = self.streets_done()
        v = self.burn_for[n]
        if v == B_OWED:
            return self._fill(BURNS, False, ctx)  # (_dispense enters the card: _burned)
        if v < 64:
            self.z.move(v, BURNS)
            self.burn_for[n] = B_DONE | v
        return 1

    def _burned(self, n, code):
        """Street n's burn is taken: that card (a card kept for it moves on to the next)."""
        v = self.burn_for[n]
        self.burn_for[n] = B_DONE | code
        if v < 64:
            self._settle(v, True)

    def _keep_for_burn(self, code):
        """A card goes aside as the burn of the next street that owes one (a reserved burn);
        with no street left it is mucked when the hand ends."""
        self.z.move(code, ASIDE)
        self._settle(code, False)

    def _settle(self, code, first):
        """The cards kept aside as burns, code with them (first or last; None: none), go in
        their order to the streets after the one dealt that still owe a burn."""
        led = self.burn_for
        kept = []
        for n in range(self.streets_done() + 1, LEDGER):
            if led[n] < 64:
                kept.append(led[n])
                led[n] = B_OWED
        if code is not None:
            if first:
                kept.insert(0, code)
            else:
                kept.append(code)
        n = self.streets_done() + 1
        for code in kept:
            while n < LEDGER and led[n] != B_OWED:
                n += 1
            if n >= LEDGER:  # (more kept cards than the ledger holds: no street will take it)
                self._proc("reserved-burn-mucked")
                self.z.move(code, MUCK)
                continue
            led[n] = code
            n += 1

    def _fill(self, dest, up, ctx):
        """Feed until one card has landed in dest (scraps are replaced by the next card)."""
        while True:
            r = self._dispense(dest, up, ctx)
            if r != 0:
                return r

    def _dispense(self, dest, up, ctx):
        """One feed of the mechanism toward dest; reconcile what the reader saw.
        Returns 1 when a card landed in dest, 0 when it must be fed again, -1 when the hand ended."""
        if not self.z.stub:  # nothing left to feed: stop this operation, keep every card
            self._proc("stub-exhausted")
            return -1
        try:
            reads = self.mech.feed(ROUTE_BURN if dest == BURNS else ROUTE_OUT)
        except MechanismFault as e:  # the shoe stopped safe before this card was reported
            self.note_fault(e.code, dest, self.mech.retries)
            self.step.stopped = self.step.doing
            raise
        misrouted = self.mech.misrouted
        filled = 0
        for raw in reads:
            code = raw & C.CODE
            if not C.in_deck(code, self.deck_kind):
                if self._nonstandard(code):
                    return -1
                continue
            if self.z.where[code] != STUB:
                self.z.remove(code)
                self._end(VOID, "fouled-deck")
                return -1
            if raw & C.UP:
                if self._boxed(code, ctx):
                    return -1
                continue
            if self.z.stub[-1] != code:
                self._proc("out-of-sequence")
            if self.dispensed < 2:
                self.first_two[self.dispensed] = code
            self.dispensed += 1
            if filled:
                if self._extra(code, dest, up, ctx) < 0:
                    return -1
                continue
            filled = 1
            if dest == BURNS and misrouted:
                if ctx == CTX_FLOPBURN:  # the flop comes out with its burn (Hold'em 4, 39-B)
                    self.burn_for[1] = B_NOBURN_SEEN if misrouted == 2 else B_NOBURN
                    self.z.move(code, BOARD, True)
                    self.last_street.append(code)
                    continue
                self._proc("burn-misrouted")
            self.z.move(code, dest, up)
            if dest == BURNS:  # the street's burn (only _burn feeds to the burns)
                self._burned(self.streets_done(), code)
            if self.last_street is not None and dest != BURNS:
                self.last_street.append(code)
        return filled

    def _extra(self, code, dest, up, ctx):
        """A second card came out of one feed (double feed)."""
        return _irregular("extra", self, code, dest, up, ctx)

    def _nonstandard(self, code):
        """A joker or a card from another deck. True when it ends the hand."""
        return _irregular("nonstandard", self, code)

    def _boxed(self, code, ctx):
        """A card face up in the stub: a scrap, replaced by the next card."""
        return _irregular("boxed", self, code, ctx)

    # ---------------------------------------------------------------- procedures

    def _four_card_flop(self, before):
        return _irregular("four_card_flop", self, before)

    def _no_burn_flop(self, before):
        return _irregular("no_burn_flop", self, before)

    def _draw_reshuffle(self, seat):
        """The stub cannot cover a draw: last card plus earlier discards, reshuffled."""
        return _irregular("draw_reshuffle", self, seat)

    def _short_at_action(self, actor):
        """Procedure 9, missing cards: an action arrived while the initial deal is incomplete."""
        only_button = self.kind != G.STUD
        for i in range(self.initial_done, self.initial_total):
            seat, _ = self._initial_slot(i)
            if seat != self.deal_order[-1]:
                only_button = False
        if only_button:
            button = self.deal_order[-1]
            if actor == button:
                self._proc("button-dead", button)
                self._kill(button, DEAD)
                self.initial_done = self.initial_total
                return self._after_initial()
            self._proc("button-completed", button)
            return self._deal_rest()
        if self.house["short_hand"] == "misdeal" and self.window_open():
            self._end(MISDEAL, "misdeal-short")
            return -1
        self._proc("short-completed")
        return self._deal_rest()

    def _deal_rest(self):
        """The rest of the initial deal, as a deal step (a fault or power cut resumes it)."""
        self.step.want = self.initial_total
        self.step.kind = P_DEAL
        return self._finish_deal()

    # ---------------------------------------------------------------- stopping faults

    def note_fault(self, code, dest=NOWHERE, retries=0):
        """A stopping fault (shoe.faults) stopped the operation under way: logged, so that the
        host and the hand history have it; nothing else changes."""
        self.z.note(OP_FAULT, code, dest, min(retries, 255))

    def _again(self, op):
        """While a stopping fault's operation is unfinished: True when op repeats it (it is
        then continued, not started anew); any other dealing operation is refused."""
        it = self.step.stopped
        if it is None:
            return False
        if it != op:
            raise ShoeError(E_STATE, "the %s was stopped by a mechanism fault: repeat it to "
                                     "finish it first" % it[0])
        return True

    def _start(self, op):
        self.step.doing = op
        self.step.stopped = None

    def _continue(self):
        """Finish what a stopping fault stopped: a deal to its target (and its replacement
        cards), or the cards a procedure still owes."""
        if self.step.kind == P_DEAL:
            return self._finish_deal()
        if self.initial_complete():
            return self._after_initial()
        return 0

    def _owe(self, dest, up, ctx):
        self.step.owed.append((dest, up, ctx))
        return self._pay()

    def _pay(self):
        """Deal the cards procedures owe, in order. -1 when the hand ended or no card is left
        (nothing is owed any more then)."""
        owed = self.step.owed
        while owed:
            dest, up, ctx = owed[0]
            if self._fill(dest, up, ctx) < 0:
                del owed[:]
                return -1
            owed.pop(0)
        return 0

    def _over(self):
        """The hand ends: nothing is owed or waits to be repeated."""
        self.step.stopped = None
        del self.step.owed[:]

    # ---------------------------------------------------------------- helpers

    def _kill(self, seat, state):
        held = self.z.seats[seat]
        while held:
            self.z.move(held[0] & C.CODE, MUCK)
        self.seat_states[seat] = state
        if state == DEAD and self.bets is not None:  # a procedure killed it: out of the betting
            self.bets.kill(seat)

    def _gather(self, codes):
        """Cards back into the stub (face down), ahead of a reshuffle."""
        for code in list(codes):
            self.discards[code] = 0
            self.z.move(code, STUB)

    def _reshuffle(self, mask, log=True):
        """A face-down reshuffle of the stub in the mechanism (the carousel plan: each card into
        a random empty slot, unloaded in slot order), then a cut if the house says so."""
        stub = self.z.stub
        plan = Plan(stub, self.rng)  # the mechanism's plan: a uniform permutation
        stub[:] = plan.cards
        if log:
            self.z.note(OP_SHUFFLE, mask, len(stub))
        if self.house["cut_after_reshuffle"] and log:
            plan.rotate(cut(self.rng, stub))
            self.z.note(OP_CUT, len(stub))
        self._load(plan)

    def _load(self, plan=None):
        """The mechanism learns the stub; after a reshuffle, with the plan that realises it."""
        if self.mech is not None:
            self.mech.load(self.z.stub, plan)

    def _proc(self, pid, seat=0):
        self.z.note(OP_PROC, procedure(pid)[0], seat)

    def _end(self, status, pid):
        num, reason = procedure(pid)
        self.z.note(OP_PROC, num, 0)
        self._over()
        self.status = status
        self.reason_num, self.reason = num, reason
        self.last_street = None
        self.z.note(OP_STATUS, status)


def _irregular(name, *args):
    """An irregularity's procedure, in shoe/irregular.py: imported when a hand first needs one
    (a Pico holds an imported module's bytecode in its heap: a shoe pays for it from its first
    irregularity on, not from boot). It stays: imported again and again from the filesystem,
    each import left the heap more fragmented (tests/test_micropython.py's scenarios at 192K
    ran out)."""
    from shoe import irregular

    return getattr(irregular, name)(*args)


def procedure(pid):
    """(number, text) of a procedure by its id. The catalogue (shoe.procedures, its strings
    and tables: ~12 KB of a Pico's heap) is imported when a procedure first applies, not at
    boot; it stays then (imported again from source at each procedure, it left the unix port's
    192K heap too fragmented for tests/test_micropython.py's random scenarios)."""
    from shoe import procedures as P

    num = P.INDEX[pid]
    return num, P.text(num)


def _check_seats(seats, maxp, game):
    if not isinstance(seats, (list, tuple)):
        raise ShoeError(E_ARG, "seats must be a list of seat numbers")
    out = []
    for s in seats:
        if not isinstance(s, int) or isinstance(s, bool) or not (G.SEAT_MIN <= s <= G.SEAT_MAX):
            raise ShoeError(E_ARG, "impossible seat %r (seats are 1..10)" % (s,))
        if s in out:
            raise ShoeError(E_ARG, "seat %d listed twice" % s)
        out.append(s)
    if not (2 <= len(out) <= maxp):
        raise ShoeError(E_ARG, "%s deals to 2..%d seats, not %d" % (game, maxp, len(out)))
    out.sort()
    return out


def _deal_order(seats, button):
    """Clockwise (ascending, wrapping) from the first occupied seat after the button."""
    first = 0
    for i in range(len(seats)):
        if seats[i] > button:
            first = i
            break
    return seats[first:] + seats[:first]
