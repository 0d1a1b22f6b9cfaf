"""The table's betting as a user meets it: `facedown` commands in subprocesses against a real
`facedown sim` (the firmware on the MicroPython unix port): how the game is bet in the
configuration (--bet, a profile's [betting]), refused with one line when it is wrong."""

import json

import pytest

from cli import Sim, run


def ok(proc):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def err(proc):
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("facedown: error:")]
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    with Sim("--flash", tmp_path_factory.mktemp("betting") / "flash") as s:
        ok(run("--port", s.port, "login", "--role", "maintenance"))
        yield s


def config(sim, *argv):
    return run("--port", sim.port, "config", "--game", "holdem", "--seats", "1-6", *argv)


def test_config_with_betting_is_kept_and_shown(sim):
    out = ok(config(sim, "--bet", "structure=nl", "--bet", "blinds=50,100", "--bet",
                    "bb_ante=100", "--bet", "stacks=10000"))
    assert "betting: no-limit, blinds 50/100, big-blind ante 100, stacks 10000 each" in out
    st = json.loads(ok(run("--port", sim.port, "status", "--json")))
    assert st["config"]["house"]["betting"] == {"structure": "nl", "blinds": [50, 100],
                                                "bb_ante": 100, "stacks": 10000}
    out = ok(run("--port", sim.port, "config", "--game", "stud", "--seats", "1-6", "--bet",
                 "ante=5", "--bet", "bring_in=10", "--bet", "small_bet=20"))
    assert "betting: fixed-limit, ante 5, bring-in 10, small bet 20" in out


@pytest.mark.parametrize("argv, says", [
    (("--bet", "structure=xl", "--bet", "blinds=1,2"), "betting structure 'xl' is not known"),
    (("--bet", "blinds=1,2", "--bet", "straddles=4"),
     "straddles are off in this house (house setting straddle)"),
    (("--bet", "blinds=100"), "betting needs blinds: [small blind, big blind]"),
    (("--bet", "blinds=1,2", "--bet", "ante=x"), "--bet ante=x: a whole number of chips"),
    (("--bet", "blinds"), "--bet takes KEY=VALUE, not 'blinds'"),
    (("--bet", "blinds=1,2", "--bet", "chip=2"), "blind 1 is not a multiple of the chip (2)"),
])
def test_a_bad_betting_configuration_is_one_line_and_changes_nothing(sim, argv, says):
    ok(config(sim, "--bet", "blinds=5,10"))
    assert says in err(config(sim, *argv))
    st = json.loads(ok(run("--port", sim.port, "status", "--json")))
    assert st["config"]["house"]["betting"] == {"blinds": [5, 10]}


def test_straddles_where_the_house_allows_them_and_a_profile(sim, tmp_path):
    out = ok(config(sim, "--rules", "robert", "--bet", "blinds=1,2", "--bet", "straddles=4"))
    assert "Robert's Rules of Poker" in out and "straddles 4" in out
    prof = tmp_path / "cash.toml"
    prof.write_text('name = "cash"\ngame = "omaha"\nseats = "1-6"\n[house]\n'
                    'out_of_turn = "home"\n[betting]\nstructure = "pl"\nblinds = [1, 2]\n')
    out = ok(run("--port", sim.port, "config", "--profile", prof))
    assert "house out_of_turn=home; betting: pot-limit, blinds 1/2" in out
    out = ok(run("--port", sim.port, "config", "--profile", prof, "--no-bet"))
    assert "betting" not in out
    # today's configuration, without betting, is unchanged
    st = json.loads(ok(run("--port", sim.port, "status", "--json")))
    assert "betting" not in st["config"]["house"]


def status(sim):
    return json.loads(ok(run("--port", sim.port, "status", "--json")))


@pytest.mark.slow
def test_a_bet_hand_through_the_cli(sim):
    """Whose turn, the amounts, a refused action (one line, nothing changes), a street that waits
    for the betting, all in, the history's totals."""
    ok(run("--port", sim.port, "config", "--game", "holdem", "--seats", "1-4", "--button", "4",
           "--bet", "blinds=50,100", "--bet", "stacks=10000"))
    out = ok(run("--port", sim.port, "deal"))
    assert "(bet 50, stack 9950, in 50)" in out  # seat 1, the small blind
    assert "pot 150; seat 3 to act: call 100, fold, raise 200..10000" in out
    before = status(sim)
    for argv, says in ((("action", "4", "call"), "action: seat 4 acted out of turn: seat 3 is "
                        "to act (TDA 50)"),
                       (("action", "3", "raise", "150"), "a raise to 150 is under the minimum, "
                        "200 (TDA 43)"),
                       (("action", "3", "raise"), "a raise needs its amount"),
                       (("street",), "the betting round is not over: seat 3 is to act"),
                       (("action", "3", "call", "x"), "an amount is a whole number of chips")):
        assert says in err(run("--port", sim.port, *argv)), argv
        after = status(sim)
        assert after["table"] == before["table"] and after["events"] == before["events"]
    assert "seat 4 to act" in ok(run("--port", sim.port, "action", "3", "raise", "300"))
    ok(run("--port", sim.port, "action", "4", "fold"))
    ok(run("--port", sim.port, "action", "1", "fold"))
    out = ok(run("--port", sim.port, "action", "2", "call"))
    assert "pot 650; the round's betting is over: deal the next street" in out
    assert "seat 2 to act" in ok(run("--port", sim.port, "street"))
    ok(run("--port", sim.port, "action", "2", "allin"))
    out = ok(run("--port", sim.port, "action", "3", "call"))
    assert "pot 20050; the betting is over" in out
    ok(run("--port", sim.port, "street"))
    ok(run("--port", sim.port, "street"))
    ok(run("--port", sim.port, "end"))
    doc = json.loads(ok(run("--port", sim.port, "history", "--last", "1", "--json")))
    hand = doc[0] if isinstance(doc, list) else doc
    rec = hand.get("record", hand)
    acts = [e for e in rec["log"] if "action" in e]
    assert acts == [{"action": "raise", "seat": 3, "total": 300},
                    {"action": "fold", "seat": 4}, {"action": "fold", "seat": 1},
                    {"action": "call", "seat": 2, "total": 300},
                    {"action": "allin", "seat": 2, "total": 9700},
                    {"action": "call", "seat": 3, "total": 9700}]
    chips = rec["chips"]  # the payout from the shoe's record (facedown.payout)
    assert chips["contributions"] == {"1": 50, "2": 10000, "3": 10000, "4": 0}
    assert sum(chips["payouts"].values()) == 20050
    assert sum(chips["stacks"]["end"].values()) == 40000
    table = ok(run("--port", sim.port, "history", "--last", "1"))
    assert "chips    in: seat 1 50, seat 2 10000, seat 3 10000\n" in table
    assert "  payout   seat " in table and "  stacks   seat 1 10000 -> 9950" in table


def test_a_raise_with_the_stacks_not_given_has_no_limit_shown(sim):
    """No stacks in the configuration: the engine takes every stack as unlimited (its 'not
    told', 2**30 chips) and the CLI says what that means instead of the number."""
    ok(run("--port", sim.port, "config", "--game", "holdem", "--seats", "1-4", "--button", "4",
           "--bet", "blinds=50,100"))
    out = ok(run("--port", sim.port, "deal"))
    assert "seat 3 to act: call 100, fold, raise 200 or more (no limit: stacks not given)" in out
    out = ok(run("--port", sim.port, "action", "3", "raise", "300"))
    assert "seat 4 to act: call 300, fold, raise 500 or more (no limit: stacks not given)" in out
    out += ok(run("--port", sim.port, "status"))
    assert "1073741824" not in out and "107374" not in out
    assert "raise 500 or more (no limit: stacks not given)" in out
    for seat in (4, 1, 2):
        ok(run("--port", sim.port, "action", str(seat), "fold"))
    ok(run("--port", sim.port, "end"))


def test_an_amount_on_a_table_that_is_not_bet(sim):
    ok(config(sim, "--button", "6"))
    ok(run("--port", sim.port, "deal"))
    ok(run("--port", sim.port, "action", "2", "call"))  # today's amount-less action, unchecked
    says = err(run("--port", sim.port, "action", "3", "raise", "200"))
    assert "this table is not bet: configure its betting" in says
    ok(run("--port", sim.port, "end"))


@pytest.mark.slow
def test_an_action_out_of_turn_through_the_cli(sim):
    """Seed 003's home rule: the chips go in at once and stay; facing a raise the seat completes
    or folds; the history settles it."""
    ok(run("--port", sim.port, "config", "--game", "holdem", "--seats", "1-4", "--button", "4",
           "--bet", "blinds=50,100", "--bet", "stacks=10000", "--house", "out_of_turn=home"))
    ok(run("--port", sim.port, "deal"))
    out = ok(run("--port", sim.port, "action", "4", "raise", "300", "--out-of-turn"))
    assert "(stack 9700, in 300)" in out and "seat 3 to act" in out
    assert "seat 4 to act: call 300, fold" in ok(run("--port", sim.port, "action", "3", "raise",
                                                     "600"))
    says = err(run("--port", sim.port, "action", "4", "raise", "1200"))
    assert "seat 4 acted out of turn: it may call or fold, not raise (seed 003)" in says
    for s in (4, 1, 2):
        ok(run("--port", sim.port, "action", str(s), "fold"))
    ok(run("--port", sim.port, "end"))
    rec = json.loads(ok(run("--port", sim.port, "history", "--last", "1", "--json")))[0]
    assert {"action": "raise", "seat": 4, "out_of_turn": True, "total": 300} in rec["log"]
    assert rec["chips"]["payouts"] == {"3": 750}
    assert rec["chips"]["stacks"]["end"]["4"] == 9700  # its chips stayed in the pot


def test_chips_put_out_through_the_cli(sim):
    """The chips put out against what was declared: each procedure named with its rule in one
    line; a push no rule makes an action of is one error line and changes nothing."""
    ok(run("--port", sim.port, "config", "--game", "holdem", "--seats", "1-4", "--button", "4",
           "--bet", "blinds=50,100", "--bet", "stacks=10000", "--house", "excess_chips=stays"))
    ok(run("--port", sim.port, "deal"))
    out = ok(run("--port", sim.port, "action", "3", "raise", "300", "--chips", "200"))
    assert "action 3 raise: the shoe applied chips-short (TDA 41)" in out
    assert "(bet 300, stack 9700, in 300)" in out
    out = ok(run("--port", sim.port, "action", "4", "call", "--chips", "400"))
    assert "chips-excess-pot (house setting (seed 003))" in out and "pot 850" in out
    out = ok(run("--port", sim.port, "action", "1", "chips", "500", "--one-chip"))
    assert "action 1 chips: the shoe applied oversized-call (TDA 44)" in out
    before = status(sim)
    for argv, says in ((("action", "2", "chips", "20000"),
                        "seat 2 put out 20000, more than it has (9900) (TDA 41)"),
                       (("action", "2", "call", "--one-chip"), "give them with --chips N"),
                       (("action", "2", "chips"), "action SEAT chips needs the chips put out"),
                       (("action", "2", "chips", "0"), "no chips put out and nothing declared")):
        assert says in err(run("--port", sim.port, *argv)), argv
        after = status(sim)
        assert after["table"] == before["table"] and after["events"] == before["events"]
    out = ok(run("--port", sim.port, "action", "2", "chips", "300", "--smallest", "100"))
    assert "under-raise-full (TDA 43-B)" in out and "(bet 500, stack 9500, in 500)" in out
    for s in (3, 4, 1):
        ok(run("--port", sim.port, "action", str(s), "fold"))
    ok(run("--port", sim.port, "end"))
    rec = json.loads(ok(run("--port", sim.port, "history", "--last", "1", "--json")))[0]
    assert {"procedure": "chips-excess-pot", "rule": "house setting (seed 003)", "seat": 4,
            "chips": 100} in rec["log"]
    assert rec["chips"]["dead"] == 100 and rec["chips"]["returned"] == {"2": 200}
    assert rec["chips"]["payouts"] == {"2": 1300}  # four calls of 300 and the 100 left in


def test_the_stacks_of_a_hand_through_the_cli(sim):
    """Given after `hand`, before the first card: the action beyond a stack is one line and
    changes nothing, the all-in is the stack; after the deal they are refused."""
    ok(run("--port", sim.port, "config", "--game", "holdem", "--seats", "1-4", "--button", "4",
           "--bet", "blinds=50,100"))
    ok(run("--port", sim.port, "hand"))
    says = err(run("--port", sim.port, "stacks", "1=500", "2=80", "3=2000"))
    assert "no stack for seat 4: give every seat's" in says
    assert "stacks 3=x: an amount is a whole number" in err(run("--port", sim.port, "stacks",
                                                               "3=x"))
    out = ok(run("--port", sim.port, "stacks", "1=500", "2=80", "3=2000", "4=1000"))
    assert "(bet 80, stack 0, in 80, ALL IN)" in out
    out = ok(run("--port", sim.port, "deal"))
    # the short big blind is called as the full blind (house short_blind full, docs/betting.md)
    assert "seat 3 to act: call 100, fold, raise 200..2000" in out
    before = status(sim)
    assert "more than seat 3 has (2000) (TDA 41)" in err(run("--port", sim.port, "action", "3",
                                                             "raise", "3000"))
    assert "before its first card" in err(run("--port", sim.port, "stacks", "1=9", "2=9",
                                              "3=9", "4=9"))
    after = status(sim)
    assert after["table"] == before["table"] and after["events"] == before["events"]
    assert "(bet 2000, stack 0, in 2000, ALL IN)" in ok(run("--port", sim.port, "action", "3",
                                                            "allin"))
    for s in (4, 1):
        ok(run("--port", sim.port, "action", str(s), "fold"))
    for _ in range(3):
        ok(run("--port", sim.port, "street"))
    ok(run("--port", sim.port, "end"))
    rec = json.loads(ok(run("--port", sim.port, "history", "--last", "1", "--json")))[0]
    assert {"seat": 3, "stack": 2000} in rec["log"]
    chips = rec["chips"]
    assert chips["stacks"]["start"] == {"1": 500, "2": 80, "3": 2000, "4": 1000}
    assert chips["returned"] == {"3": 1920}  # all but the big blind's 80 uncalled
    assert sum(chips["payouts"].values()) == 210
    assert sum(chips["stacks"]["end"].values()) == 3580


def test_a_configuration_too_long_for_a_frame(sim, tmp_path):
    """room.toml with a [betting] giving each seat's stack is one line naming what takes the
    room and what to do; overrides at the rulebook's default and stacks all alike are sent in a
    way that fits, changing nothing the shoe does."""
    ok(config(sim, "--bet", "blinds=5,10"))
    room = tmp_path / "room.toml"
    room.write_text('name = "Main room, Friday tournament"\ngame = "holdem"\nseats = "1-9"\n'
                    '[house]\npremature_turn = "set_aside"\nextra_holecard = "burn"\n'
                    'cut_after_reshuffle = false\n[betting]\nblinds = [500, 1000]\n'
                    'bb_ante = 1000\n[betting.stacks]\n' + "".join(
                        '%d = %d\n' % (s, 100000 + 1000 * s) for s in range(1, 10)))
    says = err(run("--port", sim.port, "config", "--profile", room))
    assert "config: the house settings take 281 bytes as JSON (the betting 146, the " \
           "profile's name 30, 3 house overrides 82), more than the 144" in says
    proc = run("--port", sim.port, "config", "--profile", room)
    assert "facedown stacks SEAT=CHIPS" in proc.stderr  # the hint: the stacks per hand
    assert status(sim)["config"]["house"]["betting"] == {"blinds": [5, 10]}  # unchanged
    defaults = ["misdeal_window=tda36", "exposed_holecard=burn", "extra_holecard=misdeal",
                "short_hand=misdeal", "premature_turn=reshuffle", "four_card_flop=scramble",
                "no_burn_flop=scramble", "extra_burn=stays", "nonstandard_card=misdeal"]
    argv = [a for d in defaults for a in ("--house", d)]
    alike = tmp_path / "alike.toml"
    alike.write_text('game = "holdem"\nseats = "1-9"\n[betting]\nblinds = [500, 1000]\n'
                     '[betting.stacks]\n' + "".join('%d = 50000\n' % s for s in range(1, 10)))
    ok(run("--port", sim.port, "config", "--profile", alike, "--house", "straddle=off", *argv))
    house = status(sim)["config"]["house"]
    assert house == {"betting": {"blinds": [500, 1000], "stacks": 50000}}
