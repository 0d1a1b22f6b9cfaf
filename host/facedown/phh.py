"""Export a shoe's hand record as PHH, the open poker hand-history format pokerkit reads.

`dumps(record)` is the PHH text (TOML) of a hand record (what `facedown replay --json` prints);
`to_history(record)` is the same as a `pokerkit.HandHistory`. Every export loads with
`pokerkit.HandHistory.loads` and replays: the actions are checked against pokerkit's own state
while they are written, and the finished history is replayed once more before it is returned.

The shoe knows every card but no chips, and logs only the betting actions someone reported. So:
chip amounts are nominal (user-configurable defaults), bets and raises are the minimum legal
amount, an all-in is the largest legal amount, and betting actions the log lacks are added as
check/call (marked `# added`) where pokerkit needs them to reach the next street. The cards are
the hand's outcome: each player is dealt the cards they ended with (or held when they folded),
the board is the final board; movements PHH cannot say (burns, premature cards returned to the
stub, replaced exposed cards, reshuffles) are kept in user fields (`_burns`, `_log`, ...).
docs/phh.md has the mapping and every approximation.
"""

import copy
import warnings

from pokerkit import HandHistory
from pokerkit.notation import parse_action

from .errors import UserError

FLOP, STUD, DRAW = "flop", "stud", "draw"


class _Game:
    def __init__(self, family, variant, holes, streets, exported_holes=None, note=None,
                 variants=None):
        self.family = family
        self.variant = variant          # the default PHH variant code
        self.holes = holes              # cards in a player's hand
        self.final_street = streets     # pokerkit's index of the last street
        self.exported_holes = exported_holes or holes
        self.note = note                # what the variant approximates, if anything
        self.variants = variants or (variant,)  # codes a caller may choose instead


GAMES = {
    "holdem": _Game(FLOP, "NT", 2, 3, variants=("NT", "FT")),
    "omaha": _Game(FLOP, "PO", 4, 3),
    "omaha5": _Game(FLOP, "PO", 5, 3, exported_holes=4, note=(
        "PHH has no five-card Omaha: exported as PO (pot-limit Omaha) with each player's first "
        "four hole cards; every player's full hand is in _hole_cards")),
    "omaha6": _Game(FLOP, "PO", 6, 3, exported_holes=4, note=(
        "PHH has no six-card Omaha: exported as PO (pot-limit Omaha) with each player's first "
        "four hole cards; every player's full hand is in _hole_cards")),
    "shortdeck": _Game(FLOP, "NS", 2, 3),
    "stud": _Game(STUD, "F7S", 7, 4),
    "stud8": _Game(STUD, "F7S/8", 7, 4),
    "razz": _Game(STUD, "FR", 7, 4),
    "draw5": _Game(DRAW, "N2L1D", 5, 1, note=(
        "PHH has no five-card draw (high): exported as N2L1D, no-limit 2-7 single draw, the "
        "same deal, draw and betting structure; pokerkit ranks its showdown as 2-7 lowball")),
    "triple27": _Game(DRAW, "F2L3D", 5, 3),
}

# The nominal chips (the shoe records none). None: derived from the others, per game.
DEFAULTS = {
    "stacks": None,      # a table that is bet: the seats' starting stacks, in PHH order
    "blinds": None,      # ... its blinds and straddles, in PHH order
    "antes": None,       # ... its antes (the big-blind ante), in PHH order
    "variant": None,     # holdem only: "NT" (no-limit, default) or "FT" (fixed-limit)
    "stack": 200,        # every player's starting stack
    "small_blind": 1,
    "big_blind": 2,
    "ante": None,        # 0 in blind games, 1 in stud games
    "bring_in": 2,       # stud games
    "small_bet": None,   # fixed-limit: big_blind in blind games, 4 in stud games
    "big_bet": None,     # fixed-limit: twice small_bet
    "min_bet": None,     # no-limit / pot-limit: big_blind
    "showdown": True,    # play a complete hand that reached its last street to the showdown
}

_REQUIRED = HandHistory.required_field_names
_REOPENING = ("bet", "raise", "allin")
_ENGINE_ACTIONS = ("fold", "check", "call", "bet", "raise", "complete", "allin")  # applied


def _options(record, game, defaults):
    unknown = sorted(set(defaults) - set(DEFAULTS))
    if unknown:
        raise TypeError("unknown PHH option(s): %s (options: %s)" % (
            ", ".join(unknown), ", ".join(DEFAULTS)))
    o = dict(DEFAULTS)
    o.update({k: v for k, v in defaults.items() if v is not None})
    variant = o["variant"] or game.variant
    if variant not in game.variants:
        raise UserError("PHH variant %r does not fit %s (choose from: %s)" % (
            variant, record.get("game"), ", ".join(game.variants)))
    o["variant"] = variant
    stud = game.family == STUD
    if o["ante"] is None:
        o["ante"] = 1 if stud else 0
    if o["small_bet"] is None:
        o["small_bet"] = 4 if stud else o["big_blind"]
    if o["big_bet"] is None:
        o["big_bet"] = 2 * o["small_bet"]
    if o["min_bet"] is None:
        o["min_bet"] = o["big_blind"]
    for key in ("stack", "small_blind", "big_blind", "ante", "bring_in", "small_bet",
                "big_bet", "min_bet"):
        if o[key] is None:
            o[key] = DEFAULTS[key] or 0
        if not isinstance(o[key], int) or isinstance(o[key], bool) or o[key] < 0:
            raise UserError("PHH option %s must be a whole number of chips, not %r" % (
                key, o[key]))
    return o


class _Act:
    """A betting action from the log (or a dead hand's fold the log implies)."""

    def __init__(self, index, seat, kind, street, comment=None, total=None):
        self.index, self.seat, self.kind, self.street = index, seat, kind, street
        self.comment = comment
        self.total = total  # a table that is bet: the seat's total for the round after it


def _board_street(n):
    return 0 if n < 3 else min(n - 2, 3)


class _Table:
    """What the record says, replayed zone by zone: hands per street, deaths, actions."""

    def __init__(self, record, game):
        self.record = record
        self.game = game
        self.log = record.get("log") or []
        seats = sorted(int(s) for s in record.get("seats", {}))
        if len(seats) < 2:
            raise UserError("a PHH hand needs at least two players; the record has %d seat(s)"
                            % len(seats))
        if game.family == STUD:
            self.order = seats   # stud: no button; the lowest seat is dealt first
        else:
            button = record.get("button")
            after = [s for s in seats if isinstance(button, int) and s > button]
            self.order = after + [s for s in seats if s not in after]
        self.p = {seat: i for i, seat in enumerate(self.order)}
        self._replay()

    def _replay(self):
        fam = self.game.family
        hands = {s: [] for s in self.order}          # seat -> [[card, up], ...]
        board = []
        phase = 0                                    # stud/draw: streets begun (burn groups)
        burn_open = False
        self.phase_at = []                           # street of each log entry
        self.snaps = {0: {s: [] for s in self.order}}
        self.up = {}                                 # (seat, card) -> last up flag seen there
        self.deaths = {}                             # seat -> (index, street, cards, synthetic)
        runs = {}                                    # seat -> (index, cards) of a removal run
        emptied = {}                                 # seat -> the run that emptied it
        last_removal = {}
        last_dealt_street = 0
        for i, e in enumerate(self.log):
            if "card" in e:
                card, to, frm = e["card"], e.get("to"), e.get("from")
                if to == "burns" and frm in (None, "stub", "aside"):
                    if not burn_open and fam != FLOP:
                        phase += 1
                    burn_open = True
                elif isinstance(to, str) and (to.startswith("seat:") or to == "board"):
                    burn_open = False
                if isinstance(frm, str) and frm.startswith("seat:"):
                    s = int(frm[5:])
                    held = hands.setdefault(s, [])
                    if frm == to:   # turned over in place
                        for h in held:
                            if h[0] == card:
                                h[1] = bool(e.get("up"))
                                self.up[(s, card)] = h[1]
                    else:
                        if last_removal.get(s) != i - 1:
                            runs[s] = (i, [h[0] for h in held])
                        last_removal[s] = i
                        held[:] = [h for h in held if h[0] != card]
                        if not held:
                            emptied[s] = runs[s]
                elif frm == "board" and card in board:
                    board.remove(card)
                if isinstance(to, str) and to.startswith("seat:") and frm != to:
                    s = int(to[5:])
                    hands.setdefault(s, []).append([card, bool(e.get("up"))])
                    self.up[(s, card)] = bool(e.get("up"))
                    emptied.pop(s, None)
                elif to == "board":
                    board.append(card)
            street = _board_street(len(board)) if fam == FLOP else phase
            self.phase_at.append(street)
            if "card" in e and (e.get("to") in ("board", "burns") or
                                str(e.get("to")).startswith("seat:")):
                last_dealt_street = max(last_dealt_street, street)
            if e.get("action") == "fold" and isinstance(e.get("seat"), int):
                s = e["seat"]
                if s not in self.deaths:
                    self.deaths[s] = (i, street, [h[0] for h in hands.get(s, [])], False)
            if fam != FLOP:
                self.snaps[phase] = {s: [h[0] for h in hands.get(s, [])] for s in self.order}
        self.final = {s: [h[0] for h in hands.get(s, [])] for s in self.order}
        self.board = list(self.record.get("board") or board)
        for s in self.order:    # hands killed without a fold: a dead hand's implied fold
            if not self.final[s] and s not in self.deaths and s in emptied:
                i, cards = emptied[s]
                self.deaths[s] = (i, self.phase_at[i], cards, True)
        if fam == FLOP:
            self.last = _board_street(len(self.board))
        else:
            self.last = min(last_dealt_street, self.game.final_street)
        self.acts = self._actions()

    def _actions(self):
        engine = self._bet_actions()
        acts = engine if engine is not None else []
        for i, e in enumerate(self.log if engine is None else ()):
            if "action" in e and e.get("seat") in self.p:
                acts.append(_Act(i, e["seat"], e["action"], self.phase_at[i],
                                 total=e.get("total")))
        for s, (i, street, _, synthetic) in self.deaths.items():
            if synthetic:
                acts.append(_Act(i, s, "fold", street, "dead hand%s" % self._why(i, s)))
        acts.sort(key=lambda a: a.index)
        by_street = [[] for _ in range(self.last + 1)]
        for a in acts:
            by_street[min(a.street, self.last)].append(a)
        return by_street

    def _bet_actions(self):
        """A table that was bet with an action out of turn: the actions as the shoe's engine
        applied them (shoe.betting), each at the record entry where its seat's turn came; an
        action out of turn taken back (TDA 53: the action to it changed) is none. None
        otherwise (the log's actions as they are)."""
        config = self.record.get("config") or {}
        if not (config.get("house") or {}).get("betting") or \
                not [e for e in self.log if e.get("out_of_turn")]:
            return None
        from .payout import replay

        trace = []
        replay(self.record, config, trace)
        return [_Act(i, s, kind, self.phase_at[i], total=to if kind not in ("fold", "check")
                     else None)
                for i, (_round, s, kind, to, _added) in trace
                if kind in _ENGINE_ACTIONS and s in self.p]

    def _why(self, index, seat):
        for e in reversed(self.log[max(0, index - 4):index]):
            if "procedure" in e and e.get("seat") in (None, seat):
                return " (%s)" % e["procedure"]
        return ""

    def hand(self, seat, street):
        """The cards `seat` held at the end of `street` (or when its hand ended)."""
        death = self.deaths.get(seat)
        if self.game.family == FLOP:
            return list(death[2]) if death else list(self.final[seat])
        if death and death[1] <= street:
            return list(death[2])
        known = [p for p in self.snaps if p <= street]
        return list(self.snaps[max(known)].get(seat, [])) if known else []


class _Writer:
    """Writes the PHH actions against pokerkit's own state, so every action is legal there."""

    def __init__(self, table, opts):
        self.t = table
        self.game = table.game
        n = len(table.order)
        fields = {"variant": opts["variant"],
                  "starting_stacks": list(opts.get("stacks") or [opts["stack"]] * n),
                  "actions": []}
        for name in _REQUIRED[opts["variant"]]:
            if name == "antes":
                fields[name] = list(opts.get("antes") or [opts["ante"]] * n)
            elif name == "blinds_or_straddles":
                fields[name] = list(opts.get("blinds") or [opts["small_blind"],
                                                           opts["big_blind"]] + [0] * (n - 2))
            elif name in ("bring_in", "small_bet", "big_bet", "min_bet"):
                fields[name] = opts[name]
        self.fields = fields
        try:
            self.state = HandHistory(**fields).create_state()
        except ValueError as e:
            raise UserError("pokerkit refuses these stakes (%s): %s" % (_stakes(fields), e))
        self.actions = []
        self.notes = []
        self.dealt = {p: [] for p in range(n)}      # cards dealt to each player in the PHH
        self.pk_up = {}                             # (player, card) -> pokerkit's up status
        self.discarded = {p: [] for p in range(n)}
        self.board = []
        self.pending_dead = {}                      # seat -> why its fold is due
        self.folded = set()                         # seats whose hand the PHH has folded
        self.added = 0
        self.over = False

    # -- the mirror ----------------------------------------------------------------------

    def _save(self):
        return copy.deepcopy((self.state, self.actions, self.notes, self.dealt, self.pk_up,
                              self.discarded, self.board, self.pending_dead, self.folded,
                              self.added))

    def _restore(self, saved):
        (self.state, self.actions, self.notes, self.dealt, self.pk_up, self.discarded,
         self.board, self.pending_dead, self.folded, self.added) = saved

    def _do(self, action, comment=None):
        """Apply `action` as pokerkit's loader will (burning unknown cards when due)."""
        trial = copy.deepcopy(self.state)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            while True:
                try:
                    parse_action(trial, action)
                    break
                except ValueError:
                    if trial.can_burn_card():
                        trial.burn_card("??")
                        continue
                    return False
                except Exception:   # e.g. pokerkit cannot rank an unknown stud up card
                    return False
        self.state = trial
        self.actions.append(action + (" # " + comment if comment else ""))
        return True

    def _seat(self, p):
        return self.t.order[p]

    def _live(self, seat):
        return self.state.statuses[self.t.p[seat]]

    # -- betting -------------------------------------------------------------------------

    def _apply(self, p, act):
        st = self.state
        kind = act.kind
        label = "p%d" % (p + 1)
        comment = act.comment
        if kind == "fold":
            if st.can_post_bring_in():
                self.pending_dead[self._seat(p)] = "fold, log #%d" % act.index
                self.notes.append("seat %d folded while owing the bring-in: the bring-in is "
                                  "posted and the fold comes at its next turn" % act.seat)
                return self._do(label + " pb")
            if st.checking_or_calling_amount == 0:
                self.notes.append("seat %d folded with nothing to call (log #%d)" % (
                    act.seat, act.index))
            self.pending_dead.pop(self._seat(p), None)
            self.folded.add(self._seat(p))
            return self._do(label + " f", comment)
        if kind in ("check", "call"):
            if st.can_post_bring_in():
                return self._do(label + " pb")
            return self._do(label + " cc")
        if kind == "bringin" and st.can_post_bring_in():
            return self._do(label + " pb")
        if st.can_complete_bet_or_raise_to():
            if act.total is not None and st.min_completion_betting_or_raising_to_amount <= \
                    act.total <= st.max_completion_betting_or_raising_to_amount:
                amount = act.total  # the shoe's own figure (a table that is bet)
            elif act.total is not None and kind == "allin" and \
                    act.total <= st.bets[p] + st.checking_or_calling_amount:
                return self._do(label + " cc")  # all in for a call
            elif kind == "allin":
                amount = st.max_completion_betting_or_raising_to_amount
            else:
                amount = st.min_completion_betting_or_raising_to_amount
            return self._do("%s cbr %d" % (label, amount))
        self.notes.append("seat %d's %s (log #%d) cannot be a raise here: exported as a call" % (
            act.seat, kind, act.index))
        if st.can_post_bring_in():
            return self._do(label + " pb")
        return self._do(label + " cc")

    def _filler(self, p, reopen):
        label = "p%d" % (p + 1)
        st = self.state
        self.added += 1
        if st.can_post_bring_in():
            return self._do(label + " pb", "added")
        waiting = [q for q in range(len(self.t.order)) if st.statuses[q] and q != p
                   and self._seat(q) in self.pending_dead and q not in st.actor_indices]
        if reopen and waiting and st.can_complete_bet_or_raise_to():
            # a hand that folded after its last turn in the round: a bet gives it the turn to
            # fold in (in stud, before it is dealt a card the shoe never dealt it)
            self.notes.append("a bet is added on %s to give seat %s, which folded after its "
                              "last turn, a turn to fold in" % (
                                  _street_name(self.game, st.street_index),
                                  ", ".join(str(self._seat(q)) for q in waiting)))
            return self._do("%s cbr %d" % (label, st.min_completion_betting_or_raising_to_amount),
                            "added")
        return self._do(label + " cc", "added")

    def _dead_waiting(self):
        return [s for s in self.pending_dead if self._live(s)]

    def betting(self, acts, close, settle=False):
        """Apply the street's logged actions in pokerkit's turn order; with `close`, add
        check/calls until the betting round is over; with `settle`, until the folds still
        due have been made."""
        acts = list(acts)
        reopen = settle or (close and self.game.family == STUD)
        while self.state.actor_index is not None:
            st = self.state
            kept = []
            for a in acts:
                if a.seat in self.t.p and self._live(a.seat):
                    kept.append(a)
                elif a.comment is None:
                    self.notes.append("seat %d's %s (log #%d) dropped: the seat is out of the "
                                      "hand" % (a.seat, a.kind, a.index))
            acts = kept
            pending = set(st.actor_indices)
            if not close and not any(self.t.p[a.seat] in pending for a in acts) and \
                    not (settle and self._dead_waiting()):
                break
            p = st.actor_index
            seat = self._seat(p)
            chosen = None
            if acts and acts[0].seat == seat:
                chosen = acts.pop(0)
            elif seat in self.pending_dead and st.can_fold():
                self.folded.add(seat)
                if not self._do("p%d f" % (p + 1), self.pending_dead.pop(seat)):
                    raise AssertionError("fold refused")
                continue
            else:
                j = next((k for k, a in enumerate(acts) if a.seat == seat), None)
                if j is not None and not any(
                        a.kind in _REOPENING and self.t.p[a.seat] in pending
                        for a in acts[:j]):
                    chosen = acts.pop(j)
                    self.notes.append("seat %d's %s (log #%d) played in pokerkit's turn order"
                                      % (chosen.seat, chosen.kind, chosen.index))
            ok = self._apply(p, chosen) if chosen else self._filler(p, reopen)
            if not ok:
                raise AssertionError("pokerkit refused a betting action at p%d" % (p + 1))
        betting_left = self.state.status and not self.state.all_in_status
        for a in acts:
            if a.seat not in self.t.p or a.seat in self.folded:
                if a.comment is None:
                    self.notes.append("seat %d's %s (log #%d) dropped: the seat is out of the "
                                      "hand" % (a.seat, a.kind, a.index))
            elif a.kind == "fold":
                self.pending_dead[a.seat] = a.comment or "fold, log #%d" % a.index
                if a.comment is None and betting_left:
                    self.notes.append("seat %d's fold (log #%d) comes at its next turn" % (
                        a.seat, a.index))
            elif betting_left:
                self.notes.append("seat %d's %s (log #%d) dropped: no turn for it in pokerkit's "
                                  "betting round" % (a.seat, a.kind, a.index))
            else:
                self.notes.append("seat %d's %s (log #%d) dropped: no betting left in pokerkit's "
                                  "hand (all-in or over)" % (a.seat, a.kind, a.index))

    def showdown(self):
        st = self.state
        while st.showdown_index is not None:
            p = st.showdown_index
            cards = "".join(repr(c) for c in st.hole_cards[p])
            if self._seat(p) in self.pending_dead:   # folded after its last turn: mucks
                self.folded.add(self._seat(p))
                ok = self._do("p%d sm" % (p + 1), self.pending_dead.pop(self._seat(p)))
            else:
                ok = self._do("p%d sm %s" % (p + 1, cards) if cards else "p%d sm" % (p + 1))
            if not ok:
                raise AssertionError("pokerkit refused a showdown")
            st = self.state

    def history(self, actions=None):
        fields = dict(self.fields)
        fields["actions"] = list(self.actions if actions is None else actions)
        return HandHistory(**fields)

    def trim(self):
        """Leave out trailing actions pokerkit's loader cannot replay past (after them it would
        deal the next street itself, with unknown cards it may not be able to rank)."""
        actions = list(self.actions)
        while actions:
            try:
                _check(self.history(actions))
                break
            except Exception:
                actions.pop()
        left = self.actions[len(actions):]
        if left:
            self.notes.append("left out at the end, as pokerkit cannot replay past them (it "
                              "would deal the next street itself, unknown cards and all): %s"
                              % ", ".join(a.split(" # ")[0] for a in left))
            self.actions = actions

    def close(self):
        self.betting([], close=True)
        self.showdown()
        if not self.state.status:
            self.over = True

    # -- dealing -------------------------------------------------------------------------

    def _deal_hole(self, p, cards, pad, why):
        need = len(self.state.hole_dealing_statuses[p])
        take = list(cards[:need])
        if len(cards) > need and self.game.exported_holes == self.game.holes:
            self.notes.append("seat %d: %s not dealt (pokerkit deals %d card(s) here)" % (
                self._seat(p), " ".join(cards[need:]), need))
        if pad and len(take) < need:
            self.notes.append("seat %d: %d unknown card(s) ?? dealt where the shoe dealt none "
                              "(%s)" % (self._seat(p), need - len(take), why))
            take += ["??"] * (need - len(take))
        if not take:
            return True
        statuses = list(self.state.hole_dealing_statuses[p])[:len(take)]
        if not self._do("d dh p%d %s" % (p + 1, "".join(take))):
            return False
        for card, up in zip(take, statuses):
            self.dealt[p].append(card)
            self.pk_up[(p, card)] = up
        return True

    def _deal_board(self, cards):
        if not cards:
            return False
        if not self._do("d db " + "".join(cards)):
            return False
        self.board += cards
        return True

    def deal(self, street, pad):
        """Deal `street` from the record's outcome. None, or why pokerkit cannot take it."""
        t, st = self.t, self.state
        fam = self.game.family
        if fam == FLOP and street > 0:
            want = {1: t.board[0:3], 2: t.board[3:4], 3: t.board[4:5]}[street]
            if want and not self._deal_board(list(want)):
                return "pokerkit does not take these board cards"
            return None
        if fam == DRAW and street > 0:
            targets = {}
            for p, seat in enumerate(t.order):
                if not st.statuses[p]:
                    continue
                have = [repr(c) for c in self.state.hole_cards[p]]
                target = t.hand(seat, street)
                discards = [c for c in have if c not in target]
                targets[p] = [c for c in target if c not in have]
                if not self._do("p%d sd %s" % (p + 1, "".join(discards)) if discards
                                else "p%d sd" % (p + 1)):
                    return "pokerkit does not take seat %d's discards" % seat
                self.discarded[p] += discards
            for p, new in targets.items():
                if self.state.hole_dealing_statuses[p] and \
                        not self._deal_hole(p, new, pad, "the draw came up short"):
                    return "pokerkit does not take seat %d's draw" % t.order[p]
            return None
        if fam == STUD and any(st.board_dealing_counts):
            if self._deal_board(list(t.board[len(self.board):][:st.board_dealing_counts[0]])):
                return None
            return ("pokerkit deals a community card here (the stub is short) where the shoe "
                    "dealt each player a card")
        news = {}
        for p, seat in enumerate(t.order):
            if st.statuses[p] and st.hole_dealing_statuses[p]:
                news[p] = [c for c in t.hand(seat, street) if c not in self.dealt[p]]
        if fam == STUD and street > 0 and not any(news.values()) and \
                len(t.board) > len(self.board):
            return ("the shoe dealt a community card (short stub) where pokerkit deals each "
                    "player a card")
        for p, new in news.items():
            if not self._deal_hole(p, new, pad, "a short or dead hand"):
                return ("pokerkit cannot deal seat %d these cards (it cannot rank an unknown "
                        "up card)" % t.order[p])
        return None


def _card_text(e):
    text = "%s %s>%s" % (e["card"], e.get("from", "stub"), e.get("to"))
    if str(e.get("to")).startswith("seat:") and e.get("up"):
        text += " up"
    return text


def _entry_text(e):
    if "card" in e:
        return _card_text(e)
    if "procedure" in e:
        text = "procedure %s" % e["procedure"]
        if e.get("rule"):
            text += " (%s)" % e["rule"]
        if e.get("seat") is not None:
            text += " seat %s" % e["seat"]
        return text
    if "reshuffle" in e:
        return "reshuffle %s (%s cards)" % (e["reshuffle"], e.get("cards"))
    if "cut" in e:
        return "cut (%s cards)" % e.get("cards")
    if "pick" in e:
        return "pick %s from %s (of %s)" % (e["pick"], e.get("from"), e.get("of"))
    if "fault" in e:  # the shoe stopped; the card it was feeding stayed in the stub
        from .view import fault_where
        return "fault %s%s" % (e["fault"], fault_where(e))
    return " ".join("%s=%s" % (k, v) for k, v in e.items())


def _text(value):
    return " ".join(str(value).split())


def _user_fields(table, w):
    rec, game, log = table.record, table.game, table.log
    order = table.order
    cfg = rec.get("config") or {}  # the table as configured (a history from the shoe)
    f = {"_shoe_game": rec.get("game"), "_shoe_rules": rec.get("rules"),
         "_shoe_button": rec.get("button") if game.family != STUD else None,
         "_shoe_seats": {"p%d" % (i + 1): s for i, s in enumerate(order)},
         # every seat of the table, the house overrides in force, the profile they came from
         "_shoe_table_seats": cfg.get("seats"), "_shoe_house": cfg.get("house"),
         "_shoe_profile": cfg.get("profile"),
         "_status": rec.get("status"),
         "_reason": _text(rec["reason"]) if rec.get("reason") else None}
    for zone in ("burns", "muck", "aside", "removed"):
        f["_" + zone] = list(rec.get(zone) or [])
    f["_stub"] = rec.get("stub")
    procs = ["%s (%s)" % (e["procedure"], _text(e.get("rule", ""))) if e.get("rule")
             else e["procedure"] for e in log if "procedure" in e]
    f["_procedures"] = procs or list(rec.get("procedures") or [])
    if game.exported_holes < game.holes:
        f["_hole_cards"] = ["p%d %s" % (i + 1, "".join(table.hand(s, 0)))
                            for i, s in enumerate(order)]
    face_up, face_down = [], []
    for (p, card), pk in sorted(w.pk_up.items()):
        if card == "??":
            continue
        shown = table.up.get((order[p], card))
        if shown and not pk:
            face_up.append("p%d %s" % (p + 1, card))
        elif shown is False and pk:
            face_down.append("p%d %s" % (p + 1, card))
    f["_face_up"] = face_up or None
    f["_face_down"] = face_down or None
    # the log's movements the actions do not say
    dealt = {order[p]: set(cards) for p, cards in w.dealt.items()}
    discarded = {order[p]: set(cards) for p, cards in w.discarded.items()}
    board = set(w.board)
    folded_at = {s: d[0] for s, d in table.deaths.items() if not d[3]}
    extra = []
    for i, e in enumerate(log):
        if "action" in e or "status" in e:
            continue
        if "card" in e:
            card, frm, to = e["card"], e.get("from"), str(e.get("to"))
            if frm in (None, "stub"):
                if to == "burns" or (to == "board" and card in board):
                    continue
                if to.startswith("seat:") and card in dealt.get(int(to[5:]), ()):
                    continue
            elif str(frm).startswith("seat:") and to == "muck":
                s = int(frm[5:])
                if card in discarded.get(s, ()):
                    continue
                if s in folded_at and folded_at[s] < i and card in table.deaths[s][2]:
                    continue
        extra.append("#%d %s" % (i, _text(_entry_text(e))))
    f["_log"] = extra or None
    notes = []
    if game.note:
        notes.append(game.note)
    if "chips" in table.record or ((table.record.get("config") or {}).get("house") or {}).get(
            "betting") is not None:
        notes.append("chips are the shoe's (the table was bet): %s; each bet, raise and all-in "
                     "is the amount the shoe recorded" % _stakes(w.fields))
    else:
        notes.append("chips are nominal (the shoe records none): %s; bets and raises are the "
                     "minimum legal amount, all-ins the largest" % _stakes(w.fields))
    if w.added:
        notes.append("%d action(s) marked 'added' are not in the shoe's log (it logs only the "
                     "actions reported to it): pokerkit needs them to go on" % w.added)
    if game.family == STUD and (face_up or face_down):
        notes.append("pokerkit decides the bring-in and the betting order from its own up "
                     "cards; the cards the table saw up or down are in _face_up/_face_down")
    for note in _chips_notes(table.record):
        notes.append(note)
    status = rec.get("status")
    if status in ("misdeal", "void"):
        notes.append("the hand ended in a %s: the PHH stops where the shoe stopped" % status)
    f["_notes"] = list(dict.fromkeys(notes + w.notes))
    return {k: v for k, v in f.items() if v is not None}


def _stakes(fields):
    parts = []
    if "blinds_or_straddles" in fields:
        parts.append("blinds %d/%d" % tuple(fields["blinds_or_straddles"][:2]))
    if any(fields.get("antes", [])):
        parts.append("ante %d" % fields["antes"][0])
    if "bring_in" in fields:
        parts.append("bring-in %d" % fields["bring_in"])
    if "small_bet" in fields:
        parts.append("bets %d/%d" % (fields["small_bet"], fields["big_bet"]))
    if "min_bet" in fields:
        parts.append("min bet %d" % fields["min_bet"])
    parts.append("stacks %d" % fields["starting_stacks"][0])
    return ", ".join(parts)


def _write(table, opts):
    w = _Writer(table, opts)
    rec = table.record
    status = rec.get("status")
    last = table.last
    play_out = (status == "complete" and opts["showdown"]
                and last == table.game.final_street)
    acts = table.acts
    stopped = False
    saved0 = w._save()
    for street in range(last + 1):
        pad = street < last or bool(acts[street]) or status == "complete"
        if street > 0:
            saved = w._save()
            w.close()
            if w.over:
                w.notes.append("pokerkit's hand is over after street %d (one player left); "
                               "the shoe's later streets are in _log" % (street - 1))
                stopped = True
                break
            why = w.deal(street, pad)
            if why:
                w._restore(saved)
                w.notes.append("%s: %s; the PHH stops before it (its cards are in _log)" % (
                    _street_name(table.game, street), why))
                stopped = True
                break
        else:
            why = w.deal(0, pad)
            if why:
                w._restore(saved0)
                w.notes.append("the deal: %s; the PHH has no deal" % why)
                stopped = True
                break
        if any(w.state.hole_dealing_statuses) and status not in ("complete", "dealing") \
                and not acts[street]:
            stopped = True   # a deal cut short by the misdeal
            break
        w.betting(acts[street], close=False)
    if play_out and not stopped and w.state.status:
        w.close()
    elif w._dead_waiting():
        w.betting([], close=False, settle=True)
    for seat, why in w.pending_dead.items():
        w.notes.append("seat %d's fold (%s) has no place in pokerkit's hand: it keeps its cards"
                       % (seat, why))
    w.trim()
    return w


def _street_name(game, street):
    if game.family == FLOP:
        return ("preflop", "the flop", "the turn", "the river")[street]
    if game.family == STUD:
        return "%s street" % ("3rd", "4th", "5th", "6th", "7th")[street]
    return "the deal" if street == 0 else "draw %d" % street


def to_history(record, **defaults):
    """The hand record as a `pokerkit.HandHistory` (see `DEFAULTS` for the options)."""
    if not isinstance(record, dict) or "log" not in record:
        raise UserError("not a hand record (expected the output of `facedown replay --json`)")
    game = GAMES.get(record.get("game"))
    if game is None:
        raise UserError("no PHH mapping for game %r (games: %s)" % (
            record.get("game"), ", ".join(GAMES)))
    table = _Table(record, game)
    opts = _options(record, game, dict(_stakes_of(record, table, game), **defaults))
    with warnings.catch_warnings():   # pokerkit's own (a fold with nothing to call, ...)
        warnings.simplefilter("ignore")
        w = _write(table, opts)
    fields = dict(w.fields)
    fields["actions"] = w.actions
    fields["seats"] = list(table.order)
    hh = HandHistory(**fields, user_defined_fields=_user_fields(table, w))
    _check(hh)
    return hh


def _stakes_of(record, table, game):
    """A table that was bet: the PHH's stakes and stacks are the shoe's own (the record's config,
    docs/betting.md), not the nominal DEFAULTS."""
    raw = ((record.get("config") or {}).get("house") or {}).get("betting")
    if raw is None:
        return {}
    from .payout import replay

    b = replay(record, record["config"])
    order = table.order
    out = {"stacks": [b.start[s] for s in order]}
    cfg = b.cfg
    if cfg["structure"] == "fl" and game.family == FLOP:
        out["variant"] = "FT" if "FT" in game.variants else None
    if game.family == STUD:
        out.update(ante=cfg["ante"], bring_in=cfg["bring_in"], small_bet=cfg["small_bet"],
                   big_bet=cfg["big_bet"])
        return out
    forced = dict(b.blind_seats)
    out["blinds"] = [forced.get(s, 0) for s in order]
    out.update(small_blind=cfg["blinds"][0], big_blind=cfg["blinds"][1],
               small_bet=cfg["small_bet"], big_bet=cfg["big_bet"], min_bet=cfg["blinds"][1])
    antes = [cfg["ante"]] * len(order)
    if cfg["bb_ante"]:
        antes[order.index(b.blind_seats[1][0])] = cfg["bb_ante"]
    for s, n in _dead_money(b).items():
        antes[order.index(s)] += n
    out["antes"] = antes
    out["ante"] = cfg["ante"]
    return {k: v for k, v in out.items() if v is not None}


# the engine's log kinds for chips a seat left in the pot as dead money: no bet, no action
DEAD_MONEY = ("excess", "oot-excess")


def _dead_money(b):
    """{seat: chips} a seat left in the pot as dead money (the house's excess_chips stays, the
    home rule's excess over a call out of turn): PHH has no action for chips that go in without
    a bet, so the export gives them as part of the seat's ante, dead money in the main pot as
    they were, and pokerkit's stacks end as the payout's (docs/phh.md)."""
    out = {}
    for _, seat, kind, _, added in b.log:
        if kind in DEAD_MONEY:
            out[seat] = out.get(seat, 0) + added
    return out


def _chips_notes(record):
    """What the PHH says about a bet table's chips it carries in its own way: dead money given
    as part of a seat's ante (see _dead_money), and a blind all in short on a table whose house
    calls it as the full blind (short_blind full, docs/betting.md), which pokerkit calls for what
    was posted and has no way to be told otherwise, so the chips called over it are the shoe's
    and not pokerkit's."""
    if ((record.get("config") or {}).get("house") or {}).get("betting") is None:
        return []
    from .payout import replay

    b = replay(record, record["config"])
    notes = ["seat %d's ante includes %d chip(s) it left in the pot as dead money (no bet: PHH "
             "has no action for it)" % (s, n) for s, n in sorted(_dead_money(b).items())]
    notes += ["seat %d completed the all-in wager to %d (house limit_short_allin complete, RRoP "
              "Betting and raising 6); pokerkit raises a full bet over the all-in, to %d, so "
              "its stacks differ from the payout's (docs/phh.md)" % (seat, to, over)
              for _, seat, to, over in b.completions]
    if b.house["short_blind"] != "full":
        return notes
    nominal = dict(b.blind_seats)
    for rnd, seat, kind, _, added in b.log:
        if rnd == 0 and kind in ("blind", "straddle") and added < nominal.get(seat, 0):
            notes.append(
                "seat %d's blind was all in for %d of %d: the shoe had it called as the full "
                "%d (house short_blind full); pokerkit calls it for %d, so chips called over "
                "it and not given back make pokerkit's stacks differ from the payout's "
                "(docs/phh.md)" % (seat, added, nominal[seat], nominal[seat], added))
            break
    return notes


def _check(hh):
    """Replay the history as pokerkit's loader will; every action must apply in place."""
    applied = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _, action in hh.state_actions:
            if action is not None:
                applied += 1
    if applied != len(hh.actions):
        raise AssertionError("PHH export does not replay: %d of %d actions applied" % (
            applied, len(hh.actions)))


def _quoted(text):
    return "'''%s'''" % text if "'" in text else "'%s'" % text


def dumps(record, **defaults):
    """The hand record as PHH text (TOML), one action (and log line, note) a line."""
    hh = to_history(record, **defaults)
    long = {"actions": hh.actions}
    long.update({k: v for k, v in hh.user_defined_fields.items()
                 if k in ("_log", "_notes", "_procedures") and v})
    out = []
    for line in hh.dumps().split("\n"):
        key = line.split(" = ", 1)[0]
        if key in long and long[key] and line.startswith(key + " = ["):
            out.append("%s = [\n%s,\n]" % (key, ",\n".join("    " + _quoted(str(v))
                                                           for v in long[key])))
        else:
            out.append(line)
    return "\n".join(out) + "\n"
