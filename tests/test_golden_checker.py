"""The golden checker itself (tests/golden.py), and the self-consistency of the hand-written
expectations: runs without the engine."""

import glob
import os
from collections import Counter

import pytest

from golden import check, compact, conservation, deck_of, load

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = sorted(glob.glob(os.path.join(HERE, "scenarios", "*.json")))
BAD = sorted(glob.glob(os.path.join(HERE, "scenarios", "bad", "*.json")))
GAMES = {"holdem", "omaha", "omaha5", "omaha6", "shortdeck", "stud", "stud8", "razz", "draw5",
         "triple27"}
STEP_KINDS = {"deal", "street", "draw", "action", "expose", "premature", "fault", "misdeal", "end",
              "stacks"}


def _seat(card, up=False):
    return {"card": card, "up": up}


def good_record():
    """A conserving hold'em record: 3 seats after the flop."""
    return {
        "status": "dealing", "reason": None,
        "seats": {"1": [_seat("Ah"), _seat("Kd")], "2": [_seat("2c"), _seat("7d", True)],
                  "3": []},
        "board": ["Qs", "Js", "Ts"], "burns": ["9h"], "muck": ["3c", "3d"], "aside": [],
        "removed": [], "stub": 52 - 10, "procedures": ["exposed-plays"],
        "log": [{"move": "deal", "card": "Ah", "to": "seat:1"}, "burn 9h"],
    }


GOOD_EXPECT = {
    "status": "dealing", "seats": {"1": ["Ah", "Kd"], "2": ["2c", "7d^"], "3": []},
    "board": ["Qs", "Js", "Ts"], "burns": ["9h"], "muck": ["3c", "3d"], "aside": [],
    "removed": [], "stub": 42, "procedures": ["exposed-plays"],
}


def test_good_record_passes():
    assert check(GOOD_EXPECT, good_record(), "holdem") == []


def test_wildcards_and_one_of():
    exp = dict(GOOD_EXPECT, board=["??", "??", "Ts"], seats={"1": ["??", "Kd"], "2": ["2c", "??^"]},
               one_of={"board": ["Qs", "Js", "2h"]})
    assert check(exp, good_record(), "holdem") == []
    bad = dict(exp, one_of={"board": ["Qs", "2h"]})
    errors = check(bad, good_record(), "holdem")
    assert any("one_of.board" in e and "Js" in e for e in errors), errors
    # ?? is a down card, ??^ an up card
    errors = check(dict(GOOD_EXPECT, seats={"1": ["Ah", "Kd"], "2": ["2c", "??"]}),
                   good_record(), "holdem")
    assert any(e.startswith("seats.2") for e in errors), errors


def test_one_of_on_a_seat():
    exp = dict(GOOD_EXPECT, seats={"1": ["??", "Kd"], "2": ["2c", "7d^"]}, one_of={"1": ["Ah"]})
    assert check(exp, good_record(), "holdem") == []
    errors = check(dict(exp, one_of={"1": ["As"]}), good_record(), "holdem")
    assert any("one_of.1" in e for e in errors), errors


def test_wrong_card_is_reported():
    rec = good_record()
    rec["board"][0] = "2h"          # Qs swapped for a card that was in the stub: still conserving
    errors = check(GOOD_EXPECT, rec, "holdem")
    assert errors == ["board: expected ['Qs', 'Js', 'Ts'], got ['2h', 'Js', 'Ts']"]


def test_wrong_orientation_is_reported():
    rec = good_record()
    rec["seats"]["1"][0]["up"] = True
    errors = check(GOOD_EXPECT, rec, "holdem")
    assert errors == ["seats.1: expected ['Ah', 'Kd'], got ['Ah^', 'Kd']"]


def test_lost_card_is_reported():
    rec = good_record()
    rec["muck"].pop()               # 3d vanished: 9 cards in zones + 42 = 51
    errors = check({}, rec, "holdem")
    assert len(errors) == 1 and errors[0].startswith("conservation:"), errors
    errors = check(GOOD_EXPECT, rec, "holdem")
    assert any(e.startswith("muck:") for e in errors)
    assert any(e.startswith("conservation:") for e in errors)


def test_extra_card_is_reported():
    rec = good_record()
    rec["burns"].append("Ah")       # Ah twice
    errors = check({}, rec, "holdem")
    assert any("Ah is both in" in e for e in errors), errors
    rec = good_record()
    rec["board"].append("Jk")       # a joker outside `removed`
    errors = check({}, rec, "holdem")
    assert any("'Jk'" in e and "not a card" in e for e in errors), errors
    rec = good_record()
    rec["removed"].append("Jk")     # ... is fine in `removed`
    assert check({}, rec, "holdem") == []


def test_extra_card_in_stub_count_is_reported():
    rec = good_record()
    rec["stub"] = 43
    errors = check({}, rec, "holdem")
    assert len(errors) == 1 and "conservation" in errors[0]
    errors = check({"stub": 42}, rec, "holdem")
    assert "stub: expected 42, got 43" in errors


def test_wrong_status_and_procedures_are_reported():
    rec = good_record()
    rec["status"] = "misdeal"
    rec["procedures"] = []
    errors = check(GOOD_EXPECT, rec, "holdem")
    assert "status: expected 'dealing', got 'misdeal'" in errors
    assert "procedures: expected ['exposed-plays'], got []" in errors


def test_unlisted_seat_and_absent_seat():
    rec = good_record()
    exp = dict(GOOD_EXPECT, seats={"1": ["Ah", "Kd"]})
    errors = check(exp, rec, "holdem")
    assert errors == ["seats.2: expected no cards, got ['2c', '7d^']"]
    exp = dict(GOOD_EXPECT, seats=dict(GOOD_EXPECT["seats"], **{"4": []}))
    assert check(exp, rec, "holdem") == []       # [] matches an absent seat


def test_reason_contains_and_unknown_key():
    rec = dict(good_record(), status="void", reason="Fouled deck: duplicate As")
    assert check({"reason_contains": "fouled DECK"}, rec, "holdem") == []
    errors = check({"reason_contains": "joker", "stauts": "void"}, rec, "holdem")
    assert any(e.startswith("reason:") for e in errors)
    assert any("unknown key 'stauts'" in e for e in errors)


def test_secrecy_of_the_stub():
    rec = good_record()
    rec["log"].append("next card 5s")     # 5s is still in the stub
    errors = check({}, rec, "holdem")
    assert errors == ["secrecy: the log names cards that never left the stub: ['5s']"]
    assert check({"returned": ["5s"]}, rec, "holdem") == []


def test_shortdeck_deck():
    assert len(deck_of("shortdeck")) == 36 and "5h" not in deck_of("shortdeck")
    assert len(deck_of("razz")) == 52


def test_compact():
    c = compact(good_record())
    assert c["seats"] == {"1": ["Ah", "Kd"], "2": ["2c", "7d^"]}
    assert c["stub"] == 42 and c["board"] == ["Qs", "Js", "Ts"]


# ---------------------------------------------------------------- the scenario files themselves

def _cards(lst):
    return [c.rstrip("^") for c in lst]


@pytest.mark.parametrize("path", SCENARIOS, ids=[os.path.splitext(os.path.basename(p))[0]
                                                 for p in SCENARIOS])
def test_scenario_file_is_well_formed(path):
    """Shape of the file, and the expectation itself conserves the deck (a check of the hand work,
    not of the engine)."""
    data = load(path)
    for key in ("title", "game", "rules", "house", "seats", "button", "deck", "seed", "steps",
                "expect"):
        assert key in data, key
    assert data["game"] in GAMES and data["rules"] in ("tda2024", "robert")
    deck = deck_of(data["game"])
    assert sorted(data["deck"]) == sorted(deck), "deck is not a permutation of the game's deck"
    assert all(s.get("do") in STEP_KINDS for s in data["steps"])
    exp = data["expect"]
    assert {"status", "stub", "procedures", "seats"} <= set(exp)
    placed = []
    for seat, cards in exp["seats"].items():
        assert int(seat) in data["seats"], seat
        placed += _cards(cards)
    for zone in ("board", "burns", "muck", "aside"):
        placed += _cards(exp.get(zone, []))
    # counts: every zone listed, with the stub, covers the deck exactly
    for zone in ("board", "burns", "muck", "aside", "removed"):
        assert zone in exp, zone
    assert len(placed) + exp["stub"] == len(deck), (len(placed), exp["stub"])
    known = [c for c in placed if c != "??"]
    dup = [c for c, n in Counter(known).items() if n > 1]
    assert not dup and set(known) <= set(deck), dup
    # the wildcards must be fillable: enough unplaced cards in the candidates
    if "??" in placed:
        assert len(set(deck) - set(known)) >= placed.count("??")
    for where, cands in exp.get("one_of", {}).items():
        assert set(cands) <= set(deck)
    # a record built from the expectation (wildcards filled from the unplaced cards) conserves
    if "??" not in placed:
        record = {"seats": {s: [{"card": c.rstrip("^"), "up": c.endswith("^")} for c in cs]
                            for s, cs in exp["seats"].items()},
                  "stub": exp["stub"], "log": []}
        for zone in ("board", "burns", "muck", "aside", "removed"):
            record[zone] = list(exp.get(zone, []))
        assert conservation(record, data["game"]) == []


@pytest.mark.parametrize("path", BAD, ids=[os.path.splitext(os.path.basename(p))[0] for p in BAD])
def test_bad_file_is_well_formed(path):
    data = load(path)
    assert isinstance(data.get("expect_error"), str) and data["expect_error"]
    if "expect_step" in data:
        assert 1 <= data["expect_step"] <= len(data["steps"])
