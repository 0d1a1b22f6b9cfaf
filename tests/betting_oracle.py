"""The betting engine (firmware/shoe/betting.py) against pokerkit's own State, hand by hand.

For each game type a random complete hand is played: pokerkit deals the cards (its automations
do everything but the betting), a random legal action is chosen from the engine's options and
given to both, and at the end the engine's payout (the one seat left, or facedown.pots splitting
the pots from the engine's contributions with pokerkit's evaluators) is compared with pokerkit's
final stacks. Whose turn it is and when a round ends must agree at every step.

Where the rulebooks and pokerkit differ, the engine follows the rulebook and the driver stays off
the difference, counting it (see KNOWN): pokerkit lets a seat that has acted re-raise after a
short all-in that its own bookkeeping clears (TDA 47 does not); it splits a pot's odd chips by
seat order, not by TDA 20. The comparison's house settings are the ones pokerkit plays by:
antes before the blind, fixed limit reopened only by a full bet, the cap heads-up, a short
all-in blind called for what it posted (short_blind posted; the rulebooks call the full blind).

    python tests/betting_oracle.py --hands 10000        # the long run (make betting-check)
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import warnings

import conftest  # noqa: F401  (the test bootstrap, run as a script too: the firmware's names)
import pokerkit as pk

from facedown import pots
from shoe import betting as B
from shoe import games as G
from shoe.errors import ShoeError

AUTO = (
    pk.Automation.ANTE_POSTING, pk.Automation.BET_COLLECTION,
    pk.Automation.BLIND_OR_STRADDLE_POSTING, pk.Automation.CARD_BURNING,
    pk.Automation.HOLE_DEALING, pk.Automation.BOARD_DEALING,
    pk.Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
    pk.Automation.CHIPS_PUSHING, pk.Automation.CHIPS_PULLING,
    pk.Automation.RUNOUT_COUNT_SELECTION,
)


def stand_pat(state) -> None:
    """Draw games: every seat stands pat (the draw is the dealing side's, not the betting's).
    At the showdown the cards are noted before pokerkit kills the losing hands."""
    while state.can_stand_pat_or_discard():
        state.stand_pat_or_discard()
    if state.can_kill_hand():
        state.seen = [[card(c) for c in cards] for cards in state.hole_cards]
        state.seen_board = [card(c) for b in state.board_cards for c in b]
    while state.can_kill_hand():
        state.kill_hand()

# the comparison's house: what pokerkit plays by (module docstring)
HOUSE = {"blind_before_ante": False, "reopen_limit": "full", "limit_short_allin": "raise",
         "cap_heads_up": "capped", "pl_full_blinds": False, "short_blind": "posted"}

# name: (pokerkit game, shoe game for pots.py, kind, draws, structure, maximum players)
GAMES = {
    "nlhe": (pk.NoLimitTexasHoldem, "holdem", G.BOARD, 0, "nl", 10),
    "flhe": (pk.FixedLimitTexasHoldem, "holdem", G.BOARD, 0, "fl", 10),
    "plo": (pk.PotLimitOmahaHoldem, "omaha", G.BOARD, 0, "pl", 10),
    "flo8": (pk.FixedLimitOmahaHoldemHighLowSplitEightOrBetter, "omaha8", G.BOARD, 0, "fl", 10),
    "shortdeck": (pk.NoLimitShortDeckHoldem, "shortdeck", G.BOARD, 0, "nl", 8),
    "stud": (pk.FixedLimitSevenCardStud, "stud", G.STUD, 0, "fl", 7),
    "stud8": (pk.FixedLimitSevenCardStudHighLowSplitEightOrBetter, "stud8", G.STUD, 0, "fl", 7),
    "razz": (pk.FixedLimitRazz, "razz", G.STUD, 0, "fl", 7),
    "27td": (pk.FixedLimitDeuceToSevenLowballTripleDraw, "triple27", G.DRAW, 3, "fl", 6),
    "27sd": (pk.NoLimitDeuceToSevenLowballSingleDraw, "triple27", G.DRAW, 1, "nl", 6),
}

KNOWN = ("pokerkit reopens after a short all-in", "pokerkit raises over a short completion", "odd chip by seat order",
         "pokerkit asks the last seat with chips", "pokerkit splits a side pot with no low",
         "pokerkit counts a short all-in toward the cap")


class Mismatch(AssertionError):
    pass


def card(c) -> str:
    return str(c.rank) + str(c.suit)


def new_hand(name: str, r: random.Random):
    """A random table for the game: (engine, pokerkit state, seats in pokerkit order, config)."""
    pkgame, shoe_game, kind, draws, structure, maxp = GAMES[name]
    n = r.randint(2, maxp)
    seats = sorted(r.sample(range(1, 11), n))
    chip = 1
    if kind == G.STUD:
        small = r.choice((2, 4, 10))
        cfg = {"structure": "fl", "ante": r.choice((0, 1, small // 2)),
               "bring_in": r.choice((1, small // 2)), "small_bet": small, "big_bet": 2 * small}
        button = None
    else:
        bb = r.choice((2, 4, 10, 100))
        sb = bb // 2
        cfg = {"structure": structure, "blinds": [sb, bb]}
        if r.random() < 0.2:  # (a big-blind ante is dead money in the main pot under TDA
            cfg["ante"] = r.choice((1, bb // 4 or 1))  # RP-11, the big blind's own in pokerkit)
        button = seats[-1]
    stacks = {s: r.choice((r.randint(1, 8) * max(cfg.get("bring_in", 1), 1),
                           r.randint(10, 300) * (cfg.get("small_bet") or cfg["blinds"][1]) // 2))
              for s in seats}
    if kind != G.STUD:
        order = [s for s in seats if s > button] + [s for s in seats if s <= button]
    else:
        order = seats
    raw = tuple(stacks[s] for s in order)
    if kind == G.STUD:
        state = pkgame.create_state(AUTO, True, cfg["ante"], cfg["bring_in"], cfg["small_bet"],
                                    cfg["big_bet"], raw, n)
    else:
        sb, bb = cfg["blinds"]
        antes = cfg.get("ante", 0)
        if structure == "fl":
            state = pkgame.create_state(AUTO, True, antes, (sb, bb), bb, 2 * bb, raw, n)
        else:
            state = pkgame.create_state(AUTO, True, antes, (sb, bb), bb, raw, n)
    conf = B.config(kind, dict(cfg, chip=chip))
    opener = order[state.opener_index] if kind == G.STUD else None
    engine = B.Betting(kind, seats, button, conf, stacks, house=HOUSE, draws=draws, opener=opener)
    return engine, state, order, shoe_game


def pk_can(state, kind: str, to: int | None) -> bool:
    if kind == "fold":
        return state.can_fold()
    if kind in ("check", "call"):
        return state.can_check_or_call()
    if kind == "bringin":
        return state.can_post_bring_in()
    return state.can_complete_bet_or_raise_to(to)


def pk_do(state, kind: str, to: int | None) -> None:
    if kind == "fold":
        state.fold()
    elif kind in ("check", "call"):
        state.check_or_call()
    elif kind == "bringin":
        state.post_bring_in()
    else:
        state.complete_bet_or_raise_to(to)


def choose(engine, r: random.Random) -> list[tuple[str, int | None]]:
    """Candidate actions for the seat to act, the random pick first."""
    opts = engine.options()
    cands: list[tuple[str, int | None]] = []
    for kind, val in opts.items():
        if kind in ("bet", "raise", "complete"):
            low, high = val
            picks = {low, high, r.randint(low, high)}
            cands += [(kind, a) for a in sorted(picks)]
        elif kind == "fold":
            if "check" not in opts:
                cands += [("fold", None)] * 2
        else:
            cands += [(kind, None)] * 4
    r.shuffle(cands)
    return cands


def sync(engine, state, counts: dict) -> None:
    """pokerkit still asks a seat to act when no one can call a raise (the one seat with chips
    left, facing nothing): the engine closes the round there. Its check changes nothing."""
    while engine.over and state.actor_index is not None:
        if state.checking_or_calling_amount != 0:
            raise Mismatch("the engine closed the round, pokerkit has a seat facing %s" %
                           state.checking_or_calling_amount)
        state.check_or_call()
        counts[KNOWN[3]] = counts.get(KNOWN[3], 0) + 1
        stand_pat(state)


def play(name: str, r: random.Random, counts: dict) -> dict:
    random.seed(r.random())  # pokerkit shuffles its deck with the module's generator
    engine, state, order, shoe_game = new_hand(name, r)
    index = {s: i for i, s in enumerate(order)}
    guard = 0
    while not engine.over:
        guard += 1
        stand_pat(state)
        if guard > 500:
            raise Mismatch("%s: the hand does not end" % name)
        if engine.closed:
            if state.actor_index is None:
                raise Mismatch("%s: the engine has a next round, pokerkit has no actor (status %s, "
                               "street %s, stacks %s, log %s)" % (
                                   name, state.status, state.street_index, state.stacks,
                                   engine.log))
            opener = order[state.opener_index] if engine.kind == G.STUD else None
            engine.next_round(opener)
            continue
        seat = engine.to_act
        if state.actor_index is None or order[state.actor_index] != seat:
            raise Mismatch("%s round %d: the engine has seat %s to act, pokerkit %s" % (
                name, engine.round, seat,
                None if state.actor_index is None else order[state.actor_index]))
        for kind, amount in choose(engine, r):
            if pk_can(state, kind, amount):
                break
            if kind in ("bet", "raise", "complete") and engine.nbets < engine.cfg["cap"] <= \
                    state.completion_betting_or_raising_count:
                # a fixed-limit all-in short of a full raise: under the house's reopen_limit
                # "full" it is no raise, so it does not count toward the cap (betting.py; with
                # "half", TDA 47-B, half a bet counts and caps it); pokerkit counts every raise
                counts[KNOWN[5]] = counts.get(KNOWN[5], 0) + 1
            elif kind == "complete" and engine.cfg["bring_in"] < engine.high:
                # a short all-in completion: the next seat completes to the small bet; pokerkit
                # takes the short completion for the bet and asks a raise over it
                counts[KNOWN[1]] = counts.get(KNOWN[1], 0) + 1
            else:
                raise Mismatch("%s: pokerkit refuses %s %s by seat %d (options %s, pokerkit %s to "
                               "%s, log %s)" % (
                                   name, kind, amount, seat, engine.options(),
                                   state.min_completion_betting_or_raising_to_amount,
                                   state.max_completion_betting_or_raising_to_amount,
                                   engine.log[-5:]))
        else:
            raise Mismatch("%s: no action both allow for seat %d" % (name, seat))
        rec = engine.act(seat, kind, amount)
        pk_do(state, rec[2], rec[3])  # what the engine made of it (an all-in: call, raise...)
        sync(engine, state, counts)
        if (not engine.closed and not engine.over) and state.actor_index is not None:
            # a seat pokerkit would let raise where the engine (TDA 47) does not
            if state.can_complete_bet_or_raise_to() and "raise" not in engine.options() \
                    and "bet" not in engine.options() and "complete" not in engine.options():
                counts[KNOWN[0]] = counts.get(KNOWN[0], 0) + 1
    stand_pat(state)
    if state.status:
        raise Mismatch("%s: the engine's betting is over, pokerkit's hand is not (actor %s, "
                       "street %s, log %s)" % (name, state.actor_index, state.street_index,
                                               engine.log))
    paid, no_low = payout(engine, state, order, shoe_game)
    final = engine.award(paid)
    theirs = {s: state.stacks[index[s]] for s in order}
    if final != theirs and no_low:
        # pokerkit splits a pot in halves when any seat of the hand has a low, even if no seat
        # that pot's contest qualifies; the rulebooks give the high hand all of it
        counts[KNOWN[4]] = counts.get(KNOWN[4], 0) + 1
    elif final != theirs:
        diff = {s: final[s] - theirs[s] for s in order if final[s] != theirs[s]}
        if sum(diff.values()) == 0 and all(abs(d) <= len(order) for d in diff.values()):
            counts[KNOWN[2]] = counts.get(KNOWN[2], 0) + 1
        else:
            raise Mismatch("%s: stacks %s, pokerkit %s" % (name, final, theirs))
    start = sum(engine.start[s] for s in order)
    if sum(final.values()) != start:
        raise Mismatch("%s: chips not conserved" % name)
    return final


def payout(engine, state, order, shoe_game) -> dict:
    seat = engine.winner_by_fold()
    if seat is not None:
        return {seat: engine.total()}, False
    folded = [s for s in order if engine.folded[s]]
    own = {}
    if not hasattr(state, "seen"):  # no hand was killed: the cards are all still there
        stand_pat(state)
        state.seen = [[card(c) for c in cards] for cards in state.hole_cards]
        state.seen_board = [card(c) for b in state.board_cards for c in b]
    for i, s in enumerate(order):
        if not engine.folded[s]:
            own[s] = state.seen[i]
    board = state.seen_board
    base = shoe_game[:-1] if shoe_game == "omaha8" else shoe_game
    record = {"game": base, "status": "complete", "seats": {str(s): c for s, c in own.items()},
              "board": board}
    bets = {"contributions": {str(s): v for s, v in engine.contributions().items()},
            "folded": folded, "button": engine.button, "rules": "tda2024"}
    if shoe_game == "omaha8":
        bets["split"] = "hilo"
    table = pots.read_table(record, bets)
    dist = pots.distribute(table, dead=engine.dead)
    lows = [bool(p.shares[pots.LOW]) for p in dist.pots if len(p.eligible) > 1]
    no_low = len(table.game.sides) == 2 and any(lows) and not all(lows)
    return dist.payouts, no_low


def run(hands: int, seed: int, games=None) -> dict:
    # seven-card stud for 7 with 4 burns needs 53 cards: pokerkit deals from the muck and warns
    warnings.filterwarnings("ignore", "Returning reserved", UserWarning)
    out = {}
    for name in games or sorted(GAMES):
        r = random.Random("%s-%d" % (name, seed))
        counts: dict = {}
        t0 = time.perf_counter()
        for _ in range(hands):
            play(name, r, counts)
        out[name] = {"hands": hands, "seconds": round(time.perf_counter() - t0, 2), **counts}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hands", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--game", action="append", choices=sorted(GAMES))
    args = ap.parse_args()
    try:
        print(json.dumps(run(args.hands, args.seed, args.game), indent=1))
    except (Mismatch, ShoeError) as e:
        print("MISMATCH: %s" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
