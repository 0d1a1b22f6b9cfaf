"""Every script in benchmarks/ runs to completion in its quick mode and prints its figures (the
figures themselves are this machine's: no time is asserted). benchmarks/memory.py has its own
test (tests/test_memory_bench.py), and so has room.py (tests/test_room_bench.py); engine_mp.py,
flash_mp.py and betting_mp.py are run by engine.py, flash.py and betting.py."""

import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT

BENCH = os.path.join(ROOT, "benchmarks")
NUMBER = r"[0-9][0-9.]*"

# script -> lines its quick run must print (regular expressions, each found in the output)
FIGURES = {
    "betting.py": [r"betting on CPython +%s hands/s +%s actions/s" % (NUMBER, NUMBER),
                   r"betting on MicroPython \(unix port\) +%s hands/s" % NUMBER,
                   r"betting a hand costs %s%% of dealing one" % NUMBER,
                   r"pokerkit State on CPython .* betting engine/pokerkit x%s" % NUMBER,
                   r"import, modules on the filesystem +%s KB here -> ~%s KB" % (NUMBER, NUMBER),
                   r"resident on the Pico \(filesystem\): ~%s KB" % NUMBER],
    "engine.py": [r"engine on CPython +%s hands/s" % NUMBER,
                  r"engine on MicroPython \(unix port\) +%s hands/s" % NUMBER,
                  r"pokerkit State on CPython +%s hands/s" % NUMBER,
                  r"tda2024 +peak live +\d+ B", r"robert +peak live +\d+ B"],
    "wire.py": [r"shoe, replay .* %s hands/s .* 0/5 records differ" % NUMBER,
                r"ping, no hand .* p50 +%s ms" % NUMBER,
                r"plain commands \(config once\) +\d+B +\d+B",
                r"line time on a 115200-baud UART", r"0/3 records differ",
                r"retries %s, fast retries %s" % (NUMBER, NUMBER)],
    "flash.py": [r"journal \(log-structured ring\) +\d+", r"littlefs, a file per hand +\d+",
                 r"journal life .*: (PASS|FAIL)", r"ready +%s ms" % NUMBER,
                 r"journal\.verify\(\) \(a history\) +%s ms +\(0 problems" % NUMBER,
                 r"on a 192 KB heap .*\n +boot ok .*; verify\(\) ok"],
    "shuffle.py": [r"CPython .*: +%s shuffles/s" % NUMBER,
                   r"MicroPython \(unix port\): +%s shuffles/s" % NUMBER,
                   r"certify 2000 shuffles on 1 cores: %s s wall \(PASS\)" % NUMBER,
                   r"carousel reshuffle of 52 cards, first after power-up: %s s" % NUMBER],
    "table.py": [r"reshuffle of 52 cards: first after power-up %s s, next %s s" % (NUMBER, NUMBER),
                 r"reshuffle of 40 cards: first after power-up %s s, next %s s" % (NUMBER, NUMBER),
                 r"initial deal of 18 cards: %s s" % NUMBER,
                 r"reshuffle time spread over 4 plans: %s ms" % NUMBER,
                 r"hands/hour, the shoe the only delay: %s" % NUMBER,
                 r"the table waits for the shoe %s s a hand: opening shuffle %s s" % (NUMBER,
                                                                                      NUMBER),
                 r"mechanism busy \d+ % of the hour", r"ratio to the baseline",
                 r"the table waits for the opening shuffle %s s a hand \(0 s in \d+ of" % NUMBER,
                 r"== revision D \(the pipelined loader",
                 r"revision D reshuffle time spread over 4 plans: \d+ us",
                 r"revision D, two decks: the opening wait is 0 s in \d+ of the \d+ hands",
                 r"the power-up, before any command: %s s \(the homing turn\), %s s when" % (
                     NUMBER, NUMBER),
                 r"the longest a dealing command waited for the mechanism: \d+ ms"],
    "pico_loader.py": [r"reshuffle of 52 cards: first after power-up %s s, next %s s \(the "
                       r"model: %s s, %s s" % (NUMBER, NUMBER, NUMBER, NUMBER),
                       r"reshuffle of 40 cards: first after power-up %s s, next %s s" % (NUMBER,
                                                                                         NUMBER),
                       r"reshuffle time spread over \d+ plans of \d+ cards: %s ms" % NUMBER],
    "rp2_heap.py": [r"case_wiring +\d+ KB \(margin \d+ KB of 256\)",
                    r"case_carousel_wiring +\d+ KB \(margin \d+ KB of 288\)"],
}


def test_every_benchmark_has_a_quick_test():
    scripts = {n for n in os.listdir(BENCH) if n.endswith(".py")}
    helpers = {"engine_mp.py", "flash_mp.py", "betting_mp.py",  # run by engine.py, flash.py
               "worlds.py"}  # and betting.py; worlds.py: imported by shuffle.py, table.py and
    #                          pico_loader.py
    own = {"memory.py": "test_memory_bench.py", "room.py": "test_room_bench.py"}
    for script, test in own.items():  # quick runs with tests of their own
        assert os.path.exists(os.path.join(ROOT, "tests", test)), test
    assert scripts - helpers - set(own) == set(FIGURES)


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(FIGURES))
def test_benchmark_quick_mode_completes_and_prints_its_figures(script):
    proc = subprocess.run([sys.executable, os.path.join(BENCH, script), "--quick"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr
    for figure in FIGURES[script]:
        assert re.search(figure, proc.stdout), "%s printed no %r:\n%s" % (script, figure,
                                                                          proc.stdout)


def test_table_deal_waits_times_the_card_in_flight_and_the_turn():
    """benchmarks/table.py's timeline of a two-deck hand on revision D (deal_waits): a command
    at a gap's end waits for the card picked before it; the unloading turn holds it only when
    it runs on the path's time (background=False)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("table_bench", os.path.join(BENCH, "table.py"))
    table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table)
    fm = {"r52": [None, {"load_s_per_card": 0.3}], "first_card_s": 0.6, "unload_turn_s": 3.0}
    hand = [{"steps": 1, "reshuffles": [], "from_next": True}]
    # a 10 s gap: picks at 0, 0.3, .. 9.9 (34 cards); the command at 10 s waits for the last
    worst, mean, count, held = table.deal_waits(hand, fm, 10.0)
    assert abs(worst - 0.2) < 1e-9 and count == held == 1
    # a 16 s gap: all 52 in (the last picked at 15.3 s, in its pocket at 15.9 s), the turn ends
    # at 18.9 s: on its own the command does not wait; holding the path, 2.9 s
    assert table.deal_waits(hand, fm, 16.0)[0] == 0.0
    assert abs(table.deal_waits(hand, fm, 16.0, background=False)[0] - 2.9) < 1e-9
    # an in-hand reshuffle halves the next deck's time, as hour() gives it
    half = [{"steps": 1, "reshuffles": [40], "from_next": True}]
    assert table.deal_waits(half, fm, 20.0) == table.deal_waits(hand, fm, 10.0)
