# The table's betting: structures, forced bets, whose turn, what each seat may do, and every
# action validated with its amount. Pure logic shared by the device and the host (no machine
# import): docs/betting.md says why it runs in the firmware core. Like shoe.hand, an operation
# checks everything first (raising ShoeError naming the rule) and only then changes state, so a
# refused action changes nothing.
#
# Amounts: a bet, raise, completion or all-in names the seat's total for the round ("raise to
# 600"); a call may name what it adds. Chips a seat put in the pot (antes, blinds, bets) are its
# contribution; the host builds the main and side pots from the contributions with
# facedown.pots (one place for that logic) and the device keeps them in its journal.
from shoe.compat import const
from shoe import games as G
from shoe import house as H
from shoe.errors import ShoeError, E_ARG, E_STATE

NL = const(0)
PL = const(1)
FL = const(2)
STRUCTURES = ("nl", "pl", "fl")
STRUCTURE_NAMES = ("no-limit", "pot-limit", "fixed-limit")

UNKNOWN = const(1 << 30)  # a stack nobody told the shoe: as good as unlimited
CAP = const(4)            # fixed limit: a bet and three raises (TDA 48, RRoP)

# the actions a seat reports; "bringin" is stud's forced first action (or its completion)
KINDS = ("fold", "check", "call", "bet", "raise", "complete", "bringin", "allin")

# the betting's house settings (reopen_limit, limit_short_allin, cap_heads_up, straddle, blind_before_ante,
# pl_full_blinds, under_raise, out_of_turn, excess_chips, no_chips) are rows of
# shoe.house.SETTINGS

# the rule a refusal names, per rulebook: (TDA 2024, Robert's Rules)
RULES = {
    "turn": ("TDA 50", "RRoP Button games 6"),
    "oot": ("TDA 53", "RRoP Action out of turn"),
    "minraise": ("TDA 43", "RRoP No-limit 4"),
    "minbet": ("TDA 43", "RRoP No-limit 3"),
    "reopen": ("TDA 47", "RRoP No-limit 5"),
    "cap": ("TDA 48", "RRoP Limit 6"),
    "potlimit": ("TDA 54", "RRoP Pot-limit 1"),
    "limit": ("TDA 48", "RRoP Limit 1"),
    "verbal": ("TDA 40", "RRoP Verbal 1"),
    "chips": ("TDA 41", "seed 003"),
    "oversized": ("TDA 44", "RRoP Oversized chip"),
    "multichip": ("TDA 45", "RRoP Multiple chips"),
    "string": ("TDA 56", "RRoP String raise"),
    "bringin": ("TDA RP-10", "RRoP Stud 2"),
    "over": ("TDA 50", "RRoP Button games 6"),
}


# an action out of turn is dealt with by the house setting out_of_turn, whatever the rulebook
OOT_RULES = {"tda53": "TDA 53", "robert": "RRoP Action out of turn", "home": "seed 003"}


def settings(rules, overrides=None):
    """The house settings of a rulebook with overrides (ValueError with a clear message)."""
    return H.profile(rules, overrides)


def _int(d, key, default, low=0):
    v = d.get(key, default)
    if not isinstance(v, int) or isinstance(v, bool) or v < low:
        raise ShoeError(E_ARG, "betting %s must be a whole number of chips >= %d, not %r" % (
            key, low, v))
    return v


CONFIG_KEYS = ("structure", "blinds", "straddles", "ante", "bb_ante", "bring_in", "small_bet",
               "big_bet", "cap", "chip", "stacks")


def _stacks(v, chip):
    """The stacks at the start of every hand: one number for every seat, or {seat: chips}; None:
    not told (an all-in then names its amount)."""
    if v is None:
        return None
    items = v.items() if isinstance(v, dict) else (("every seat", v),)
    for seat, chips in items:
        if seat != "every seat" and not (str(seat).isdigit() and
                                         G.SEAT_MIN <= int(seat) <= G.SEAT_MAX):
            raise ShoeError(E_ARG, "betting stacks: %r is not a seat 1..10" % (seat,))
        if not isinstance(chips, int) or isinstance(chips, bool) or chips < 1 or chips % chip:
            raise ShoeError(E_ARG, "betting stacks: %s's must be a whole number of chips >= 1, "
                            "a multiple of the chip (%d), not %r" % (
                                "seat " + str(seat) if seat != "every seat" else seat, chip,
                                chips))
    return v


def stacks_for(cfg, seats):
    """{seat: chips} at the start of a hand from the configuration's stacks, or None."""
    v = cfg.get("stacks")
    if v is None:
        return None
    if isinstance(v, dict):
        out = {}
        for s in seats:
            if str(s) not in v and s not in v:
                raise ShoeError(E_ARG, "betting stacks give no stack for seat %d" % s)
            out[s] = v.get(str(s), v.get(s))
        return out
    return dict((s, v) for s in seats)


def config(kind, d, house=None):
    """Check a betting configuration for a game kind and fill its defaults: a dict with every
    key of CONFIG_KEYS. Raises ShoeError (one line saying what to fix)."""
    if not isinstance(d, dict):
        raise ShoeError(E_ARG, "betting must be an object (structure, blinds, ante, ...)")
    for key in d:
        if key not in CONFIG_KEYS:
            raise ShoeError(E_ARG, "unknown betting key %r (keys: %s)" % (
                key, ", ".join(CONFIG_KEYS)))
    st = d.get("structure", "fl" if kind == G.STUD else "nl")
    if st not in STRUCTURES:
        raise ShoeError(E_ARG, "betting structure %r is not known (nl, pl or fl)" % (st,))
    out = {"structure": st}
    chip = out["chip"] = _int(d, "chip", 1, 1)
    out["ante"] = _int(d, "ante", 0)
    out["bb_ante"] = _int(d, "bb_ante", 0)
    out["cap"] = _int(d, "cap", CAP, 1)
    if kind == G.STUD:
        if st != "fl":
            raise ShoeError(E_ARG, "stud is dealt fixed-limit here (structure fl)")
        for key in ("blinds", "straddles", "bb_ante"):
            if d.get(key):
                raise ShoeError(E_ARG, "stud has no %s: it has ante, bring_in, small_bet, big_bet"
                                % key)
        small = out["small_bet"] = _int(d, "small_bet", 0, 1)
        out["big_bet"] = _int(d, "big_bet", 2 * small, 1)
        out["bring_in"] = _int(d, "bring_in", 0, 1)
        if out["bring_in"] > small:
            raise ShoeError(E_ARG, "the bring-in (%d) is more than the small bet (%d)" % (
                out["bring_in"], small))
        out["blinds"] = []
        out["straddles"] = []
    else:
        blinds = d.get("blinds")
        if not isinstance(blinds, list) or len(blinds) != 2:
            raise ShoeError(E_ARG, "betting needs blinds: [small blind, big blind]")
        sb = _int({"small blind": blinds[0]}, "small blind", 0)
        bb = _int({"big blind": blinds[1]}, "big blind", 0, 1)
        if sb > bb:
            raise ShoeError(E_ARG, "the small blind (%d) is more than the big blind (%d)" % (sb, bb))
        out["blinds"] = [sb, bb]
        straddles = d.get("straddles", [])
        if not isinstance(straddles, list):
            raise ShoeError(E_ARG, "betting straddles must be a list of amounts")
        if straddles and house is not None and house["straddle"] != "on":
            raise ShoeError(E_ARG, "straddles are off in this house (house setting straddle)")
        prev = bb
        for amount in straddles:
            a = _int({"straddle": amount}, "straddle", 0, 1)
            if a < 2 * prev:
                raise ShoeError(E_ARG, "a straddle must be at least twice the blind before it "
                                "(%d after %d)" % (a, prev))
            prev = a
        out["straddles"] = list(straddles)
        if out["ante"] and out["bb_ante"]:
            raise ShoeError(E_ARG, "give ante (every seat) or bb_ante (the big blind's), not both")
        out["small_bet"] = _int(d, "small_bet", bb, 1)
        out["big_bet"] = _int(d, "big_bet", 2 * out["small_bet"], 1)
        out["bring_in"] = 0
    out["stacks"] = _stacks(d.get("stacks"), chip)
    for key in ("ante", "bb_ante", "bring_in", "small_bet", "big_bet"):
        if out[key] % chip:
            raise ShoeError(E_ARG, "betting %s (%d) is not a multiple of the chip (%d)" % (
                key, out[key], chip))
    for v in out["blinds"] + out["straddles"]:
        if v % chip:
            raise ShoeError(E_ARG, "blind %d is not a multiple of the chip (%d)" % (v, chip))
    return out


def rounds_for(kind, draws):
    """Betting rounds in a hand of this kind: board 4, stud 5 (3rd to 7th), draw one more than
    its draws."""
    if kind == G.BOARD:
        return 4
    if kind == G.STUD:
        return 5
    return draws + 1


class Betting:
    def __init__(self, kind, seats, button, cfg, stacks=None, rules="tda2024", house=None,
                 draws=0, opener=None):
        """kind: games.BOARD/STUD/DRAW; seats: the seats dealt in; cfg: a config() result;
        stacks: {seat: chips} at the start of the hand, or None (not told: unlimited);
        opener: stud's bring-in seat (its lowest upcard, found by whoever sees the cards)."""
        try:
            self.house = settings(rules, house)
        except ValueError as e:
            raise ShoeError(E_ARG, str(e))
        self.rules = rules
        self.col = 0 if rules == "tda2024" else 1
        self.cfg = cfg
        self.kind = kind
        self.structure = STRUCTURES.index(cfg["structure"])
        self.nrounds = rounds_for(kind, draws)
        self.big_from = 2 if kind != G.DRAW else self.nrounds // 2
        n = G.SEAT_MAX + 1
        self.stack = [0] * n
        self.start = [0] * n
        self.bet = [0] * n     # this round
        self.put = [0] * n     # this hand: the seat's contribution (antes, blinds, bets)
        self.acted = [-1] * n  # the high bet when the seat last acted this round (-1: not yet)
        self.folded = bytearray(n)
        self.returned = [0] * n  # uncalled chips given back
        self.known = stacks is not None
        seats = sorted(seats)
        for s in seats:
            if stacks is None:
                v = UNKNOWN
            else:
                v = stacks.get(s, stacks.get(str(s)))
                if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                    raise ShoeError(E_ARG, "stack of seat %d must be a whole number of chips >= 1, "
                                    "not %r" % (s, v))
                if v % cfg["chip"]:
                    raise ShoeError(E_ARG, "stack of seat %d (%d) is not a multiple of the chip"
                                    % (s, v))
            self.stack[s] = self.start[s] = v
        if stacks is not None:
            for k in stacks:
                if int(k) not in seats:
                    raise ShoeError(E_ARG, "a stack for seat %s, which is not dealt in" % (k,))
        self.seats = seats
        if kind == G.STUD:
            self.order = seats
            if opener not in seats:
                raise ShoeError(E_ARG, "stud needs the bring-in seat (the lowest upcard): "
                                "one of %s" % ", ".join(str(s) for s in seats))
        else:
            if button not in seats and not (isinstance(button, int) and G.SEAT_MIN <= button
                                            <= G.SEAT_MAX):
                raise ShoeError(E_ARG, "button must be a seat number, not %r" % (button,))
            after = [s for s in seats if s > button]
            self.order = after + [s for s in seats if s <= button]
        self.button = button
        self.pot = 0          # chips collected from finished rounds (and antes)
        self.dead = 0         # dead money in the main pot (the big-blind ante)
        self.round = 0
        self.high = 0
        self.full = 0         # the last full bet or raise this round (the minimum raise)
        self.level = 0        # the total of the last full wager (blind, bet, raise) this round
        self.completions = []  # (round, seat, to, over): short all-ins completed (RRoP 6)
        self.nbets = 0        # bets and raises this round (fixed-limit cap)
        self.to_act = None
        self.closed = False   # this round's betting is complete
        self.over = False     # the hand's betting is over (one seat left, or the last round)
        self.bring_in = False  # stud: the opener must bring in or complete
        self.blind_seats = ()
        self.log = []         # (round, seat, kind, to, added): every chip movement, in order
        self.n_actions = 0    # actions in turn (for the misdeal window)
        self.n_chip_actions = 0
        self.pending = {}     # seat -> (kind, to, high then): an action out of turn, waiting
        self.held = {}        # seat -> chips an out-of-turn action put in (house rule "home")
        self.limit = {}       # seat -> what it may still do at its turn: "noraise", "callfold"
        self._post_forced(opener)

    # ---------------------------------------------------------------- queries

    def rule(self, key):
        return RULES[key][self.col]

    def live(self, s):
        return s in self.seats and not self.folded[s]

    def can_act(self, s):
        return self.live(s) and self.stack[s] > 0

    def contenders(self):
        return [s for s in self.order if not self.folded[s]]

    def total(self):
        """Every chip in the middle: the pot, this round's bets, chips an out-of-turn action
        put in, and dead money."""
        t = self.pot + self.dead
        for s in self.seats:
            t += self.bet[s]
        for s in self.held:
            t += self.held[s]
        return t

    def to_call(self, s):
        return min(self.high - self.bet[s], self.stack[s])

    def bet_size(self):
        return self.cfg["big_bet"] if self.round >= self.big_from else self.cfg["small_bet"]

    def min_bet(self):
        if self.structure == FL or self.kind == G.STUD:
            return self.bet_size()
        return self.cfg["blinds"][1]

    def _reopened(self, s):
        """TDA 47: a seat that has acted may raise again only facing at least a full raise
        (several short all-ins count together); in limit, half a bet by the house setting."""
        if self.acted[s] < 0:
            return True
        need = self.full
        if self.structure == FL:
            need = self.bet_size()
            if self.house["reopen_limit"] == "half":
                need = (need + 1) // 2
        return self.high - self.acted[s] >= need

    def _capped(self):
        if self.structure != FL:
            return False
        if self.house["cap_heads_up"] == "uncapped" and len(self.contenders()) == 2:
            return False
        return self.nbets >= self.cfg["cap"]

    def raise_range(self, s):
        """(lowest, highest) total a bet/raise/completion by seat s may reach this round, or None
        if it may not raise. An all-in below the lowest is allowed (it is an all-in)."""
        if self.high - self.bet[s] >= self.stack[s]:
            return None  # covered: it can only call (all-in) or fold
        if s in self.limit:
            return None  # an out-of-turn action took its raise (RRoP, seed 003)
        others = [t for t in self.order if t != s and self.can_act(t)]
        if not [t for t in others if self.stack[t] + self.bet[t] > self.high]:
            return None
        if not self._reopened(s) or self._capped():
            return None
        top = self.stack[s] + self.bet[s]
        if self.structure == FL:
            if self.kind == G.STUD and self.high < self.cfg["small_bet"] and self.round == 0:
                low = self.cfg["small_bet"]  # the completion
            else:
                low = (self.level if self._completes_short() else self.high) + self.bet_size()
            return (min(low, top), min(low, top))
        if self.high == 0:
            low = self.min_bet()
        else:
            low = self.high + max(self.full, self.min_bet())
        if self.structure == PL:
            return (min(low, top), min(max(low, self.pot_raise(s)), top))
        return (min(low, top), top)

    def pot_raise(self, s):
        """Pot limit: the raise to the size of the pot after the call (TDA 54: pre-flop a short
        blind counts as full by the house setting)."""
        middle = self.total()
        if self.round == 0 and self.house["pl_full_blinds"]:
            for seat, amount in self.blind_seats:
                if self.bet[seat] < amount and not self.folded[seat]:
                    middle += amount - self.bet[seat]
        call = self.high - self.bet[s]
        return self.high + middle + call

    def options(self, s=None):
        """What the seat to act may do: {kind: (low, high) or amount or None}."""
        if s is None:
            s = self.to_act
        if s is None or s != self.to_act:
            return {}
        out = {}
        if self.bring_in:
            out["bringin"] = min(self.cfg["bring_in"], self.stack[s])
            r = self.raise_range(s)
            if r:
                out["complete"] = r
            return out
        out["fold"] = None
        call = self.high - self.bet[s]
        if call <= 0:
            out["check"] = None
        else:
            out["call"] = min(call, self.stack[s])
        r = self.raise_range(s)
        if r:
            out["bet" if self.high == 0 else ("complete" if self._is_completion() else
                                               "raise")] = r
        return out

    def _completes_short(self):
        """House limit_short_allin "complete" (RRoP Betting and raising 6): in fixed limit, a
        seat facing all-ins that add less than half a bet to the last full wager may complete
        it: the raise is to that wager plus one bet, not one bet over the all-ins. (Half a bet
        or more is treated as a full bet: the raise is one bet over it, as under "raise".)"""
        if self.structure != FL or self.house["limit_short_allin"] != "complete" or \
                self.bring_in or self._is_completion():
            return False
        short = self.high - self.level
        return 0 < short and 2 * short < self.bet_size()

    def _is_completion(self):
        return self.kind == G.STUD and self.round == 0 and self.high < self.cfg["small_bet"]

    # ---------------------------------------------------------------- forced bets

    def _post(self, s, amount, kind, live):
        amount = min(amount, self.stack[s])
        if amount <= 0:
            return 0
        self.stack[s] -= amount
        if kind != "bb_ante":  # dead money: the main pot's, not the seat's contribution
            self.put[s] += amount
        if live:
            self.bet[s] += amount
        self.log.append((self.round, s, kind, self.bet[s], amount))
        return amount

    def _post_forced(self, opener):
        cfg = self.cfg
        if cfg["ante"]:
            for s in self.order:
                self.pot += self._post(s, cfg["ante"], "ante", False)
        if self.kind == G.STUD:
            self.full = cfg["small_bet"]
            # an opener all in on the ante passes the bring-in on clockwise
            self.to_act = self._next_from(opener, include=True)
            self.bring_in = len([s for s in self.order if self.can_act(s)]) > 1
            if not self.bring_in:
                self.to_act = None
            self._check_closed()
            return
        order = self.order
        forced = list(cfg["blinds"]) + list(cfg["straddles"])
        if len(order) == 2:  # heads-up: the button posts the small blind and acts first
            if cfg["straddles"]:
                raise ShoeError(E_ARG, "no straddle heads-up")
            blind_seats = [order[1], order[0]]
        else:
            if len(forced) >= len(order):
                raise ShoeError(E_ARG, "%d blinds and straddles for %d seats" % (
                    len(forced), len(order)))
            blind_seats = order[:len(forced)]
        self.blind_seats = tuple(zip(blind_seats, forced))
        bb_seat = blind_seats[1]
        bb_ante = cfg["bb_ante"]
        if bb_ante and not self.house["blind_before_ante"]:
            self.dead += self._post(bb_seat, bb_ante, "bb_ante", False)
        for i in range(len(forced)):
            self._post(blind_seats[i], forced[i], "blind" if i < 2 else "straddle", True)
        if bb_ante and self.house["blind_before_ante"]:
            self.dead += self._post(bb_seat, bb_ante, "bb_ante", False)
        self.high = max([self.bet[s] for s in order])
        if self.house["short_blind"] == "full":
            # a blind all in short (60 of a 100 big blind) is called as the full blind and the
            # minimum raise is over it (RRoP No-limit 2: a bet is at least the big blind; the
            # TDA's conventional ruling); "posted": called for what was posted (pokerkit's way)
            self.high = max(self.high, forced[-1])
        self.level = self.high
        # the minimum raise: the big blind, or the last straddle (it plays as the big blind)
        self.full = max(forced[-1], self.min_bet())
        self.nbets = 1 + len(cfg["straddles"])
        if len(order) == 2:
            self.to_act = self._next_from(order[1], include=True)  # the button
        else:
            self.to_act = self._next_from(blind_seats[-1])
        self._check_closed()

    # ---------------------------------------------------------------- the turn

    def _needs(self, s):
        return self.can_act(s) and (self.acted[s] < 0 or self.bet[s] < self.high)

    def _next_from(self, s, include=False):
        """The next seat clockwise from s (s itself first if include) that must act, or None."""
        order = self.order
        i = order.index(s)
        n = len(order)
        for k in range(0 if include else 1, n + (0 if include else 1)):
            t = order[(i + k) % n]
            if self._needs(t):
                return t
        return None

    def _check_closed(self):
        """The round ends when nobody is left who must act (TDA 50); the hand's betting ends when
        one seat is left or the last round closes."""
        live = self.contenders()
        if len(live) <= 1:
            self._close_round()
            self.over = True
            return
        if self.bring_in:
            return
        able = [s for s in live if self.stack[s] > 0]
        if self.to_act is not None and len(able) == 1 and self.bet[able[0]] >= self.high:
            self.to_act = None  # the one seat with chips faces nothing: no one to bet against
        if self.to_act is None:
            self._close_round()
            if self.round >= self.nrounds - 1:
                self.over = True
            elif len([s for s in live if self.stack[s] > 0]) <= 1:
                self.over = True  # all in: the rest of the cards come without betting

    def _close_round(self):
        """Uncalled chips back to their seat, the round's bets into the pot."""
        self.to_act = None
        self.closed = True
        bets = sorted([self.bet[s] for s in self.seats], reverse=True)
        if bets and bets[0] > (bets[1] if len(bets) > 1 else 0):
            top = [s for s in self.seats if self.bet[s] == bets[0]][0]
            back = bets[0] - (bets[1] if len(bets) > 1 else 0)
            self.bet[top] -= back
            self.put[top] -= back
            self.stack[top] += back
            self.returned[top] += back
            self.log.append((self.round, top, "return", self.bet[top], back))
        for s in self.seats:
            self.pot += self.bet[s]
            self.bet[s] = 0
        for s in self.held:  # an out-of-turn action whose turn never came: its chips stay
            self.pot += self.held[s]
        self.held = {}
        self.pending = {}
        self.limit = {}

    def next_round(self, opener=None):
        """The next betting round begins (after its cards are dealt). Stud names the opener
        (the best hand showing); board and draw games start left of the button."""
        if not self.closed or self.over:
            raise ShoeError(E_STATE, "the betting round is not over (%s)" % self.rule("over")
                            if not self.closed else "the betting is over for this hand")
        if self.kind == G.STUD and (opener is None or not self.live(opener)):
            raise ShoeError(E_ARG, "stud needs the opener, a seat in the hand: the best hand "
                            "showing")
        self.round += 1
        self.high = 0
        self.level = 0
        self.nbets = 0
        self.full = self.min_bet()
        self.closed = False
        for s in self.seats:
            self.acted[s] = -1
        start = opener if self.kind == G.STUD else self.order[0]
        self.to_act = self._next_from(start, include=True)
        self._check_closed()
        self._turn_comes()

    # ---------------------------------------------------------------- actions

    def _refuse(self, key, text, code=E_ARG):
        rule = OOT_RULES[self.house["out_of_turn"]] if key == "oot" else self.rule(key)
        raise ShoeError(code, "%s (%s)" % (text, rule))

    def check(self, s, kind, amount=None):
        """Validate seat s's action in turn; return (kind, to): what it does, the seat's total
        for the round after it. Raises ShoeError naming the rule; changes nothing."""
        if self.over:
            raise ShoeError(E_STATE, "the betting is over for this hand")
        if self.closed:
            raise ShoeError(E_STATE, "the betting round is over: deal the next street")
        if kind not in KINDS:
            raise ShoeError(E_ARG, "unknown action %r (actions: %s)" % (kind, ", ".join(KINDS)))
        if s not in self.seats:
            raise ShoeError(E_ARG, "seat %r is not in this hand" % (s,))
        if self.folded[s]:
            self._refuse("turn", "seat %d has folded" % s, E_STATE)
        if self.stack[s] == 0:
            self._refuse("turn", "seat %d is all in" % s, E_STATE)
        if s != self.to_act:
            self._refuse("turn", "seat %d acted out of turn: seat %d is to act" % (
                s, self.to_act), E_STATE)
        if amount is not None and (not isinstance(amount, int) or isinstance(amount, bool)
                                   or amount < 0):
            raise ShoeError(E_ARG, "an amount is a whole number of chips, not %r" % (amount,))
        if amount is not None and amount % self.cfg["chip"]:
            raise ShoeError(E_ARG, "%d is not a multiple of the smallest chip (%d)" % (
                amount, self.cfg["chip"]))
        opts = self.options(s)
        top = self.stack[s] + self.bet[s]
        if kind == "allin":
            if not self.known:
                if amount is None:
                    raise ShoeError(E_ARG, "the stacks are not known: give the all-in's amount "
                                    "(allin N, the seat's total for the round)")
                top = amount
            elif amount is not None and amount != top:
                self._refuse("chips", "seat %d's all-in is to %d, not %d" % (s, top, amount))
            if top <= self.bet[s]:
                raise ShoeError(E_ARG, "an all-in to %d is not more than seat %d has bet (%d)"
                                % (top, s, self.bet[s]))
            if self.bring_in:
                if top <= self.cfg["bring_in"]:
                    return "bringin", top
                kind = "complete"
            elif top <= self.high:
                return "call", top
            else:
                kind = "bet" if self.high == 0 else (
                    "complete" if self._is_completion() else "raise")
            amount = top
        if kind not in opts:
            if kind in ("bet", "raise", "complete") and self.high > 0 and kind == "bet":
                self._refuse("turn", "there is a bet of %d to seat %d: call, raise or fold"
                             % (self.high, s))
            if kind in ("raise", "complete", "bet"):
                if self.bring_in:
                    self._refuse("bringin", "seat %d must bring in or complete" % s)
                if self.high == 0 and kind == "raise":
                    self._refuse("turn", "nothing to raise: seat %d may check or bet" % s)
                if self.high - self.bet[s] >= self.stack[s]:
                    self._refuse("turn", "seat %d is covered: it may call all in or fold" % s)
                if s in self.limit:
                    self._refuse("oot", "seat %d acted out of turn: it may call or fold, not "
                                 "raise" % s)
                if not self._reopened(s):
                    self._refuse("reopen", "seat %d may not raise: a short all-in did not "
                                 "reopen the betting" % s)
                if self._capped():
                    self._refuse("cap", "the betting is capped at %d bets" % self.cfg["cap"])
                self._refuse("turn", "no seat is left to call a raise: seat %d may call or fold"
                             % s)
            if kind == "check":
                self._refuse("turn", "seat %d faces a bet of %d: call, raise or fold" % (
                    s, self.high - self.bet[s]))
            if kind == "call":
                self._refuse("turn", "nothing to call: seat %d may check or bet" % s)
            if kind == "fold" and self.bring_in:
                self._refuse("bringin", "seat %d must bring in or complete" % s)
            self._refuse("bringin" if kind == "bringin" else "turn",
                         "seat %d may %s" % (s, ", ".join(sorted(opts))))
        if kind == "fold" or kind == "check":
            if amount:
                raise ShoeError(E_ARG, "a %s has no amount" % kind)
            return kind, self.bet[s]
        if kind == "call":
            add = opts["call"]
            if amount is not None and amount != add and amount != self.bet[s] + add:
                self._refuse("chips", "the call is %d, not %d" % (add, amount))
            return kind, self.bet[s] + add
        if kind == "bringin":
            if amount is not None and amount != opts["bringin"]:
                self._refuse("bringin", "the bring-in is %d, not %d" % (opts["bringin"], amount))
            return kind, self.bet[s] + opts["bringin"]
        low, high = opts[kind]
        if self.bring_in and amount is not None and amount == top and \
                amount <= self.cfg["bring_in"]:
            return "bringin", top  # all in for the bring-in or less
        if amount is None:
            if self.structure != FL and kind != "complete":
                raise ShoeError(E_ARG, "a %s needs its amount: %s N, the seat's total for the "
                                "round (%d to %d)" % (kind, kind, low, high))
            amount = low
        if amount < low and amount != top:
            if amount <= self.high:
                self._refuse("minraise", "a %s to %d is no raise: the bet is %d" % (
                    kind, amount, self.high))
            self._refuse("minraise" if self.high else "minbet",
                         "a %s to %d is under the minimum, %d" % (kind, amount, low))
        if amount > high:
            if amount > top:
                self._refuse("chips", "a %s to %d is more than seat %d has (%d)" % (
                    kind, amount, s, top))
            key = "potlimit" if self.structure == PL else "limit"
            what = "the pot limit" if self.structure == PL else "the limit"
            self._refuse(key, "a %s to %d is over %s, %d" % (kind, amount, what, high))
        return kind, amount

    def _range_unknown(self, s, top):
        saved = self.stack[s]
        self.stack[s] = top - self.bet[s]
        try:
            return self.raise_range(s)
        finally:
            self.stack[s] = saved

    def act(self, s, kind, amount=None):
        """Seat s acts in turn: validated by check(), then applied. An all-in with the stacks
        unknown tells the shoe the seat's stack. Returns the record (round, seat, kind, to,
        added)."""
        kind2, to = self.check(s, kind, amount)
        if kind == "allin" and not self.known:
            self.stack[s] = to - self.bet[s]
        return self._apply(s, kind2, to)

    def _apply(self, s, kind, to):
        self.n_actions += 1
        added = to - self.bet[s]
        if added > 0:
            self.n_chip_actions += 1
            self.stack[s] -= added
            self.put[s] += added
            self.bet[s] = to
        if kind == "fold":
            self.folded[s] = 1
        elif kind == "bringin":
            self.bring_in = False
            self.high = max(self.high, to)
        elif to > self.high:
            raise_by = to - self.high
            if self.bring_in or self._is_completion():
                full = to >= self.cfg["small_bet"]
            elif self._completes_short():
                full = to >= self.level + self.bet_size()
                if full:  # what a full bet over the all-ins would have been
                    self.completions.append((self.round, s, to, self.high + self.bet_size()))
            elif self.structure == FL:
                size = self.bet_size()
                full = raise_by >= size or (self.house["reopen_limit"] == "half" and
                                            2 * raise_by >= size)
            else:
                full = raise_by >= self.full
            self.bring_in = False
            if full:
                if self.structure != FL:
                    self.full = max(self.full, raise_by)
                self.level = to
                self.nbets += 1
                for t in self.seats:  # a full bet or raise reopens the betting for everyone
                    self.acted[t] = -1
            self.high = to
        self.acted[s] = self.high
        self.limit.pop(s, None)
        rec = (self.round, s, kind, self.bet[s], added)
        self.log.append(rec)
        self.to_act = self._next_from(s)
        self._check_closed()
        self._turn_comes()
        return rec

    def kill(self, s):
        """A dealing procedure killed seat s's hand (e.g. TDA 37: the button acted short of
        cards): it is folded, whatever the turn, and is no action; the chips it put in stay in
        the pot, and an action it made out of turn is dropped (chips it put in stay too). The
        turn moves on if it was the seat's, and the round or the hand ends if that leaves no one
        to act or one seat."""
        if not self.live(s):
            return
        self.folded[s] = 1
        self.pending.pop(s, None)
        self.limit.pop(s, None)
        self.bet[s] += self.held.pop(s, 0)
        self.log.append((self.round, s, "dead", self.bet[s], 0))
        if self.over:
            return
        if self.closed:
            if len(self.contenders()) <= 1:
                self.over = True
            return
        if self.to_act == s:
            self.to_act = self._next_from(s)
        self._check_closed()
        self._turn_comes()

    def to_pot(self, s, n):
        """Chips seat s put out over its declaration that stay in the pot (house excess_chips
        stays, seed 003): out of its stack, dead money in the main pot, no bet."""
        self.stack[s] -= n
        self.dead += n
        self.log.append((self.round, s, "excess", self.bet[s], n))

    # ---------------------------------------------------------------- action out of turn

    def out_of_turn(self, s, kind, amount=None, dry=False):
        """Seat s acted before its turn, as the dealer reports it. The action waits for the
        seat's turn (the others act as if nothing happened) and is then dealt with by the house
        setting out_of_turn: tda53 (TDA 53: binding if the action to it has not changed; if it
        has, a bet or raise is taken back and the seat has every option; a fold binds), robert
        (RRoP: the same, but a check or call out of turn may not become a bet or raise), home
        (seed 003: its chips go in now and stay; a first bet of the round stands; facing a bet
        it completes or folds, chips over the call go to the pot and are no raise; a fold
        binds unless new bets came: then it pays them). Returns the log record; dry: only
        check it (ShoeError), change nothing."""
        if self.over or self.closed:
            raise ShoeError(E_STATE, "the betting round is over: deal the next street")
        if kind not in ("fold", "check", "call", "bet", "raise", "allin"):
            raise ShoeError(E_ARG, "an action out of turn is a fold, check, call, bet, raise "
                            "or all-in, not %r" % (kind,))
        if s not in self.seats or self.folded[s] or self.stack[s] == 0:
            self._refuse("oot", "seat %r is not a seat that may act" % (s,))
        if s == self.to_act:
            self._refuse("oot", "seat %d is the one to act: report its action in turn" % s)
        if s in self.pending:
            self._refuse("oot", "seat %d already acted out of turn this round" % s)
        rule = self.house["out_of_turn"]
        to = self.bet[s]
        if kind == "call":
            to = min(self.high, self.bet[s] + self.stack[s])
        elif kind in ("bet", "raise"):
            if amount is None:
                if self.structure != FL:
                    raise ShoeError(E_ARG, "a %s out of turn needs its amount" % kind)
                amount = self.high + self.bet_size()
            to = amount
        elif kind == "allin":
            to = self.bet[s] + self.stack[s]
        if to > self.bet[s] + self.stack[s]:
            self._refuse("chips", "a %s to %d is more than seat %d has (%d)" % (
                kind, to, s, self.bet[s] + self.stack[s]))
        if dry:
            return None
        if kind == "check" and self.high > self.bet[s]:
            kind = "call" if rule == "home" else kind  # (a check facing a bet binds nothing)
        self.pending[s] = (kind, to, self.high)
        add = 0
        if rule == "home" and to > self.bet[s]:
            add = to - self.bet[s]
            self.stack[s] -= add
            self.put[s] += add
            self.held[s] = add
        rec = (self.round, s, "oot-" + kind, to, add)
        self.log.append(rec)
        return rec

    def _turn_comes(self):
        """A seat that acted out of turn is now to act: its action is dealt with (see
        out_of_turn); what is left to it waits for its action in turn."""
        while not self.closed and self.to_act in self.pending:
            s = self.to_act
            kind, to, high_then = self.pending.pop(s)
            changed = self.high != high_then
            rule = self.house["out_of_turn"]
            if rule == "home":
                held = self.held.pop(s, 0)
                self.bet[s] += held  # its chips join its bet for the round
                if kind == "fold":
                    if changed and self.bet[s] < self.high:  # it pays the new bets, then out
                        add = min(self.high - self.bet[s], self.stack[s])
                        self.stack[s] -= add
                        self.put[s] += add
                        self.bet[s] += add
                        self.log.append((self.round, s, "oot-pays", self.bet[s], add))
                    self._apply(s, "fold", self.bet[s])
                    continue
                if self.bet[s] < self.high:
                    self.limit[s] = "callfold"  # it completes or folds
                    self.log.append((self.round, s, "oot-complete", self.bet[s], 0))
                    return
                if high_then == 0 and not changed and kind in ("bet", "raise", "allin"):
                    self.bet[s] -= held  # the round's first bet stands, as a bet
                    self.stack[s] += held
                    self.put[s] -= held
                    self._apply(s, "bet", to)
                    continue
                excess = self.bet[s] - self.high  # a call; over it, no raise: to the pot
                if excess > 0:
                    self.bet[s] -= excess
                    self.put[s] -= excess
                    self.dead += excess
                    self.log.append((self.round, s, "oot-excess", self.bet[s], excess))
                self._apply(s, "call" if self.high > 0 else "check", self.bet[s])
                continue
            if kind == "fold":
                self._apply(s, "fold", self.bet[s])  # a fold out of turn binds
                continue
            if not changed:
                try:
                    kind2, to2 = self.check(s, kind, to if kind in ("bet", "raise") else None)
                except ShoeError:
                    self.log.append((self.round, s, "oot-void", self.bet[s], 0))
                    return
                self.log.append((self.round, s, "oot-binds", to2, 0))
                self._apply(s, kind2, to2)
                continue
            if rule == "robert" and kind in ("check", "call"):
                self.limit[s] = "noraise"
            self.log.append((self.round, s, "oot-changed", self.bet[s], 0))
            return

    # ---------------------------------------------------------------- the end

    def contributions(self):
        return {s: self.put[s] for s in self.seats}

    def winner_by_fold(self):
        live = self.contenders()
        return live[0] if len(live) == 1 else None

    def award(self, payouts):
        """Pay the pot: payouts {seat: chips} must sum to it (the host's split, or the one seat
        left). Returns the stacks."""
        if not self.over:
            raise ShoeError(E_STATE, "the betting is not over")
        total = 0
        for s in payouts:
            if s not in self.seats or self.folded[s]:
                raise ShoeError(E_ARG, "seat %r cannot win: it is not in the hand" % (s,))
            total += payouts[s]
        if total != self.total():
            raise ShoeError(E_ARG, "the payouts (%d) are not the pot (%d)" % (total, self.total()))
        for s in payouts:
            self.stack[s] += payouts[s]
        self.pot = 0
        self.dead = 0
        return {s: self.stack[s] for s in self.seats}
