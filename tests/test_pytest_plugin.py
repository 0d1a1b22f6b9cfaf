"""The pytest plugin (facedown.pytest_plugin): scenario files as tests, on a virtual shoe or on
the shoe at --shoe-port, with the golden checker and a side-by-side table on failure."""

pytest_plugins = ["pytester"]

import copy  # noqa: E402
import glob  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
from importlib.metadata import entry_points  # noqa: E402

import pytest  # noqa: E402

import golden  # noqa: E402  (tests/golden.py: the checker the plugin's copy must agree with)
from facedown import engine  # noqa: E402
from facedown import pytest_plugin as plugin  # noqa: E402
from facedown import client, shoereplay, view, virtualshoe  # noqa: E402,F401

# The in-process pytester runs forget the modules they imported: import the firmware's here so
# that every run (and this module) shares one copy of them.
SCN = engine.scenario_module()
engine.firmware_imports()

from conftest import ROOT  # noqa: E402  (the test bootstrap's root)
SCENARIOS = os.path.join(ROOT, "tests", "scenarios")
ALL = sorted(glob.glob(os.path.join(SCENARIOS, "*.json")))
GOOD = "03-premature-flop-tda.json"
REJECTED = os.path.join("bad", "street-before-deal.json")

# A hand a real shoe can deal (no stacked deck, no seed, no simulated fault): wildcards only.
PLAIN = {
    "title": "Heads-up hold'em from whatever the shoe shuffles",
    "game": "holdem", "rules": "tda2024", "house": {}, "seats": [1, 2], "button": 2,
    "steps": [{"do": "deal"}, {"do": "street"}, {"do": "street"}, {"do": "street"},
              {"do": "end"}],
    "expect": {"status": "complete", "seats": {"1": ["??", "??"], "2": ["??", "??"]},
               "board": ["??"] * 5, "burns": ["??"] * 3, "muck": [], "aside": [],
               "stub": 40, "procedures": []},
}


def _load(name):
    with open(os.path.join(SCENARIOS, name), encoding="utf-8") as f:
        return json.load(f)


def _write(pytester, rel, data):
    path = pytester.path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) if not isinstance(data, str) else data)
    return path


def _wrong():
    """The good scenario with a wrong seat 1, stub and procedure in its expect."""
    data = _load(GOOD)
    data["expect"]["seats"]["1"] = ["2c", "3d"]
    data["expect"]["stub"] = 31
    return data


def _lit(text):
    """An fnmatch pattern matching `text` literally except for its "*"s."""
    return text.replace("[", "[[]").replace("?", "[?]")


def _user_tests(pytester):
    pytester.makepyfile(test_user='''
        import json, pytest

        PLAIN = json.loads(%r)
        STACKED = json.loads(%r)

        def test_client(shoe_client):
            assert shoe_client.info["protocol"] >= 1
            assert "CAP_SIM" in shoe_client.info["capabilities"]

        def test_replay(shoe_replay):
            rec = shoe_replay(PLAIN)
            assert rec["status"] == "complete" and rec["stub"] == 40

        def test_stacked(shoe_replay, request):
            rec = shoe_replay(STACKED)
            assert rec["procedures"] == STACKED["expect"]["procedures"]
            if request.config.getoption("facedown_shoe_port") is None:  # the stacked deck
                assert rec["seats"]["1"][0]["card"] == "2c"
    ''' % (json.dumps(PLAIN), json.dumps(_load(GOOD))))


# ------------------------------------------------------------------------------ registration

def test_the_entry_point_registers_the_plugin():
    found = [e for e in entry_points(group="pytest11") if e.name == "facedown"]
    assert found and found[0].value == "facedown.pytest_plugin"


# ------------------------------------------------------------------------------ collection

def test_json_files_are_not_collected_unless_asked(pytester):
    pytester.makepyprojecttoml('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    _write(pytester, "tests/scenarios/" + GOOD, _load(GOOD))
    pytester.makepyfile(**{"tests/test_x": "def test_x():\n    pass\n"})
    pytester.runpytest().assert_outcomes(passed=1)            # testpaths
    pytester.runpytest("tests").assert_outcomes(passed=1)     # a folder of Python tests
    pytester.runpytest("tests/scenarios").assert_outcomes(passed=1)  # a folder of scenarios


def test_ini_option_pass_fail_and_rejected(pytester):
    pytester.makepyprojecttoml('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
                               'facedown_scenarios = ["scenarios"]\n')
    pytester.makepyfile(**{"tests/test_x": "def test_x():\n    pass\n"})
    _write(pytester, "scenarios/" + GOOD, _load(GOOD))
    _write(pytester, "scenarios/wrong.json", _wrong())
    _write(pytester, "scenarios/bad/rejected.json", _load(REJECTED))
    wrong_error = _load(REJECTED)
    wrong_error["expect_error"] = "no such text"
    _write(pytester, "scenarios/bad/wrong-error.json", wrong_error)
    _write(pytester, "scenarios/notes.json", {"not": "a scenario"})
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines([
        "scenarios/%s PASSED*" % GOOD,           # node id = the file's path
        "scenarios/bad/rejected.json PASSED*",
        "scenarios/wrong.json FAILED*",
        "*lacks 'no such text'*",
    ])
    # the failure: the mismatches, then the two tables side by side, the wrong lines marked
    result.stdout.fnmatch_lines([_lit(line) for line in [
        "wrong.json: 2 mismatches",
        "*- stub: expected 31, got 32",
        "*- seats.1: expected ['2c', '3d'], got ['2c', '2d']",
        "  expected * | actual",
        "  holdem | Poker TDA 2024 | button 6 | COMPLETE*| holdem | Poker TDA 2024 *",
        "!   seat 1   [2\u2663] [3\u2666] * |   seat 1   [2\u2663] [2\u2666]",
        "    seat 2   [3\u2663] [3\u2666] * |   seat 2   [3\u2663] [3\u2666]",
        "    board    ?? ?? ?? ?? ?? * |   board    *",  # (the re-flop: face-down reshuffle)
        "!   stub     31 cards (order secret) * |   stub     32 cards (order secret)",
    ]])
    assert "notes.json" not in result.stdout.str()
    # --lf picks the failed scenarios again by their node ids
    pytester.runpytest("--lf").assert_outcomes(failed=2)


def test_command_line_file_and_option(pytester):
    _write(pytester, "scen/" + GOOD, _load(GOOD))
    _write(pytester, "scen/bad/rejected.json", _load(REJECTED))
    _write(pytester, "other.json", {"a": 1})
    result = pytester.runpytest("scen/" + GOOD, "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["scen/%s PASSED*" % GOOD])
    pytester.runpytest("--facedown-scenarios", "scen/bad").assert_outcomes(passed=1)
    result = pytester.runpytest("other.json")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*other.json is not a scenario file (no \"steps\")*"])


# ------------------------------------------------------------------------------ sim-only

def test_sim_only_reasons():
    reason = plugin.sim_only_reason
    assert reason(PLAIN) is None
    # a stacked deck or a seed: a real shoe plays it from its own shuffle
    assert reason(dict(PLAIN, deck=["Ah"])) is None and reason(dict(PLAIN, seed=3)) is None
    assert reason(dict(PLAIN, sim_only=True)) == "marked sim_only (simulator only)"
    assert reason(dict(PLAIN, sim_only=False)) is None
    for kind in plugin.SIM_FAULTS:
        steps = [{"do": "fault", "kind": kind, "at": 1}] + PLAIN["steps"]
        assert reason(dict(PLAIN, steps=steps)) == \
            "needs simulated fault %s (simulator only)" % kind
    steps = PLAIN["steps"] + [{"do": "power_cut"}, {"do": "fault", "kind": "boxed", "at": 1}]
    assert reason(dict(PLAIN, deck=["Ah"], seed=1, steps=steps)) == \
        "needs simulated faults power_cut, boxed (simulator only)"
    # on a real shoe only the simulated mechanism's faults are skipped: a power cut fails
    skip = plugin.hardware_skip_reason
    assert skip(dict(PLAIN, steps=PLAIN["steps"] + [{"do": "power_cut"}])) is None
    assert skip(dict(PLAIN, steps=steps)) == reason(dict(PLAIN, steps=steps))
    assert skip(dict(PLAIN, deck=["Ah"], seed=1)) is None
    assert skip(dict(PLAIN, sim_only=True)) == "marked sim_only (simulator only)"


@pytest.fixture(scope="module")
def running_shoe():
    """A virtual shoe the inner runs reach through --shoe-port, as they would a real one (its
    key in the key store, where `facedown provision` leaves a real one's)."""
    from facedown import keys

    with virtualshoe.VirtualShoe() as shoe:
        shoe.key.save(keys.keystore_path(shoe.key.device))
        shoe.start(ready_line="ready", timeout=20)
        yield shoe


def test_on_a_shoe_port_simulator_only_scenarios_are_skipped(pytester, running_shoe):
    _write(pytester, "scen/" + GOOD, _load(GOOD))
    _write(pytester, "scen/plain.json", PLAIN)
    _write(pytester, "scen/flagged.json", dict(PLAIN, sim_only=True))
    faulty = copy.deepcopy(PLAIN)
    faulty["steps"].insert(0, {"do": "fault", "kind": "boxed", "at": 1})
    _write(pytester, "scen/faulty.json", faulty)
    rejected = copy.deepcopy(PLAIN)
    rejected["steps"].insert(0, {"do": "street"})
    rejected["expect_error"] = "street"
    del rejected["expect"]
    _write(pytester, "scen/rejected.json", rejected)
    _user_tests(pytester)
    result = pytester.runpytest("--shoe-port=" + running_shoe.port, "scen", "test_user.py",
                                "-rs")
    # the stacked scenario plays from the shoe's own shuffle: only the mechanism's simulated
    # faults and sim_only are skipped
    result.assert_outcomes(passed=6, skipped=2)
    result.stdout.fnmatch_lines_random([
        "facedown: scenarios on the shoe at %s *" % running_shoe.port,
        "SKIPPED * scen/faulty.json: needs simulated fault boxed (simulator only)",
        "SKIPPED * scen/flagged.json: marked sim_only (simulator only)",
    ])


def test_order_free_checks_catch_what_the_shoe_did_otherwise():
    """On a real shoe the record is checked against the scenario's stacked run on what does
    not depend on the order: each kind of difference is reported."""
    scn = _load("03-premature-turn-robert.json")
    right = SCN.run(scn)
    assert plugin.order_free_mismatches(scn, right, SCN) == []
    moved = copy.deepcopy(right)
    moved["muck"].append(moved["board"].pop())
    turned = copy.deepcopy(right)
    turned["seats"]["1"][0]["up"] = True
    ruled = copy.deepcopy(right)
    next(e for e in ruled["log"] if "procedure" in e)["rule"] = "TDA RP-5-B"
    for broken, what in ((dict(right, procedures=right["procedures"][:1]), "procedures:"),
                         (dict(right, status="misdeal"), "status:"),
                         (dict(right, stub=right["stub"] - 1), "stub:"),
                         (moved, "board:"), (turned, "seats:"), (ruled, "rules:")):
        found = plugin.order_free_mismatches(scn, broken, SCN)
        assert any(m.startswith(what) for m in found), (what, found)
    # and the invariants of the shoe's own record
    twice = copy.deepcopy(right)
    twice["muck"].append(twice["board"][0])
    assert any("conservation" in m for m in plugin.order_free_mismatches(scn, twice, SCN))


def test_fixtures_on_the_virtual_shoe(pytester):
    _user_tests(pytester)
    pytester.runpytest().assert_outcomes(passed=3)


# ------------------------------------------------------------------------------ the checker

def _mutations(expect):
    yield expect
    yield {k: v for k, v in expect.items() if k != "seats"}
    for key in ("stub", "status", "procedures", "board", "burns", "muck"):
        if key in expect:
            broken = copy.deepcopy(expect)
            broken[key] = {"stub": 1, "status": "misdeal"}.get(key, ["Ah", "??"])
            yield broken
    if expect.get("seats"):
        broken = copy.deepcopy(expect)
        seat = sorted(broken["seats"])[0]
        broken["seats"][seat] = ["??^"] + broken["seats"][seat][1:]
        yield broken
        broken = copy.deepcopy(expect)
        broken["one_of"] = {seat: ["2c"], "board": ["Ah"]}
        yield broken
    yield dict(expect, returned=[], reason_contains="nothing like it", bogus=1)


def test_the_plugins_checker_agrees_with_golden():
    for path in ALL:
        data = golden.load(path)
        record = SCN.run(copy.deepcopy(data))
        assert plugin.check(data["expect"], record, data["game"]) == []
        for expect in _mutations(data["expect"]):
            assert plugin.check(expect, record, data["game"]) == \
                golden.check(expect, record, data["game"]), os.path.basename(path)
        damaged = copy.deepcopy(record)
        damaged["stub"] += 1
        damaged["log"].append({"card": "As", "to": "nowhere"})
        assert plugin.check({}, damaged, data["game"]) == golden.check({}, damaged, data["game"])


def test_the_expected_table_has_the_layout_of_the_view():
    data = _load(GOOD)
    record = SCN.run(copy.deepcopy(data))
    expected = plugin.expected_table(data, record).splitlines()
    actual = view.render(record).splitlines()
    assert len(expected) == len(actual)
    assert expected[0] == actual[0] and expected[-1] == actual[-1]  # head, procedure
    assert expected[1] == actual[1] and "?? ?? ??" in expected[7]
    table = plugin.side_by_side("\n".join(expected), "\n".join(actual), {"board"})
    marked = [line for line in table.splitlines() if line.startswith("!")]
    assert len(marked) == 1 and "board" in marked[0]


def test_a_rejected_scenario_that_was_expected_to_play(pytester):
    data = _load(REJECTED)
    data.pop("expect_error")
    data.pop("expect_step")
    _write(pytester, "scen/x.json", data)
    result = pytester.runpytest("scen/x.json")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["x.json: scenario rejected: step 1 (street)*"])
