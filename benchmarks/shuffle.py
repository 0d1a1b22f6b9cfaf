"""Shuffle benchmark: carousel shuffles per second (HMAC-DRBG below() + the carousel plan +
the between-hands cycle(), as the shoe runs them) on CPython and on the MicroPython unix port,
the raw HMAC-DRBG output rate, and the wall time of `facedown certify` on this machine for
--certify shuffles (default 1,000,000: run in full; pass a smaller N to extrapolate).
Target: a 1,000,000-shuffle certification in under 10 minutes.

Then the mechanism: a 52-card reshuffle through the carousel (revision B) in the fake world of
tests/mp_carousel_test.py, the Pico's driver on fakes whose clock is the PIO timing model's:
the first after power-up (homing, the pockets emptied) and the next, in seconds, per card
loaded, unloading, and the carousel's travel.

    .venv/bin/python benchmarks/shuffle.py [--shuffles N] [--certify N] [--workers K] [--quick]

--quick (run by `make test`): 200 shuffles a probe, a 2,000-shuffle certification on one core.
"""

import argparse
import json
import os
import subprocess
import sys
import time

from facedown.firmware import FIRMWARE, ROOT

BIN = os.path.dirname(sys.executable)

# Runs under both interpreters: prints one JSON line.
PROBE = r"""
import sys
sys.path.insert(0, sys.argv[-2])
n = int(sys.argv[-1])
try:
    from time import ticks_us, ticks_diff
    def now():
        return ticks_us()
    def since(t):
        return ticks_diff(ticks_us(), t) / 1e6
except ImportError:
    from time import perf_counter as now
    def since(t):
        return now() - t
from shoe.drbg import HmacDrbg, seeded_entropy
from shoe import shuffler
d = HmacDrbg(seeded_entropy("bench"), personalization=b"bench")
deck = list(range(52))
t = now()
for i in range(n):
    shuffler.shuffle(deck, d)
    d.cycle()
dt = since(t)
t = now()
k = 0
while k < 256 * 1024:
    d.generate(4096)
    k += 4096
dr = since(t)
print('{"shuffles_per_s": %.1f, "drbg_bytes_per_s": %.0f}' % (n / dt, k / dr))
"""


def probe(cmd, n):
    out = subprocess.run(cmd + ["-c", PROBE, FIRMWARE, str(n)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def mechanism():
    """tests/mp_carousel_test.reshuffle_figures() under CPython (the fakes, the world)."""
    from worlds import test_script

    return test_script("mp_carousel_test", ROOT).reshuffle_figures(52)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shuffles", type=int, default=20000, help="shuffles per interpreter probe")
    ap.add_argument("--certify", type=int, default=1_000_000, help="shuffles to certify")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--quick", action="store_true",
                    help="200 shuffles a probe, certify 2,000 on one core (`make test`)")
    args = ap.parse_args()
    if args.quick:
        args.shuffles, args.certify, args.workers = min(args.shuffles, 200), \
            min(args.certify, 2000), 1

    cpy = probe([sys.executable], args.shuffles)
    print("CPython %s: %8.0f shuffles/s, HMAC-DRBG %6.2f MB/s (one core)"
          % (sys.version.split()[0], cpy["shuffles_per_s"], cpy["drbg_bytes_per_s"] / 1e6))
    mp_bin = os.path.join(BIN, "micropython")
    mpy = probe([mp_bin, "-X", "heapsize=1M"], max(1000, args.shuffles // 4))
    print("MicroPython (unix port): %8.0f shuffles/s, HMAC-DRBG %6.2f MB/s (one core)"
          % (mpy["shuffles_per_s"], mpy["drbg_bytes_per_s"] / 1e6))

    from facedown.certify import run_certify

    t0 = time.perf_counter()
    results, summary = run_certify(args.certify, workers=args.workers, quiet=True)
    wall = time.perf_counter() - t0
    per_million = wall * 1_000_000 / args.certify
    print("certify %d shuffles on %d cores: %.1f s wall (%s)%s"
          % (args.certify, summary["workers"], wall, "PASS" if summary["passed"] else "FAIL",
             "" if args.certify == 1_000_000
             else "; extrapolated to 1,000,000: %.0f s" % per_million))
    print("target 1,000,000 in under 600 s: %s" % ("met" if per_million < 600 else "MISSED"))
    first, steady = mechanism()
    for name, f in (("first after power-up", first), ("next", steady)):
        print("carousel reshuffle of 52 cards, %s: %.1f s (%.2f s a card loaded, %.1f s "
              "unloading, %d slots turned)" % (name, f["total_s"], f["load_s_per_card"],
                                               f["unload_s"], f["travel_slots"]))
    print(json.dumps({"cpython": cpy, "micropython": mpy, "certify_shuffles": args.certify,
                      "certify_wall_s": round(wall, 1), "certify_1M_s": round(per_million, 1),
                      "workers": summary["workers"], "passed": summary["passed"],
                      "carousel": {"first": first, "next": steady}}))


if __name__ == "__main__":
    main()
