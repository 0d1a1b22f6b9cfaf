"""The firmware under the real MicroPython: every file compiles for the RP2040 with mpy-cross,
and the engine, as the virtual shoe's image deploys it (.mpy), gives the same hand record under
the unix port (192K heap, about a Pico's) as
under CPython, for every bundled scenario and for a few hundred random ones; a good share of
those compose two irregularities in one hand, and every one of them takes one burn a street
(Rule 38, tests/burnwatch.py)."""

import glob
import json
import os
import random
import subprocess
import sys

import pytest

from burnwatch import BurnWatch
from conftest import FIRMWARE, SCENARIOS

import scenario
from shoe import cards as C
from shoe import games as G
from shoe.hand import _deal_order

BIN = os.path.dirname(sys.executable)


def tool(name):
    path = os.path.join(BIN, name)
    if not os.path.exists(path):
        pytest.fail("%s not installed: run `make setup`" % name)
    return path


def firmware_files():
    return sorted(glob.glob(os.path.join(FIRMWARE, "**", "*.py"), recursive=True))


@pytest.mark.parametrize("path", firmware_files(), ids=lambda p: os.path.relpath(p, FIRMWARE))
def test_compiles_for_rp2040(path, tmp_path):
    out = tmp_path / "out.mpy"
    proc = subprocess.run([tool("mpy-cross"), "-march=armv6m", "-o", str(out), path],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_size > 0


_IMAGE = []


def sim_image():
    """The virtual shoe's image (host/facedown/build.py, target SIM: .mpy bytecode, as a shoe
    runs it), built once for the module. The heap figures below hold for bytecode: compiling
    the engine's source at import takes ~45 KB more, and the on-demand modules (irregular.py,
    the procedures' catalogue) would be compiled in the middle of a hand."""
    if not _IMAGE:
        import atexit
        import shutil
        import tempfile

        from facedown.build import SIM, build_image

        top = tempfile.mkdtemp(prefix="facedown-mp-image-")
        atexit.register(shutil.rmtree, top, True)
        path = os.path.join(top, "image")
        build_image(path, target=SIM)
        _IMAGE.append(path)
    return _IMAGE[0]


def run_micropython(scenarios, heap="192K"):
    proc = subprocess.run([tool("micropython"), "-X", "heapsize=" + heap, "-m", "scenario"],
                          input="".join(json.dumps(s) + "\n" for s in scenarios), cwd=sim_image(),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def run_cpython(scn, pairs=None):
    """The record under CPython, each step watched for Rule 38 (one burn a street); the ordered
    pairs of procedures the hand went through are added to pairs."""
    watch = []

    def after(op, hand):
        if not watch:
            watch.append(BurnWatch(hand))
        watch[0].after(op, hand)

    try:
        rec = scenario.run(scn, after)
    except scenario.ScenarioError as e:
        return {"error": str(e)}
    if pairs is not None and watch:
        pairs.update(watch[0].pairs())
    return rec


def test_bundled_scenarios_same_record_under_micropython():
    scns = []
    for path in sorted(glob.glob(os.path.join(SCENARIOS, "*.json"))):
        with open(path) as f:
            scn = json.load(f)
        if "seed" in scn or "deck" in scn:
            scns.append(scn)
    assert scns, "no bundled scenarios"
    cut = [scn for scn in scns if _cuts_power(scn)]  # (their heap: see the random run below)
    # a table that is bet loads the betting engine too, compiled here from its source (a shoe
    # loads it as .mpy): those hands get the virtual shoe's heap (docs/betting.md)
    bet = [scn for scn in scns if "betting" in (scn.get("house") or {}) and scn not in cut]
    scns = [scn for scn in scns if scn not in cut and scn not in bet] + bet + cut
    got = run_micropython(scns[:len(scns) - len(cut) - len(bet)]) + \
        run_micropython(bet, heap="352K") + run_micropython(cut, heap="512K")
    for scn, mp in zip(scns, got):
        assert mp == run_cpython(scn), scn.get("title")


def _cuts_power(scn):
    return any(s.get("kind") == "power_cut" for s in scn["steps"] if isinstance(s, dict))


def random_scenario(r):
    game = r.choice(sorted(G.GAMES))
    kind, deck_kind, hole, draws, maxp = G.GAMES[game]
    seats = sorted(r.sample(range(1, 11), r.randint(2, maxp)))
    deck = [C.name(c) for c in C.deck(deck_kind)]
    steps = [{"do": "deal"}]
    if r.random() < 0.2:  # a partial deal, then (maybe after other steps) the rest
        steps = [{"do": "deal", "cards": r.randint(1, 9)}, {"do": "deal"}]
    for _ in range(r.randint(0, 12)):
        roll = r.random()
        if roll < 0.45:
            if kind == G.DRAW:
                steps.append({"do": "draw", "discards": {}})
            else:
                steps.append({"do": "street"})
        elif roll < 0.6:
            steps.append({"do": "action", "seat": r.choice(seats),
                          "kind": r.choice(["check", "call", "bet", "raise", "fold", "allin"])})
        elif roll < 0.68:
            steps.append({"do": "expose", "seat": r.choice(seats), "card": r.randint(1, 3)})
        elif roll < 0.74:
            steps.append({"do": "premature"})
        elif roll < 0.82:
            fault = r.choice(["double_feed", "boxed", "foreign", "duplicate", "no_burn", "jam"])
            step = {"do": "fault", "kind": fault}
            if fault in ("double_feed", "boxed", "foreign", "duplicate"):
                step["at"] = r.randint(1, 4)
            if fault == "foreign":
                step["card"] = "Jk"
            if fault == "duplicate":
                step["card"] = r.choice(deck)
            if fault == "jam":
                step["mixed_with"] = r.sample(["muck", "burns"], r.randint(0, 2))
            steps.append(step)
        else:
            steps.append({"do": r.choice(["misdeal", "end"])})
    return {"game": game, "rules": r.choice(["tda2024", "robert"]), "seats": seats,
            "button": r.randint(1, 10), "seed": r.randint(0, 10**6), "steps": steps}


def composed_scenario(r):
    """A hand with two irregularities one right after the other (the pairs of issue 14: a
    premature street, a double feed, a flop without a burn, an exposed or boxed card, then a
    disordered stub, an exposure, another premature street, a boxed card, a double feed or a
    power cut), then the hand goes on."""
    game = r.choice(sorted(G.GAMES))
    kind, deck_kind, hole, draws, maxp = G.GAMES[game]
    seats = sorted(r.sample(range(1, 11), r.randint(2, min(maxp, 6))))
    total = draws if kind == G.DRAW else G.streets(kind)
    steps = []
    left = [total]

    def street():
        if left[0] <= 0:
            return False
        left[0] -= 1
        steps.append({"do": "draw", "discards": {}} if kind == G.DRAW else {"do": "street"})
        return True

    def irregular(what):
        if what == "premature" and kind != G.DRAW:
            if street():
                steps.append({"do": "premature"})
                left[0] += 1
        elif what in ("double_feed", "boxed", "no_burn") and left[0] > 0:
            step = {"do": "fault", "kind": what}
            if what != "no_burn":  # (a draw without discards feeds only its burn)
                step["at"] = 1 if kind == G.DRAW else r.randint(1, 2)
            elif r.random() < 0.5:
                step["detected"] = "turned"
            steps.append(step)
            street()
        elif what == "jam":
            if r.random() < 0.25:
                steps.append({"do": "fault", "kind": "jam", "order_kept": True})
            else:
                steps.append({"do": "fault", "kind": "jam",
                              "mixed_with": r.sample(["muck", "burns"], r.randint(0, 2))})
        elif what == "expose":
            steps.append({"do": "expose", "seat": r.choice(seats),
                          "card": r.randint(1, hole)})
        elif what == "power_cut":
            steps.append({"do": "fault", "kind": "power_cut"})
        else:
            street()

    button = r.randint(1, 10)
    if r.random() < 0.25:  # a hole card exposed while the deal goes on (not the 1st or 2nd off)
        order = _deal_order(seats, 0 if kind == G.STUD else button)
        k = r.randint(3, len(seats) + 1)
        steps.append({"do": "deal", "cards": k})
        steps.append({"do": "expose", "seat": order[(k - 1) % len(seats)],
                      "card": (k - 1) // len(seats) + 1})
        steps.append({"do": "deal"})
    else:
        steps.append({"do": "deal"})
    for _ in range(r.randint(0, 1)):
        street()
    irregular(r.choice(["premature", "premature", "double_feed", "no_burn", "boxed", "street"]))
    irregular(r.choice(["jam", "jam", "expose", "premature", "boxed", "double_feed",
                        "power_cut", "street"]))
    for _ in range(r.randint(0, 3)):
        street()
    return {"game": game, "rules": r.choice(["tda2024", "robert"]), "seats": seats,
            "button": button, "seed": r.randint(0, 10**6), "steps": steps}


def feeds_per_step(scn):
    """(cards fed by each step, faults pending before it) of a scenario run in-process, or
    None if it is rejected."""
    from shoe.errors import ShoeError

    args, steps = scenario.check(scn)
    hand, mech = scenario.start(args)
    feeds, pending = [], []
    for step in steps:
        mech.begin_step()
        pending.append(mech.pending())
        try:
            scenario.apply(hand, mech, step)
        except ShoeError:
            return None
        feeds.append(mech.feeds)
    return feeds, pending


def faulted(scn, r, kinds=("jam", "empty", "lid_open", "reader_silent")):
    """(scn with a stopping fault on a card of a step that deals, and that step repeated; the
    kind, or None for a jam the retries clear), or None if no step deals. (Other faults armed
    for that step keep their cards: the repeat goes on counting.)"""
    from hal.simmech import SimMech, UNTIL_CLEARED

    got = feeds_per_step(scn)
    if got is None:
        return None
    feeds, pending = got
    where = [i for i in range(len(feeds)) if feeds[i]]
    if not where:
        return None
    retries = SimMech().figures().jam_retries
    i = r.choice(where)
    kind = r.choice(kinds)
    fault = {"do": "fault", "kind": kind, "at": r.randint(1, feeds[i])}
    if kind == "jam":
        fault["times"] = r.choice([1, retries, retries + 1, UNTIL_CLEARED])
    stops = kind != "jam" or fault["times"] > retries
    steps = scn["steps"]
    again = [steps[i]] if stops else []  # the operator clears it, the dealer repeats the step
    return dict(scn, steps=steps[:i] + [fault, steps[i]] + again + steps[i + 1:]), (
        kind if stops else None)


def test_random_scenarios_same_record_under_micropython():
    r = random.Random(2024)
    scns = [random_scenario(r) for _ in range(300)]
    # and hands a stopping fault interrupts (repeated as the dealer would)
    while len(scns) < 400:
        got = faulted(random_scenario(r), r)
        if got is not None:
            scns.append(got[0])
    composed = [composed_scenario(r) for _ in range(250)]
    # a power cut runs the flash journal over a RAM flash chip (8 blocks of 32 KB, built anew for
    # each hand, which the Pico keeps in its flash, not its heap): those hands get a bigger heap
    cut = [scn for scn in composed if _cuts_power(scn)]
    composed = [scn for scn in composed if scn not in cut] + cut
    got = run_micropython(scns + composed[:len(composed) - len(cut)]) + \
        run_micropython(cut, heap="512K")
    completed = 0
    stopped = 0
    pairs = set()
    for scn, mp in zip(scns + composed, got):
        assert mp == run_cpython(scn, pairs), json.dumps(scn)
        completed += "error" not in mp
        stopped += bool(mp.get("faults"))
    assert completed > 300  # the comparison covers real hands, not only rejections
    assert stopped > 50  # and hands the mechanism stopped
    several = sum(1 for mp in got[len(scns):] if len(mp.get("procedures", ())) >= 2)
    print("random scenarios: %d hands, %d composed with two or more procedures, %d distinct "
          "ordered pairs of procedures" % (len(got), several, len(pairs)))
    assert several >= len(composed) // 2
    assert len(pairs) >= 60, sorted(pairs)


def test_asking_a_hand_if_it_deals_allocates_nothing_under_micropython():
    """play.dealing(h), which the idle loop asks of the hand in progress (the status LED):
    shoe.hand is imported with the first hand, not at boot, so dealing() imports it where it
    asks, and must not allocate there (`from shoe.hand import DEALING` in a function allocates
    at each call on MicroPython; `import shoe.hand` does not). Also: importing the device
    leaves the engine's table out of sys.modules until a hand is made."""
    script = (
        "import gc, sys\n"
        "import device\n"
        "print('loaded', 'shoe.hand' in sys.modules)\n"
        "import play\n"
        "import shoe.hand\n"
        "class H:\n"
        "    status = shoe.hand.DEALING\n"
        "h = H()\n"
        "def ask():\n"
        "    for i in range(1000):\n"
        "        play.dealing(h)\n"
        "        play.dealing(None)\n"
        "ask()\n"
        "a = 0\n"  # (a new global would grow the module's dict inside the measure)
        "gc.collect()\n"
        "gc.disable()\n"
        "a = gc.mem_alloc()\n"
        "ask()\n"
        "print('allocated', gc.mem_alloc() - a, play.dealing(h))\n")
    proc = subprocess.run([tool("micropython"), "-X", "heapsize=192K", "-c", script],
                          cwd=sim_image(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert proc.stdout.split() == ["loaded", "False", "allocated", "0", "True"], proc.stdout
