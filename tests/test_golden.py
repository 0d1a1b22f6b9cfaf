"""Golden scenarios: every tests/scenarios/*.json replayed through the engine and checked against
its hand-written expectation; every tests/scenarios/bad/*.json must be rejected with a clear error.

The expectations are an independent oracle (see tests/golden.py): they were derived by hand from
docs/engine.md and the rulebooks, never copied from the engine's output.
"""

import copy
import glob
import json
import os
import re

import pytest

from golden import check, compact, load

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = sorted(glob.glob(os.path.join(HERE, "scenarios", "*.json")))
BAD = sorted(glob.glob(os.path.join(HERE, "scenarios", "bad", "*.json")))


def _stem(path):
    return os.path.splitext(os.path.basename(path))[0]


def _engine():
    # Imported here, not at module level: until firmware/scenario.py exists every scenario fails
    # on its own instead of the whole module failing to collect.
    import scenario
    return scenario


def test_there_are_scenarios():
    assert len(SCENARIOS) >= 35 and BAD


@pytest.mark.parametrize("path", SCENARIOS, ids=[_stem(p) for p in SCENARIOS])
def test_golden(path):
    scenario = _engine()
    data = load(path)
    record = scenario.run(copy.deepcopy(data))
    errors = check(data["expect"], record, data["game"])
    assert not errors, "%s\n  %s\nactual (compact):\n  %s" % (
        _stem(path), "\n  ".join(errors),
        "\n  ".join("%s: %s" % (k, json.dumps(v)) for k, v in compact(record).items()))


@pytest.mark.parametrize("path", BAD, ids=["bad-" + _stem(p) for p in BAD])
def test_bad_scenario_rejected(path):
    scenario = _engine()
    data = load(path)
    replay = copy.deepcopy(data)
    replay.pop("expect_step", None)     # a key of this test, not of the scenario format
    with pytest.raises(scenario.ScenarioError) as info:
        scenario.run(replay)
    message = str(info.value)
    assert data["expect_error"] in message, "message %r lacks %r" % (message, data["expect_error"])
    if "expect_step" in data:
        assert re.search(r"\bstep %d\b" % data["expect_step"], message), \
            "message %r does not name step %d" % (message, data["expect_step"])
