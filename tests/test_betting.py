"""The betting engine (firmware/shoe/betting.py): the rulebook's examples chip by chip, a
hypothesis state machine over its invariants, random hands against pokerkit's State (a quick
count here; `make betting-check` runs 10,000 a game), and the same hands under MicroPython."""

import os
import subprocess
import sys

import pytest
from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from conftest import ROOT

from shoe import betting as B
from shoe import games as G
from shoe.errors import ShoeError

import betting_oracle


def nl(seats, button, stacks, blinds=(50, 100), rules="tda2024", house=None, **cfg):
    c = B.config(G.BOARD, dict(structure=cfg.pop("structure", "nl"), blinds=list(blinds), **cfg))
    return B.Betting(G.BOARD, seats, button, c, stacks, rules=rules, house=house)


def snapshot(b):
    return (list(b.stack), list(b.bet), list(b.put), list(b.acted), bytes(b.folded), b.pot,
            b.dead, b.round, b.high, b.full, b.nbets, b.to_act, b.closed, b.over, b.bring_in,
            list(b.log), b.n_actions)


def refused(b, seat, kind, amount=None, match=None):
    before = snapshot(b)
    with pytest.raises(ShoeError) as e:
        b.act(seat, kind, amount)
    assert snapshot(b) == before, "a refused action changed the state"
    if match:
        assert match in e.value.message, e.value.message
    return e.value.message


# ------------------------------------------------------------------ the rulebook's examples


def test_turn_blinds_and_preflop_order():
    b = nl([1, 2, 3, 4], 4, {s: 1000 for s in (1, 2, 3, 4)})
    assert (b.bet[1], b.bet[2], b.to_act) == (50, 100, 3)
    assert b.options() == {"fold": None, "call": 100, "raise": (200, 1000)}
    msg = refused(b, 4, "call", match="seat 3 is to act")
    assert msg.endswith("(TDA 50)")
    refused(b, 3, "check", match="faces a bet of 100")
    refused(b, 3, "raise", 150, match="under the minimum, 200 (TDA 43)")
    refused(b, 3, "raise", 1200, match="more than seat 3 has")
    b.act(3, "call")
    b.act(4, "call")
    b.act(1, "call")
    assert b.to_act == 2 and "check" in b.options()  # the big blind's option
    b.act(2, "check")
    assert b.closed and b.pot == 400
    b.next_round()
    assert b.to_act == 1  # first seat left of the button


def test_heads_up_button_posts_small_blind_and_acts_first_preflop_last_after():
    b = nl([3, 8], 8, {3: 500, 8: 500})
    assert (b.bet[8], b.bet[3], b.to_act) == (50, 100, 8)
    b.act(8, "call")
    b.act(3, "check")
    b.next_round()
    assert b.to_act == 3


def test_tda47_cumulative_short_all_ins_reopen():
    """TDA 47 Illustration 1: blinds 50-100; post-flop A bets 100, B all in for 125, C calls,
    D all in for 200: A (and C) face a raise of 100 in all, a full raise, and may raise."""
    b = nl([1, 2, 3, 4, 5], 5, {1: 2000, 2: 2000, 3: 2000, 4: 225, 5: 300})
    for s in (3, 4, 5, 1):
        b.act(s, "call")
    b.act(2, "check")
    b.next_round()
    b.act(1, "bet", 100)
    b.act(2, "call")
    b.act(3, "call")
    b.act(4, "allin")  # 125 total: a raise of 25
    assert b.high == 125
    b.act(5, "allin")  # 200 total: another 75; 1, 2 and 3 face 100 in all: a full raise
    assert b.high == 200
    assert b.to_act == 1 and "raise" in b.options()
    b.act(1, "call")
    assert b.to_act == 2 and "raise" in b.options()


def test_tda47_single_short_all_in_closes_raising_for_those_who_acted():
    b = nl([1, 2, 3, 4], 4, {1: 2000, 2: 2000, 3: 2000, 4: 250})
    b.act(3, "raise", 200)  # a raise of 100
    b.act(4, "allin")       # 250: a raise of 50, short
    b.act(1, "call")        # seat 1 had not acted: it may raise, and calls
    b.act(2, "call")
    assert b.to_act == 3
    assert set(b.options()) == {"fold", "call"}
    msg = refused(b, 3, "raise", 500, match="reopen")
    assert "(TDA 47)" in msg


def test_fixed_limit_cap_and_half_bet_reopening():
    c = B.config(G.BOARD, {"structure": "fl", "blinds": [5, 10]})
    b = B.Betting(G.BOARD, [1, 2, 3], 3, c, {1: 500, 2: 500, 3: 500})
    b.act(3, "raise")  # to 20
    assert b.bet[3] == 20
    b.act(1, "raise")
    b.act(2, "raise")
    assert b.nbets == 4 and b.high == 40
    refused(b, 3, "raise", match="capped at 4 bets (TDA 48)")
    b.act(3, "call")
    # TDA 47-B: in limit, half a bet reopens; under TDA, 15 after a 10 bet reopens for the bettor
    c = B.config(G.BOARD, {"structure": "fl", "blinds": [5, 10]})
    b = B.Betting(G.BOARD, [1, 2, 3], 3, c, {1: 500, 2: 25, 3: 500})
    b.act(3, "call")
    b.act(1, "call")
    b.act(2, "check")
    b.next_round()
    b.act(1, "bet")    # 10
    b.act(2, "allin")  # 15: half a bet over 10
    b.act(3, "call")
    assert "raise" in b.options(1)
    b2 = B.Betting(G.BOARD, [1, 2, 3], 3, c, {1: 500, 2: 25, 3: 500},
                   house={"reopen_limit": "full"})
    for s, k in ((3, "call"), (1, "call"), (2, "check")):
        b2.act(s, k)
    b2.next_round()
    b2.act(1, "bet")
    b2.act(2, "allin")
    b2.act(3, "call")
    assert "raise" not in b2.options(1)


def test_a_short_all_in_counts_toward_the_cap_only_when_it_reopens():
    """Razz, a small bet of 2: completed to 2, raised to 4, 6, then an all-in to 7 (half a
    bet). Under TDA 47-B (reopen_limit "half") it is a raise: the fourth bet, capped. Under
    "full" it is no raise: one more raise is left (pokerkit counts it either way: the oracle
    names that difference)."""
    stacks = {1: 8, 2: 5, 3: 250, 4: 7, 6: 4, 7: 269, 8: 7}
    c = B.config(G.STUD, {"structure": "fl", "ante": 1, "bring_in": 1, "small_bet": 2,
                          "big_bet": 4})
    for reopen, options in (("half", {"fold": None, "call": 5}),
                            ("full", {"fold": None, "call": 5, "raise": (9, 9)})):
        b = B.Betting(G.STUD, sorted(stacks), None, c, dict(stacks), opener=2,
                      house={"reopen_limit": reopen})
        for seat, kind, to in ((2, "bringin", None), (3, "complete", 2), (4, "raise", 4),
                               (6, "call", None), (7, "call", None), (8, "raise", 6),
                               (1, "allin", None), (2, "fold", None)):
            b.act(seat, kind, to)
        assert b.to_act == 3 and b.options() == options, (reopen, b.options())
        assert b.nbets == (4 if reopen == "half" else 3)


def test_a_limit_all_in_under_half_a_bet_is_completed_by_roberts():
    """RRoP Betting and raising 6: facing an all-in of less than half a bet, a seat may fold,
    call or complete the wager; half a bet or more is treated as a full bet ("a $15 all-in bet
    raised to $35"). House limit_short_allin: Robert's "complete", TDA "raise" (a full bet over
    the all-in, as pokerkit plays it)."""
    c = B.config(G.BOARD, {"structure": "fl", "blinds": [10, 20]})
    for rules, to in (("tda2024", 45), ("robert", 40)):
        # button 5: seat 1 the small blind, 2 the big; seat 3 calls, seat 4 is all in for 25
        b = B.Betting(G.BOARD, [1, 2, 3, 4, 5], 5, c, {1: 500, 2: 500, 3: 500, 4: 25, 5: 500},
                      rules=rules)
        assert b.house["limit_short_allin"] == ("raise" if rules == "tda2024" else "complete")
        b.act(3, "call")
        b.act(4, "allin")  # to 25: 5 over the big blind, under half a bet
        assert b.to_act == 5 and b.options()["raise"] == (to, to), (rules, b.options())
        refused(b, 5, "raise", 85 - to, match="raise to %d" % (85 - to))
        b.act(5, "raise")
        assert b.high == to and b.nbets == 2, (rules, b.log[-1])
        # a full raise either way: the betting is open again for seat 3, who had called
        for seat in (1, 2):
            b.act(seat, "call")
        assert b.to_act == 3 and "raise" in b.options(), (rules, b.options())
    # the round's first bet all in: 5 (under half of 20) is completed to 20 by Robert's; 15
    # (half or more) is a full bet, and the raise is to 35 by both
    for allin, tda, robert in ((5, 25, 20), (15, 35, 35)):
        for rules, to in (("tda2024", tda), ("robert", robert)):
            b = B.Betting(G.BOARD, [1, 2, 3], 3, c, {1: 500, 2: 20 + allin, 3: 500},
                          rules=rules)
            for seat, kind in ((3, "call"), (1, "call"), (2, "check")):
                b.act(seat, kind)
            b.next_round()
            b.act(1, "check")
            b.act(2, "allin")
            assert b.high == allin and b.options(3)["raise"] == (to, to), (
                allin, rules, b.options(3))
            b.act(3, "raise")
            assert b.high == to and "raise" in b.options(1)
    # several short all-ins count together: over the big blind's 20, all in for 25 then 28
    # (8 over 20) is completed to 40; 25 then 31 (11, half a bet or more) is raised to 51
    for second, to in ((28, 40), (31, 51)):
        b = B.Betting(G.BOARD, [1, 2, 3, 4, 5], 5, c, {1: 500, 2: 500, 3: 25, 4: second,
                                                       5: 500}, rules="robert")
        b.act(3, "allin")
        b.act(4, "allin")
        assert b.to_act == 5 and b.options()["raise"] == (to, to), (second, b.options())


def test_cap_heads_up_by_rulebook():
    c = B.config(G.BOARD, {"structure": "fl", "blinds": [5, 10]})
    for rules, capped in (("tda2024", True), ("robert", False)):
        b = B.Betting(G.BOARD, [1, 2], 2, c, {1: 1000, 2: 1000}, rules=rules)
        b.act(2, "raise")
        b.act(1, "raise")
        b.act(2, "raise")
        assert ("raise" not in b.options(1)) == capped, rules


def test_pot_limit_sizing_and_tda54_full_blinds():
    b = nl([1, 2, 3, 4], 4, {s: 5000 for s in (1, 2, 3, 4)}, blinds=(50, 100), structure="pl")
    # pot 150, call 100: the pot after the call is 250, so a pot raise is to 100 + 250 = 350
    assert b.options()["raise"] == (200, 350)
    refused(b, 3, "raise", 400, match="over the pot limit, 350 (TDA 54)")
    b.act(3, "raise", 350)
    # the button: 50 + 100 + 350 = 500 in the middle, call 350: a raise to 350 + 850 = 1200
    assert b.options()["raise"] == (600, 1200)
    # a short big blind counts as a full blind pre-flop under TDA 54, as posted under Robert's
    short = {1: 5000, 2: 60, 3: 5000, 4: 5000}
    # (with the house's short_blind posted: called for its 60)
    posted = {"short_blind": "posted"}
    t = nl([1, 2, 3, 4], 4, short, structure="pl", house=posted)
    r = nl([1, 2, 3, 4], 4, short, structure="pl", rules="robert", house=posted)
    assert t.high == r.high == 60
    assert t.options()["raise"][1] == 60 + (50 + 100) + 60  # as if the blind were 100
    assert r.options()["raise"][1] == 60 + (50 + 60) + 60
    # short_blind full (both rulebooks): the call is the full 100 and the pot is sized on it
    t = nl([1, 2, 3, 4], 4, short, structure="pl")
    r = nl([1, 2, 3, 4], 4, short, structure="pl", rules="robert")
    assert t.high == r.high == 100
    assert t.options()["raise"] == (200, 100 + (50 + 100) + 100)
    assert r.options()["raise"] == (200, 100 + (50 + 60) + 100)


def test_stud_bring_in_completion_and_streets():
    c = B.config(G.STUD, {"ante": 5, "bring_in": 10, "small_bet": 20})
    b = B.Betting(G.STUD, [1, 2, 3], None, c, {1: 500, 2: 500, 3: 500}, opener=2)
    assert b.to_act == 2 and set(b.options()) == {"bringin", "complete"}
    refused(b, 2, "fold", match="must bring in or complete (TDA RP-10)")
    b.act(2, "bringin")
    assert b.options(3) == {"fold": None, "call": 10, "complete": (20, 20)}
    b.act(3, "complete")
    assert b.high == 20 and b.options(1)["raise"] == (40, 40)
    b.act(1, "call")
    b.act(2, "call")
    assert b.closed
    b.next_round(opener=3)
    assert b.to_act == 3 and b.options()["bet"] == (20, 20)
    for _ in range(2):
        b.act(b.to_act, "check")
    b.act(b.to_act, "check")
    b.next_round(opener=1)
    assert b.options()["bet"] == (40, 40)  # 5th street: the big bet


def test_big_blind_ante_is_dead_money_blind_first():
    b = nl([1, 2, 3], 3, {1: 1000, 2: 120, 3: 1000}, bb_ante=100)
    # TDA RP-11 (2024): the short big blind posts the blind first, then what is left as ante
    assert (b.bet[2], b.dead, b.stack[2]) == (100, 20, 0)
    a = nl([1, 2, 3], 3, {1: 1000, 2: 120, 3: 1000}, bb_ante=100,
           house={"blind_before_ante": False})
    assert (a.bet[2], a.dead) == (20, 100)
    assert b.contributions()[2] == 100  # the ante is not the seat's: it is the main pot's


def test_short_all_in_big_blind_is_called_and_raised_as_a_full_blind():
    # 60 of a 100 big blind: RRoP No-limit 2 and the TDA's conventional ruling (house short_blind
    # full, both rulebooks): the call is the full 100 and the minimum raise is to 200; the chips
    # over the blind's 60 are a side pot, or go back uncalled
    stacks = {1: 1000, 2: 60, 3: 1000, 4: 1000}
    for rules in ("tda2024", "robert"):
        b = nl([1, 2, 3, 4], 4, stacks, rules=rules)
        assert (b.bet[2], b.stack[2], b.to_act) == (60, 0, 3)
        assert b.options() == {"fold": None, "call": 100, "raise": (200, 1000)}
        refused(b, 3, "raise", 160, "minimum, 200")
        b.act(3, "call")
        assert b.bet[3] == 100
    b.act(4, "fold")
    b.act(1, "fold")
    assert b.over and b.returned[3] == 40 and b.total() == 170
    # the house may have it called for what was posted (pokerkit's way): call 60, raise to 160
    p = nl([1, 2, 3, 4], 4, stacks, house={"short_blind": "posted"})
    assert p.options() == {"fold": None, "call": 60, "raise": (160, 1000)}
    # a short small blind changes nothing: the big blind is the bet
    s = nl([1, 2, 3, 4], 4, {1: 30, 2: 1000, 3: 1000, 4: 1000})
    assert s.options() == {"fold": None, "call": 100, "raise": (200, 1000)}


def test_uncalled_bet_returned_and_chips_conserved():
    b = nl([1, 2, 3], 3, {1: 1000, 2: 1000, 3: 1000})
    b.act(3, "raise", 600)
    b.act(1, "fold")
    b.act(2, "fold")
    assert b.over and b.winner_by_fold() == 3
    assert b.returned[3] == 500 and b.total() == 250
    stacks = b.award({3: b.total()})
    assert stacks == {1: 950, 2: 900, 3: 1150}


def test_refusals_name_the_rule_per_rulebook():
    t = nl([1, 2, 3], 3, {1: 1000, 2: 1000, 3: 1000})
    r = nl([1, 2, 3], 3, {1: 1000, 2: 1000, 3: 1000}, rules="robert")
    assert refused(t, 1, "call").endswith("(TDA 50)")
    assert refused(r, 1, "call").endswith("(RRoP Button games 6)")
    refused(t, 3, "dance", match="unknown action")
    c = B.config(G.BOARD, {"blinds": [50, 100], "chip": 25})
    refused(B.Betting(G.BOARD, [1, 2, 3], 3, c, {1: 1000, 2: 1000, 3: 1000}), 3, "raise", 210,
            match="not a multiple of the smallest chip (25)")
    refused(t, 3, "raise", -5, match="whole number")
    refused(t, 3, "call", 70, match="the call is 100")


def test_config_is_checked():
    with pytest.raises(ShoeError, match="blinds"):
        B.config(G.BOARD, {"structure": "nl"})
    with pytest.raises(ShoeError, match="unknown betting key"):
        B.config(G.BOARD, {"blinds": [1, 2], "limit": 3})
    with pytest.raises(ShoeError, match="structure"):
        B.config(G.BOARD, {"blinds": [1, 2], "structure": "spread"})
    with pytest.raises(ShoeError, match="straddles are off"):
        B.config(G.BOARD, {"blinds": [1, 2], "straddles": [4]}, B.settings("tda2024"))
    with pytest.raises(ShoeError, match="fixed-limit"):
        B.config(G.STUD, {"structure": "nl", "bring_in": 1, "small_bet": 2})
    cfg = B.config(G.BOARD, {"blinds": [1, 2], "straddles": [4]}, B.settings("robert"))
    b = B.Betting(G.BOARD, [1, 2, 3, 4], 4, cfg, {s: 100 for s in (1, 2, 3, 4)}, rules="robert")
    assert (b.bet[3], b.to_act) == (4, 4) and b.options()["raise"][0] == 8


def test_unknown_stacks_all_in_names_its_amount():
    c = B.config(G.BOARD, {"blinds": [50, 100]})
    b = B.Betting(G.BOARD, [1, 2, 3], 3, c, None)
    refused(b, 3, "allin", match="give the all-in's amount")
    b.act(3, "allin", 800)
    assert b.stack[3] == 0 and b.bet[3] == 800 and b.high == 800


# ------------------------------------------------------------------ the state machine

STRUCTS = (
    (G.BOARD, 0, {"structure": "nl", "blinds": [5, 10]}),
    (G.BOARD, 0, {"structure": "pl", "blinds": [5, 10], "ante": 1}),
    (G.BOARD, 0, {"structure": "fl", "blinds": [5, 10], "bb_ante": 10}),
    (G.STUD, 0, {"ante": 1, "bring_in": 2, "small_bet": 10}),
    (G.DRAW, 3, {"structure": "fl", "blinds": [1, 2]}),
)


class BettingMachine(RuleBasedStateMachine):
    @initialize(table=st.integers(0, len(STRUCTS) - 1), n=st.integers(2, 8),
                data=st.data(), rules=st.sampled_from(("tda2024", "robert")))
    def start(self, table, n, data, rules):
        kind, draws, raw = STRUCTS[table]
        seats = sorted(data.draw(st.lists(st.integers(1, 10), min_size=n, max_size=n,
                                          unique=True)))
        stacks = {s: data.draw(st.integers(1, 400)) for s in seats}
        cfg = B.config(kind, raw, B.settings(rules))
        opener = data.draw(st.sampled_from(seats)) if kind == G.STUD else None
        self.b = B.Betting(kind, seats, seats[-1], cfg, stacks, rules=rules, draws=draws,
                           opener=opener)
        self.start_total = sum(stacks.values())
        self.paid = False

    @rule(data=st.data())
    def legal(self, data):
        b = self.b
        if b.over:
            return
        if b.closed:
            live = b.contenders()
            b.next_round(data.draw(st.sampled_from(live)) if b.kind == G.STUD else None)
            return
        opts = b.options()
        kind = data.draw(st.sampled_from(sorted(opts)))
        amount = None
        if kind in ("bet", "raise", "complete"):
            amount = data.draw(st.integers(*opts[kind]))
        seat = b.to_act
        before = sum(b.put) + sum(b.returned)
        rec = b.act(seat, kind, amount)
        assert rec[1] == seat and rec[4] >= 0
        assert sum(b.put) + sum(b.returned) == before + rec[4]  # uncalled chips go back

    @rule(seat=st.integers(0, 11), kind=st.sampled_from(B.KINDS + ("dance",)),
          amount=st.one_of(st.none(), st.integers(-5, 2000)))
    def anything(self, seat, kind, amount):
        """Any report at all: accepted as a legal action, or refused with nothing changed."""
        b = self.b
        before = snapshot(b)
        try:
            b.act(seat, kind, amount)
        except ShoeError as e:
            assert snapshot(b) == before, e.message
            assert e.message and "\n" not in e.message

    @rule()
    def pay(self):
        b = self.b
        if not b.over or self.paid:
            return
        win = b.winner_by_fold()
        from facedown import pots
        live = b.contenders()
        layers = pots.build_pots(b.contributions(), live, b.dead)
        assert sum(p.amount for p in layers) == b.total()  # the pots hold every chip
        payouts = {win: b.total()} if win else {}
        if not win:
            for p in layers:  # a stand-in showdown: each pot to its first eligible seat
                payouts[p.eligible[0]] = payouts.get(p.eligible[0], 0) + p.amount
        stacks = b.award(payouts)
        assert sum(stacks.values()) == self.start_total
        self.paid = True

    @invariant()
    def conserved(self):
        b = self.b
        if not self.paid:
            assert sum(b.stack[s] for s in b.seats) + b.total() == self.start_total

    @invariant()
    def turn_is_right(self):
        b = self.b
        if b.closed or b.over:
            assert b.to_act is None
            if not b.over or len(b.contenders()) > 1:
                for s in b.contenders():  # nobody who could still act was owed a turn
                    assert b.stack[s] == 0 or b.bet[s] == 0 or self.paid
            return
        s = b.to_act
        assert s in b.contenders() and b.stack[s] > 0
        assert b.acted[s] < 0 or b.bet[s] < b.high or b.bring_in


TestBettingMachine = BettingMachine.TestCase
TestBettingMachine.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)


# ------------------------------------------------------------------ against pokerkit


@pytest.mark.parametrize("game", sorted(betting_oracle.GAMES))
def test_random_hands_match_pokerkit(game):
    out = betting_oracle.run(12, seed=7, games=[game])
    assert out[game]["hands"] == 12


def test_oracle_can_fail(monkeypatch):
    """The comparison catches a wrong payout: a split that pays every pot to its last seat."""
    real = betting_oracle.pots.distribute

    def wrong(table, dead=0):
        dist = real(table, dead)
        for pot in dist.pots:
            pot.shares = {"high": {pot.eligible[-1]: pot.amount}, "low": {}}
        return dist

    monkeypatch.setattr(betting_oracle.pots, "distribute", wrong)
    with pytest.raises(betting_oracle.Mismatch, match="stacks"):
        betting_oracle.run(40, seed=7, games=["nlhe"])


# ------------------------------------------------------------------ MicroPython


def test_same_hands_under_micropython():
    script = os.path.join(ROOT, "tests", "mp_betting_test.py")
    mp = os.path.join(os.path.dirname(sys.executable), "micropython")
    if not os.path.exists(mp):
        pytest.fail("micropython not installed: run `make setup`")
    got = subprocess.run([mp, "-X", "heapsize=192K", script, "40"], capture_output=True,
                         text=True, timeout=300)
    want = subprocess.run([sys.executable, script, "40"], capture_output=True, text=True,
                          timeout=300)
    assert got.returncode == 0, got.stderr
    assert want.returncode == 0, want.stderr
    assert got.stdout == want.stdout
    assert got.stdout.endswith("OK\n")
