"""Revision D's pipelined reshuffle on the Pico's own firmware (hal/loader_rp2.py,
hal/pipeline_rp2.py), measured in the fake world of tests/mp_loader_test.py under CPython: its
clock is the fake PIO's and the fake servo driver's timing model, its Y-chute, escrows and
falls the world's (hardware/SHUFFLER.md "Revision D"). Prints the reshuffle of 52 and 40 cards,
first after power-up (homing, the pocket sensor's count ($PK) saying the pockets are empty, so
no purge) and next, beside hal/fastpath.py's model of the same, and the spread over plans of the
whole reshuffle and of each card's instant in its pocket (it must not depend on the plan).

    python benchmarks/pico_loader.py [--plans N] [--quick]
"""
import argparse
import json
import os

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def world():
    """tests/mp_loader_test.py as a module (the fakes, the world, reshuffle_figures)."""
    from worlds import test_script

    return test_script("mp_loader_test", ROOT)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plans", type=int, default=10, help="plans of 52 cards for the spread")
    ap.add_argument("--quick", action="store_true", help="3 plans of 20 cards for the spread")
    args = ap.parse_args()
    m = world()
    from hal.fastpath import on

    with open(os.path.join(ROOT, "hardware", "pinmap.json")) as f:
        model = on(json.load(f))
    for n in (52, 40):
        first, nxt = m.reshuffle_figures(n, "benchmark %d" % n)
        r = model.reshuffle(list(range(n)))
        rp = model.reshuffle(list(range(n)), power_up=True)
        print("revision D on the Pico (fake world): reshuffle of %d cards: first after "
              "power-up %.2f s, next %.2f s (the model: %.2f s, %.2f s; the Pico purges its "
              "pockets after power-up only when its pocket sensor saw cards)" % (n, first["total_s"], nxt["total_s"],
                                                 rp["total_us"] / 1e6, r["total_us"] / 1e6))
    n, plans = (20, 3) if args.quick else (52, args.plans + 1)
    runs = m.reshuffle_figures(n, "spread", plans)[1:]  # (the first: the power-up's purge)
    totals = [r["total_s"] for r in runs]
    worst = 0
    for k in range(n):
        at = [r["in_us"][k] for r in runs]
        worst = max(worst, max(at) - min(at))
    print("revision D on the Pico: reshuffle time spread over %d plans of %d cards: %.3f ms "
          "(each card in its pocket within %d us; the fake clock's grain 50 us a call)"
          % (len(runs), n, (max(totals) - min(totals)) * 1000, worst))


if __name__ == "__main__":
    main()
