"""`facedown replay` and `facedown demo` as a user runs them."""

import json
import os

from conftest import SCENARIOS

from facedown.cli import main

PREMATURE = os.path.join(SCENARIOS, "03-premature-turn-robert.json")


def test_replay_json_is_the_hand_record(capsys):
    assert main(["replay", PREMATURE, "--json", "--in-process"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["status"] in ("dealing", "complete")
    assert "premature-turn-aside" in rec["procedures"]
    assert isinstance(rec["stub"], int)


def test_replay_every_way_prints_the_same_record(capsys):
    main(["replay", PREMATURE, "--json", "--in-process"])
    cpython = json.loads(capsys.readouterr().out)
    assert main(["replay", PREMATURE, "--json", "--micropython"]) == 0
    assert json.loads(capsys.readouterr().out) == cpython
    assert main(["replay", PREMATURE, "--json"]) == 0  # through a fresh virtual shoe
    assert json.loads(capsys.readouterr().out) == cpython


def test_replay_table_view_names_the_rule(capsys):
    assert main(["replay", PREMATURE, "--in-process"]) == 0
    out = capsys.readouterr().out
    assert "RRoP Hold'em 8" in out
    assert "order secret" in out


def test_bad_scenario_is_one_clear_line(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"game": "holdem", "seats": [1, 2], "button": 1,
                               "steps": [{"do": "deal"}, {"do": "shuffle"}]}))
    for how in (["--in-process"], []):
        assert main(["replay", str(bad)] + how) == 2
        err = capsys.readouterr().err
        assert "step 2 (shuffle)" in err and "Traceback" not in err


def test_missing_file_and_bad_json(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "nope.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    assert main(["replay", str(junk)]) == 2
    assert "not valid JSON" in capsys.readouterr().err


def test_demo_scenarios_replays_every_bundled_scenario(capsys):
    assert main(["demo", "--scenarios"]) == 0
    out = capsys.readouterr().out
    count = len([f for f in os.listdir(SCENARIOS) if f.endswith(".json")])
    assert "%d scenarios replayed" % count in out


def test_live_demo_deals_hands_on_a_virtual_shoe(capsys):
    assert main(["demo", "--hands", "4", "--seed", "3", "--feed-ms", "0"]) == 0
    out = capsys.readouterr().out
    assert "virtual shoe on /dev/" in out
    assert "hands dealt          4" in out
    assert "power cut" in out  # one hand loses power mid-hand and carries on
    assert "(0 duplicates dropped)" in out or "duplicates dropped" in out
    for n in range(1, 5):
        assert "hand %d:" % n in out
