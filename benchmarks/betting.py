"""Betting benchmark: what the betting engine (firmware/shoe/betting.py) costs per hand on
CPython and on the MicroPython unix port, against the dealing engine's own hand and pokerkit's
State betting the same kind of hand in the same run; and the heap it adds on the device: its
import once the hand engine's modules are loaded (the firmware as deployed, .mpy bytecode), a
10-seat hand's state, what a hand allocates; converted to the Pico's 32-bit heap the way
benchmarks/memory.py does (a module's .mpy bytes the same, the rest halved; state /2.0 .. /1.5;
a module in a ROMFS partition keeps its bytecode in flash: its heap halves).

    .venv/bin/python benchmarks/betting.py [--hands N] [--quick]

--quick (tests/test_benchmarks.py): 25 hands, every figure printed.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from engine import pokerkit_hands_per_second  # this folder's (the script's sys.path[0])
from facedown.build import PICO, SIM, build_image
from facedown.firmware import ROOT
from facedown.virtualshoe import find_micropython
from memory import PICO_HEAP, kb, to32

HERE = os.path.dirname(os.path.abspath(__file__))

SCRIPT = os.path.join(HERE, "betting_mp.py")


def run(cmd, cwd, env=None):
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600, env=env)
    if proc.returncode:
        raise SystemExit("betting_mp.py failed under %s:\n%s" % (cmd[0], proc.stderr[-2000:]))
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=2000)
    ap.add_argument("--quick", action="store_true", help="25 hands: every figure, not a steady "
                    "rate (tests/test_benchmarks.py)")
    args = ap.parse_args()
    if args.quick:
        args.hands = min(args.hands, 25)
    tmp = tempfile.mkdtemp(prefix="betting-bench-")
    try:
        sim = os.path.join(tmp, "sim")
        build_image(sim, target=SIM)  # the unix port's bytecode: the firmware as it is loaded
        for script in (SCRIPT, os.path.join(HERE, "engine_mp.py"),
                       os.path.join(ROOT, "tests", "mp_betting_test.py")):
            shutil.copy(script, sim)
        pico = os.path.join(tmp, "pico")
        build_image(pico, march="armv6m", target=PICO)
        mpy = os.path.getsize(os.path.join(pico, "shoe", "betting.mpy"))
        src = os.path.getsize(os.path.join(ROOT, "firmware", "shoe", "betting.py"))
        mp = run([find_micropython(), "-X", "heapsize=192K", "betting_mp.py", str(args.hands)],
                 sim)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            os.path.join(ROOT, d) for d in ("firmware", "benchmarks", "tests")))
        cp = run([sys.executable, SCRIPT, str(args.hands)], ROOT, env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    t0 = time.perf_counter()
    pk = pokerkit_hands_per_second(max(50, args.hands // 10))
    pk_s = time.perf_counter() - t0
    per = float(mp["actions"]) / mp["hands"]
    print("random complete hands over nl, pl, fl hold'em, stud and triple draw: %d hands, "
          "%.1f actions a hand" % (mp["hands"], per))
    for name, r in (("CPython", cp), ("MicroPython (unix port)", mp)):
        print("  betting on %-24s %9.0f hands/s %9.0f actions/s  (%.1f us an action)" % (
            name, r["hands_per_s"], r["actions_per_s"], 1e6 / r["actions_per_s"]))
    print("  the dealing engine's 9-seat hold'em hand (deal, 3 streets, 36 actions):")
    for name, r in (("CPython", cp), ("MicroPython (unix port)", mp)):
        print("  dealing on %-24s %9.0f hands/s; betting a hand costs %.1f%% of dealing one" % (
            name, r["dealing_hands_per_s"],
            100.0 * r["dealing_hands_per_s"] / r["hands_per_s"]))
    print("  pokerkit State on CPython (9-seat check/call hand) %9.0f hands/s (%.1f s); "
          "betting engine/pokerkit x%.1f" % (pk, pk_s, cp["hands_per_s"] / pk))
    imp32 = to32(mp["import"], mpy)
    print("heap on the device (MicroPython, 64-bit unix port -> the Pico's 32 bits):")
    print("  shoe/betting.py %s source, %s .mpy (armv6m)" % (kb(src), kb(mpy)))
    print("  import, modules on the filesystem  %9s here -> ~%s on the Pico (%.1f%% of %s)" % (
        kb(mp["import"]), kb(imp32), 100.0 * imp32 / PICO_HEAP, kb(PICO_HEAP)))
    rom32 = max(0, mp["import"] - mpy) / 2.0
    print("  import, modules in a ROMFS         %9s -> ~%s on the Pico (bytecode stays in flash)"
          % ("", kb(rom32)))
    s, p = mp["state_10_seats"], mp["state_peak_10_seats"]
    print("  10-seat no-limit hand state        %9s here -> %s .. %s; peak over the hand (%d "
          "actions, with its log) %s -> %s .. %s" % (
              kb(s), kb(s / 2.0), kb(s / 1.5), mp["state_peak_actions"], kb(p), kb(p / 2.0),
              kb(p / 1.5)))
    print("  allocated with the GC off          %9.0f B a hand, %.0f B an action, worst hand "
          "%s (garbage the GC takes back between actions)" % (
              mp["alloc_per_hand"], mp["alloc_per_action"], kb(mp["alloc_worst_hand"])))
    print("  resident on the Pico (filesystem): ~%s .. %s; with ROMFS: ~%s .. %s" % (
        kb(imp32 + p / 2.0), kb(imp32 + p / 1.5), kb(rom32 + p / 2.0), kb(rom32 + p / 1.5)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
