"""Engine benchmark: hands per second for a 9-seat hold'em hand dealt to the river (with the
betting actions reported), on CPython and on the MicroPython unix port, against pokerkit's
State doing the same dealing in the same run; and the MicroPython heap a 10-seat hand with
many procedures needs (target: under 24 KB).

    .venv/bin/python benchmarks/engine.py [--hands N]
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.dirname(sys.executable)


def pokerkit_hands_per_second(n):
    from pokerkit import Automation, NoLimitTexasHoldem

    automations = (Automation.ANTE_POSTING, Automation.BET_COLLECTION,
                   Automation.BLIND_OR_STRADDLE_POSTING, Automation.CARD_BURNING,
                   Automation.HOLE_DEALING, Automation.BOARD_DEALING,
                   Automation.HOLE_CARDS_SHOWING_OR_MUCKING, Automation.HAND_KILLING,
                   Automation.CHIPS_PUSHING, Automation.CHIPS_PULLING)
    t0 = time.perf_counter()
    for _ in range(n):
        state = NoLimitTexasHoldem.create_state(automations, True, 0, (1, 2), 2, [200] * 9, 9)
        while state.status:
            state.check_or_call()
    return n / (time.perf_counter() - t0)


def run_script(python, n):
    proc = subprocess.run(python + [os.path.join(HERE, "engine_mp.py"), str(n)], cwd=HERE,
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=2000)
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run (20 hands; `make test` runs it): every figure, not a "
                         "steady rate")
    args = ap.parse_args()
    if args.quick:
        args.hands = min(args.hands, 20)
    cpy = run_script([sys.executable], args.hands)
    mpy = run_script([os.path.join(BIN, "micropython"), "-X", "heapsize=192K"], args.hands)
    pk = pokerkit_hands_per_second(max(200, args.hands // 4))
    print("9-seat hold'em, deal + 3 streets + 36 actions, %d hands" % args.hands)
    print("  %-34s %10.0f hands/s" % ("engine on CPython", cpy["hands_per_s"]))
    print("  %-34s %10.0f hands/s" % ("engine on MicroPython (unix port)", mpy["hands_per_s"]))
    print("  %-34s %10.0f hands/s" % ("pokerkit State on CPython", pk))
    print("  ratio engine/pokerkit (CPython)    %10.1fx" % (cpy["hands_per_s"] / pk))
    print("  ratio MicroPython/CPython          %10.2fx" % (mpy["hands_per_s"] / cpy["hands_per_s"]))
    print("MicroPython heap, 10-seat hold'em hand with procedures (-X heapsize=192K):")
    for rules in ("tda2024", "robert"):
        h = mpy[rules]
        print("  %-8s peak live %6d B | all allocations, GC off %6d B (target < 24576) | "
              "+ record dict %6d B | %d procedures" % (
                  rules, h["peak_live"], h["allocated_gc_off"], h["with_record"],
                  h["procedures"]))


if __name__ == "__main__":
    main()
