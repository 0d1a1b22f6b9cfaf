"""PHH export (host/facedown/phh.py): every bundled scenario's hand record becomes a PHH that
pokerkit loads and replays, dealing each player and the board the cards the record ends with."""

import glob
import json
import os
import random
import re
import warnings

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st
from pokerkit import (
    BoardDealing,
    Folding,
    HandHistory,
    HoleCardsShowingOrMucking,
    HoleDealing,
    StandingPatOrDiscarding,
)

from conftest import SCENARIOS

from facedown import payout, phh
from facedown.cli import main
from facedown.errors import UserError
from facedown.replay import load, replay

PATHS = sorted(glob.glob(os.path.join(SCENARIOS, "*.json")))
IDS = [os.path.splitext(os.path.basename(p))[0] for p in PATHS]
_RECORDS = {}

# What pokerkit may warn about while replaying an export (it still accepts both):
# a fold with nothing to call (the shoe logs folds, never chips), and a card dealt again
# after the shoe reshuffled the discards or the muck into the stub.
ALLOWED_WARNINGS = ("There is no reason for this player to fold",
                    "is not recommended to be dealt",
                    # pokerkit's word for a draw reshuffle: the shoe deals discards again
                    "Returning reserved (mucked, etc.) cards as dealable")


def record_of(path):
    if path not in _RECORDS:
        _RECORDS[path] = replay(load(path))
    return _RECORDS[path]


def replayed(text):
    """Load PHH text with pokerkit and replay every state; the last state and the warnings."""
    hh = HandHistory.loads(text)
    applied = 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for state, action in hh.state_actions:
            if action is not None:
                applied += 1
    assert applied == len(hh.actions), "pokerkit skipped or repaired some actions"
    return hh, state, [str(w.message) for w in caught]


def pokerkit_cards(hh, state):
    """The cards each player (by shoe seat) ends with in pokerkit's hand, and the board:
    dealt, minus discards, nothing once folded or mucked."""
    holes = [[] for _ in hh.starting_stacks]
    board = []
    for op in state.operations:
        if isinstance(op, HoleDealing):
            holes[op.player_index] += [repr(c) for c in op.cards]
        elif isinstance(op, StandingPatOrDiscarding):
            for c in op.cards:
                holes[op.player_index].remove(repr(c))
        elif isinstance(op, Folding):
            holes[op.player_index] = []
        elif isinstance(op, HoleCardsShowingOrMucking) and not op.hole_cards:
            holes[op.player_index] = []
        elif isinstance(op, BoardDealing):
            board += [repr(c) for c in op.cards]
    return dict(zip(hh.seats, holes)), board


def pokerkit_holes(game):
    g = phh.GAMES[game]
    return g.exported_holes if g.family == phh.FLOP else g.holes


def test_every_scenario_is_covered():
    assert len(PATHS) >= 35
    assert {record_of(p)["game"] for p in PATHS} == set(phh.GAMES)


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_export_loads_and_replays_in_pokerkit(path):
    rec = record_of(path)
    text = phh.dumps(rec)
    hh, state, caught = replayed(text)
    assert [w for w in caught if not any(a in w for a in ALLOWED_WARNINGS)] == []
    assert hh.variant == phh.GAMES[rec["game"]].variant
    assert isinstance(phh.to_history(rec), HandHistory)


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_pokerkit_ends_with_the_records_cards(path):
    rec = record_of(path)
    hh, state, _ = replayed(phh.dumps(rec))
    u = hh.user_defined_fields
    holes, board = pokerkit_cards(hh, state)
    n = pokerkit_holes(rec["game"])
    unexpressed = " ".join(u.get("_log", [])) + " ".join(u.get("_hole_cards", []))
    for seat, cards in rec["seats"].items():
        want = [c["card"] for c in cards]
        got = [c for c in holes[int(seat)] if c != "??"]
        assert got == want[:n], "seat %s" % seat
        for extra in want[n:]:   # more cards than the game's hand: a misdeal, or omaha5/6
            assert extra in unexpressed
    stopped = [note for note in u["_notes"] if "the PHH stops before" in note]
    if stopped:   # a street pokerkit deals otherwise (short stub): its cards are in _log
        assert rec["board"][:len(board)] == board
        for card in rec["board"][len(board):]:
            assert card in unexpressed
    else:
        assert board == rec["board"]


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_user_fields_carry_the_record(path):
    rec = record_of(path)
    hh = HandHistory.loads(phh.dumps(rec))
    u = hh.user_defined_fields
    for zone in ("burns", "muck", "aside", "removed"):
        assert u["_" + zone] == rec[zone]
    assert u["_stub"] == rec["stub"]
    assert u["_status"] == rec["status"]
    assert u.get("_reason") == rec["reason"]
    assert [p.split(" (")[0] for p in u["_procedures"]] == rec["procedures"]
    assert u["_shoe_game"] == rec["game"]
    assert sorted(hh.seats) == sorted(int(s) for s in rec["seats"])
    assert u["_shoe_seats"] == {"p%d" % (i + 1): s for i, s in enumerate(hh.seats)}
    assert any(n.startswith("chips are nominal") for n in u["_notes"])


def test_players_start_left_of_the_button():
    hh = phh.to_history(record_of(os.path.join(SCENARIOS, "00-holdem-9max.json")))
    assert hh.seats == [5, 6, 7, 8, 9, 1, 2, 3, 4]          # button on seat 4: p1 = small blind
    assert hh.blinds_or_straddles == [1, 2, 0, 0, 0, 0, 0, 0, 0]
    assert hh.actions[9:11] == ["p3 cc", "p4 f"]             # seat 7 calls, seat 8 folds
    hu = phh.to_history(record_of(os.path.join(SCENARIOS, "00-holdem-headsup-robert.json")))
    assert hu.seats == [7, 3]   # heads-up: p1 is the big blind, the button (seat 3) p2
    stud = phh.to_history(record_of(os.path.join(SCENARIOS, "00-stud-6max.json")))
    assert stud.seats == [1, 2, 3, 4, 5, 6] and "_shoe_button" not in stud.user_defined_fields


def test_variant_mapping():
    assert {g: phh.GAMES[g].variant for g in phh.GAMES} == {
        "holdem": "NT", "omaha": "PO", "omaha5": "PO", "omaha6": "PO", "shortdeck": "NS",
        "stud": "F7S", "stud8": "F7S/8", "razz": "FR", "draw5": "N2L1D", "triple27": "F2L3D"}
    for game in phh.GAMES:
        assert phh.GAMES[game].variant in HandHistory.game_types


def test_burns_and_irregular_moves_are_user_fields():
    rec = record_of(os.path.join(SCENARIOS, "03-premature-flop-tda.json"))
    u = HandHistory.loads(phh.dumps(rec)).user_defined_fields
    assert u["_burns"] == rec["burns"]
    assert u["_procedures"] == ["premature-flop (TDA RP-5-A)"]
    log = " | ".join(u["_log"])
    assert "procedure premature-flop (TDA RP-5-A)" in log
    assert "board>stub" in log and "reshuffle stub" in log


def test_four_card_flop_exports_the_final_flop():
    rec = record_of(os.path.join(SCENARIOS, "04-four-card-flop-tda.json"))
    hh = phh.to_history(rec)
    assert "d db KhQh9h" in hh.actions
    assert "#19 Ah board>burns" in hh.user_defined_fields["_log"]


def test_dead_hand_folds_and_unknown_cards_fill_a_short_hand():
    hh = phh.to_history(record_of(os.path.join(SCENARIOS, "09-button-dead-headsup-tda.json")))
    assert hh.actions == ["d dh p1 AsQh", "d dh p2 Kd??", "p2 f # dead hand (button-dead)"]


def test_five_and_six_card_omaha_keep_the_full_hands():
    for game in ("omaha5", "omaha6"):
        rec = record_of(os.path.join(SCENARIOS, "00-%s.json" % game))
        u = phh.to_history(rec).user_defined_fields
        n = phh.GAMES[game].holes
        assert [len(h.split()[1]) // 2 for h in u["_hole_cards"]] == [n] * len(rec["seats"])
        assert any("no %s-card Omaha" % ("five" if n == 5 else "six") in x for x in u["_notes"])


def test_stud_cards_turned_up_or_down():
    u = phh.to_history(record_of(os.path.join(
        SCENARIOS, "02-stud-exposed-first-card-robert.json"))).user_defined_fields
    assert u["_face_up"] == ["p1 2c"] and u["_face_down"] == ["p1 2h"]
    u = phh.to_history(record_of(os.path.join(
        SCENARIOS, "01-exposed-after-sa-tda.json"))).user_defined_fields
    assert u["_face_up"] == ["p2 3d"]


def test_draws_discard_then_deal():
    hh = phh.to_history(record_of(os.path.join(SCENARIOS, "00-draw5.json")))
    i = hh.actions.index("p1 sd 2c2d")
    assert hh.actions[i:i + 9] == ["p1 sd 2c2d", "p2 sd", "p3 sd 4c4d4h", "p4 sd 7s", "p5 sd",
                                   "d dh p1 8h8s", "d dh p3 9c9d9h", "d dh p4 9s",
                                   "p1 cc # added"]


def test_misdeal_stops_where_the_shoe_stopped():
    rec = record_of(os.path.join(SCENARIOS, "08-boxed-twice-tda.json"))
    hh, state, _ = replayed(phh.dumps(rec))
    u = hh.user_defined_fields
    assert u["_status"] == "misdeal" and u["_reason"] == rec["reason"]
    assert hh.actions == ["d dh p1 2c", "d dh p2 4c"]


def test_short_stub_community_card_stops_the_stud_hand():
    rec = record_of(os.path.join(SCENARIOS, "10-short-stub-b-stud-8max.json"))
    u = phh.to_history(rec).user_defined_fields
    assert any(n.startswith("7th street: the shoe dealt a community card") for n in u["_notes"])
    assert any(e.endswith("Qs stub>board") for e in u["_log"])
    rec = record_of(os.path.join(SCENARIOS, "10-short-stub-c-stud-8max.json"))
    assert "d db %s" % rec["board"][0] in phh.to_history(rec).actions   # pokerkit agrees here


def _scenario(name, steps):
    scn = load(os.path.join(SCENARIOS, name))
    scn.pop("expect", None)
    scn["steps"] = steps
    return scn


def test_betting_actions_map_to_pokerkit_amounts():
    rec = replay(_scenario("00-holdem-9max.json", [
        {"do": "deal"},
        {"do": "action", "seat": 7, "kind": "raise"},
        {"do": "action", "seat": 8, "kind": "fold"},
        {"do": "action", "seat": 9, "kind": "call"},
        {"do": "street"},
        {"do": "action", "seat": 5, "kind": "bet"},
        {"do": "action", "seat": 6, "kind": "allin"},
        {"do": "end"}]))
    hh, state, _ = replayed(phh.dumps(rec))
    acts = hh.actions
    assert acts[9:12] == ["p3 cbr 4", "p4 f", "p5 cc"]      # a min raise, a fold, a call
    flop = acts.index("d db " + "".join(rec["board"][:3]))
    assert acts[flop + 1:flop + 3] == ["p1 cbr 2", "p2 cbr 196"]   # min bet; all-in: the stack
    assert all(a.endswith("# added") for a in acts[12:flop])


def test_stud_bring_in_and_completion():
    rec = replay(_scenario("00-stud-6max.json", [
        {"do": "deal"},
        {"do": "action", "seat": 1, "kind": "call"},
        {"do": "action", "seat": 2, "kind": "raise"},
        {"do": "action", "seat": 3, "kind": "fold"},
        {"do": "end"}]))
    hh, _, _ = replayed(phh.dumps(rec))
    assert hh.actions[6:9] == ["p1 pb", "p2 cbr 4", "p3 f"]


def test_options_set_the_nominal_chips():
    rec = record_of(os.path.join(SCENARIOS, "00-holdem-headsup-robert.json"))
    hh, _, _ = replayed(phh.dumps(rec, stack=1000, small_blind=5, big_blind=10))
    assert hh.starting_stacks == [1000, 1000] and hh.blinds_or_straddles == [5, 10]
    assert hh.min_bet == 10
    limit, _, _ = replayed(phh.dumps(rec, variant="FT"))
    assert (limit.variant, limit.small_bet, limit.big_bet) == ("FT", 2, 4)
    with pytest.raises(UserError):
        phh.dumps(rec, variant="PO")
    with pytest.raises(TypeError):
        phh.dumps(rec, blinds=3)
    with pytest.raises(UserError):
        phh.dumps({"game": "holdem"})


def test_replay_phh_flag(capsys):
    path = os.path.join(SCENARIOS, "03-premature-turn-robert.json")
    assert main(["replay", path, "--phh", "--in-process"]) == 0
    out = capsys.readouterr().out
    hh, _, _ = replayed(out)
    assert hh.user_defined_fields["_procedures"][0].startswith("premature-turn-aside")
    assert out == phh.dumps(record_of(path))


KINDS = ("check", "call", "bet", "raise", "fold", "allin")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PATHS), st.integers(0, 2 ** 32 - 1))
def test_any_accepted_hand_exports(path, seed):
    """Bundled scenarios with random betting actions, exposures, premature streets, faults and
    cut-off endings: whatever the engine accepts, pokerkit loads and replays."""
    rng = random.Random(seed)
    scn = load(path)
    scn.pop("expect", None)
    steps = [s for s in scn["steps"] if s["do"] != "action" or rng.random() < 0.5]
    for _ in range(rng.randrange(1, 8)):
        seat = rng.choice(scn["seats"])
        step = rng.choice([
            {"do": "action", "seat": seat, "kind": rng.choice(KINDS)},
            {"do": "action", "seat": seat, "kind": rng.choice(KINDS)},
            {"do": "action", "seat": seat, "kind": rng.choice(KINDS)},
            {"do": "expose", "seat": seat, "card": rng.randrange(1, 4)},
            {"do": "premature"},
            {"do": "street"},
            {"do": "fault", "kind": rng.choice(["double_feed", "boxed"]),
             "at": rng.randrange(1, 4)},
            {"do": "fault", "kind": "jam", "mixed_with": rng.choice([[], ["muck"]])},
        ])
        steps.insert(rng.randrange(0, len(steps) + 1), step)
    if rng.random() < 0.3:
        steps = steps[:rng.randrange(1, len(steps) + 1)]
    rec = None
    for _ in range(12):   # drop the steps the engine refuses (it names them) and try again
        scn["steps"] = steps
        try:
            rec = replay(scn)
            break
        except UserError as e:
            refused = re.search(r"step (\d+) \(", str(e))
            if not refused:
                break
            steps = steps[:int(refused.group(1)) - 1] + steps[int(refused.group(1)):]
    assume(rec is not None)
    hh, state, caught = replayed(phh.dumps(rec))
    assert [w for w in caught if not any(a in w for a in ALLOWED_WARNINGS)] == []
    assert hh.user_defined_fields["_status"] == rec["status"]
    json.dumps(hh.user_defined_fields)   # plain data


def test_docs_example_is_current(capsys):
    doc = open(os.path.join(os.path.dirname(SCENARIOS), "..", "docs", "phh.md")).read()
    example = doc.split("```toml\n")[1].split("```")[0]
    path = os.path.join(SCENARIOS, "09-button-dead-headsup-tda.json")
    assert main(["replay", path, "--phh", "--in-process"]) == 0
    assert capsys.readouterr().out == example


def test_a_bet_hand_with_stacks_per_hand_and_chips_procedures_replays_to_the_payout():
    """The stacks given for the hand (stack events) start the PHH, and the chips procedures
    (an excess back, a short bet completed, chips not declared making a call) are the actions
    the shoe applied: pokerkit ends with the stacks the shoe's payout gives."""
    with open(os.path.join(SCENARIOS, "55-stacks-per-hand-override-robert.json")) as f:
        scn = json.load(f)
    scn.pop("expect")
    act = [{"do": "action", "seat": s, "kind": k} for s, k in (
        (2, "check"), (3, "check"), (2, "check"), (3, "check"))]
    scn["steps"] += [
        {"do": "action", "seat": 1, "kind": "call", "chips": {"put": 400}},
        {"do": "action", "seat": 2, "kind": "call",
         "chips": {"put": 200, "smallest": 100, "declared": False}},
        {"do": "street"}, {"do": "action", "seat": 1, "kind": "check"},
        {"do": "action", "seat": 2, "kind": "bet", "amount": 500, "chips": {"put": 400}},
        {"do": "action", "seat": 3, "kind": "call"}, {"do": "action", "seat": 1, "kind": "fold"},
        {"do": "street"}] + act[:2] + [{"do": "street"}] + act[2:] + [{"do": "end"}]
    rec = replay(scn)
    rec["config"] = {k: scn[k] for k in ("game", "seats", "button", "rules", "house")}
    settled = payout.settle(rec)
    assert settled["stacks"]["start"] == {"1": 10000, "2": 10000, "3": 10000, "4": 250}
    hh, state, _ = replayed(phh.dumps(rec))
    assert hh.starting_stacks == [10000, 10000, 10000, 250]
    assert "p2 cbr 500" in hh.actions  # the bet declared with 400 out, completed
    assert list(state.stacks) == [settled["stacks"]["end"][str(s)] for s in (1, 2, 3, 4)]


def checked_down(name, extra):
    """A bundled 4-seat betting scenario, then `extra` (seat, kind) actions, then every street
    checked round by the seats that did not fold, and the end: its record with its config."""
    with open(os.path.join(SCENARIOS, name + ".json")) as f:
        scn = json.load(f)
    scn.pop("expect")
    scn["steps"] += [{"do": "action", "seat": s, "kind": k} for s, k in extra]
    live = [s for s in (1, 2, 3, 4) if (s, "fold") not in extra]
    for _ in range(3):
        scn["steps"] += [{"do": "street"}] + [
            {"do": "action", "seat": s, "kind": "check"} for s in live]
    scn["steps"].append({"do": "end"})
    rec = replay(scn)
    rec["config"] = {k: scn[k] for k in ("game", "seats", "button", "rules", "house")}
    return rec


@pytest.mark.parametrize("name, extra, want", [
    # TDA 53: the action to seat 4 changed, its raise out of turn is taken back: none in the PHH
    ("50-oot-changed-tda", [(4, "call"), (1, "fold"), (2, "fold")],
     ["p3 cbr 400", "p4 cc", "p1 f", "p2 f"]),
    # TDA 53: unchanged, its call out of turn binds at its turn, after seat 3's
    ("50-oot-binds-tda", [(1, "call"), (2, "check")], ["p3 cc", "p4 cc", "p1 cc", "p2 cc"]),
])
def test_an_action_out_of_turn_is_placed_as_the_shoe_applied_it(name, extra, want):
    """The PHH gives a bet table's action out of turn at its seat's turn, as the shoe's engine
    applied it (or not at all when it was taken back); pokerkit replays it to the payout."""
    rec = checked_down(name, extra)
    hh, state, _ = replayed(phh.dumps(rec))
    assert hh.actions[4:4 + len(want)] == want
    end = payout.settle(rec)["stacks"]["end"]
    assert list(state.stacks) == [end[str(s)] for s in (1, 2, 3, 4)]


def exported_checked_down(scn, seats):
    """The scenario's hand, its seats checking the three streets down: the payout's end stacks,
    the PHH export as pokerkit loads it and pokerkit's state after replaying it."""
    for _ in range(3):
        scn["steps"] += [{"do": "street"}] + [{"do": "action", "seat": s, "kind": "check"}
                                              for s in seats]
    scn["steps"].append({"do": "end"})
    rec = replay(scn)
    rec["config"] = {k: scn[k] for k in ("game", "seats", "button", "rules", "house")}
    end = payout.settle(rec)["stacks"]["end"]
    hh, state, _ = replayed(phh.dumps(rec))
    return end, hh, state


@pytest.mark.parametrize("short_blind", ["full", "posted"])
def test_a_short_all_in_big_blind_exports_what_pokerkit_can_replay(short_blind):
    """60 of a 100 big blind, seats 3 and 4 call and check it down. With the house's short_blind
    full the shoe has them call 100 (a side pot of 40 each, seat 4's flush wins it); pokerkit
    calls 60 and cannot be told otherwise: the export names the difference in _notes, and
    pokerkit's stacks are the payout's but for those 80 chips. With short_blind posted, pokerkit
    replays to the payout exactly."""
    with open(os.path.join(SCENARIOS, "57-short-bb-called-full-tda.json")) as f:
        scn = json.load(f)
    scn.pop("expect")
    scn["house"]["short_blind"] = short_blind
    scn["steps"] = [{"do": "deal"}] + [{"do": "action", "seat": s, "kind": k} for s, k in (
        (3, "call"), (4, "call"), (1, "fold"))]
    end, hh, state = exported_checked_down(scn, (3, 4))
    notes = [n for n in hh.user_defined_fields["_notes"] if "short_blind" in n]
    theirs = list(state.stacks)
    if short_blind == "full":
        assert [end[str(s)] for s in (1, 2, 3, 4)] == [950, 0, 900, 1210]
        assert theirs == [950, 0, 940, 1170]
        assert notes == ["seat 2's blind was all in for 60 of 100: the shoe had it called as the "
                         "full 100 (house short_blind full); pokerkit calls it for 60, so chips "
                         "called over it and not given back make pokerkit's stacks differ from "
                         "the payout's (docs/phh.md)"]
    else:
        assert theirs == [end[str(s)] for s in (1, 2, 3, 4)] == [950, 0, 940, 1170]
        assert notes == []


@pytest.mark.parametrize("name", ["56-fl-short-allin-completed-robert",
                                  "56-fl-short-allin-raised-tda"])
def test_a_limit_all_in_completed_is_named_in_the_notes(name):
    """Robert's completion of a short limit all-in (40 over an all-in of 25 on a 20 bet) is no
    action pokerkit can take: it raises to 45 whatever the export says. The export names it,
    and pokerkit's stacks differ from the payout's by those 5 chips a caller; under TDA's
    "raise" pokerkit replays to the payout."""
    with open(os.path.join(SCENARIOS, name + ".json")) as f:
        scn = json.load(f)
    scn.pop("expect")
    scn["steps"].append({"do": "action", "seat": 3, "kind": "call"})
    end, hh, state = exported_checked_down(scn, (1, 2, 3, 5))
    notes = [n for n in hh.user_defined_fields["_notes"] if "limit_short_allin" in n]
    ours = [end[str(s)] for s in (1, 2, 3, 4, 5)]
    if name.endswith("robert"):
        assert ours == [960, 960, 960, 125, 1020] and list(state.stacks) != ours
        assert notes == ["seat 5 completed the all-in wager to 40 (house limit_short_allin "
                         "complete, RRoP Betting and raising 6); pokerkit raises a full bet over "
                         "the all-in, to 45, so its stacks differ from the payout's "
                         "(docs/phh.md)"]
    else:
        assert list(state.stacks) == ours == [955, 955, 955, 125, 1035] and notes == []


@pytest.mark.parametrize("name, extra, want", [
    # house excess_chips stays: seat 3 called 100 with 150, the 50 stay in the pot; the flop
    # checks round, seats 2 and 3 tie on the board and split the 300 with the dead 50
    ("52-chips-excess-pot-home-tda", [(4, "fold"), (1, "fold"), (2, "check")],
     [9950, 10050, 10000, 10000]),
    # the home rule out of turn: seat 4's raise to 300 is a call at its turn, 200 to the pot
    ("50-oot-home-excess-to-pot-robert", [(1, "fold"), (2, "fold")],
     [9950, 9900, 9900, 10250]),
])
def test_dead_money_is_exported_as_part_of_the_seats_ante(name, extra, want):
    """Chips a seat left in the pot without a bet have no PHH action: the export gives them as
    part of its ante (dead money in the main pot, as they were), says so in _notes, and
    pokerkit replays to the payout's stacks."""
    rec = checked_down(name, extra)
    end = payout.settle(rec)["stacks"]["end"]
    hh, state, _ = replayed(phh.dumps(rec))
    dead = 50 if name.startswith("52") else 200
    seat = 3 if name.startswith("52") else 4
    player = [p for p, s in hh.user_defined_fields["_shoe_seats"].items() if s == seat][0]
    assert hh.antes == [dead if "p%d" % (i + 1) == player else 0 for i in range(4)]
    assert "seat %d's ante includes %d chip(s) it left in the pot as dead money" % (
        seat, dead) in " ".join(hh.user_defined_fields["_notes"])
    assert list(state.stacks) == [end[str(s)] for s in (1, 2, 3, 4)] == want


def test_dead_money_of_a_seat_then_all_in_keeps_the_side_pots():
    """Seat 3 (400 chips) calls 100 with 150 (50 dead, excess_chips stays), then is all in for
    350 behind a raise to 1000; seats 2 and 3 tie on the board's flush: the main pot (3 x 350,
    the small blind's 50 and the dead 50) is split, the side pot is seat 2's. The ante that
    carries the 50 in the PHH does not move the side pot's line: pokerkit ends as the payout."""
    with open(os.path.join(SCENARIOS, "52-chips-excess-pot-home-tda.json")) as f:
        scn = json.load(f)
    scn.pop("expect")
    scn["house"]["betting"]["stacks"] = {"1": 10000, "2": 10000, "3": 400, "4": 10000}

    def act(seat, kind, amount=None):
        return dict({"do": "action", "seat": seat, "kind": kind},
                    **({"amount": amount} if amount else {}))
    scn["steps"] += [act(4, "raise", 1000), act(1, "fold"), act(2, "call"), act(3, "allin"),
                     {"do": "street"}, act(2, "bet", 500), act(4, "fold"), {"do": "street"},
                     {"do": "street"}, {"do": "end"}]
    rec = replay(scn)
    rec["config"] = {k: scn[k] for k in ("game", "seats", "button", "rules", "house")}
    settled = payout.settle(rec)
    assert [p["amount"] for p in settled["pots"]] == [1150, 1300]
    hh, state, _ = replayed(phh.dumps(rec))
    assert hh.antes == [0, 0, 50, 0]
    assert list(state.stacks) == [settled["stacks"]["end"][str(s)] for s in (1, 2, 3, 4)] == [
        9950, 10875, 575, 9000]
