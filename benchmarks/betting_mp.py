# Runs under MicroPython (and CPython), in a firmware image's folder (benchmarks/betting.py
# builds it): what the betting engine (shoe.betting) costs. Prints JSON.
#   * the heap its import adds once the modules the hand engine already loads are in (games,
#     house, errors, compat), and the .mpy's own bytes;
#   * a 10-seat no-limit hand's state (the Betting object, its lists, the log at the river);
#   * everything a hand allocates with the GC off, per hand and per action;
#   * hands and actions per second over random complete hands of every structure (the tables
#     and generator of tests/mp_betting_test.py: every choice among the seat's legal options),
#     and the dealing engine's own 9-seat hold'em hand (engine_mp.py's: deal, 3 streets, 36
#     actions) timed in the same run, so the betting's share of a hand's CPU is a ratio, not a machine's figure.
import gc
import json
import sys

gc.collect()
from shoe import compat, errors, games, house  # noqa: E402,F401  (the hand engine's own)
from engine_mp import now_us, one_hand  # noqa: E402  (the dealing engine's hand, as engine.py times it)

MP = hasattr(gc, "mem_alloc")
OUT = {"port": "micropython" if MP else "cpython"}


def live():
    gc.collect()
    return gc.mem_alloc() if MP else 0


before = live()
from shoe import betting as B  # noqa: E402
OUT["import"] = live() - before
from mp_betting_test import G, Lcg, bet_out, draw  # noqa: E402  (the same tables and generator)


def deal(i):
    """Hand i: mp_betting_test's table drawn from its own seed, and the seed of its choices.
    Drawing one is timed on its own and taken out of the betting's time."""
    r = Lcg(2024 + 7919 * i)
    return draw(r, i), r.below(1 << 20)


def play(deal, probe=None):
    (kind, draws, cfg, seats, stacks, button, opener), seed = deal
    b = B.Betting(kind, seats, button, cfg, stacks, draws=draws, opener=opener)
    return b, bet_out(b, Lcg(seed), probe)


n = int(sys.argv[1]) if len(sys.argv) > 1 else 500
t0 = now_us()
for i in range(n):
    deal(i)
t_deals = now_us() - t0
t0 = now_us()
actions = 0
for i in range(n):
    actions += play(deal(i))[1]
dt = max(1, now_us() - t0 - t_deals)
OUT["hands"] = n
OUT["actions"] = actions
OUT["hands_per_s"] = n * 1000000.0 / dt
OUT["actions_per_s"] = actions * 1000000.0 / dt
m = max(20, n // 10)
t0 = now_us()
for i in range(m):
    one_hand(i)
OUT["dealing_hands_per_s"] = m * 1000000.0 / max(1, now_us() - t0)

if MP:
    # a 10-seat no-limit hand's state: the object after the blinds, its peak over the hand
    base = live()
    nl = B.config(G.BOARD, {"structure": "nl", "blinds": [50, 100]})
    ten = ((G.BOARD, 0, nl, list(range(1, 11)), dict((s, 20000) for s in range(1, 11)), 10,
            None), 77)
    b = B.Betting(G.BOARD, ten[0][3], 10, nl, ten[0][4])
    OUT["state_10_seats"] = live() - base
    del b
    PEAK = [0]

    def probe(b):
        PEAK[0] = max(PEAK[0], live() - base)

    b, acts = play(ten, probe)
    OUT["state_peak_10_seats"] = PEAK[0]
    OUT["state_peak_actions"] = acts
    del b
    # everything allocated with the GC off (an upper bound on what a hand needs at once)
    total = 0
    acts = 0
    worst = 0
    for i in range(50):
        d = deal(i)
        gc.collect()
        gc.disable()
        a = gc.mem_alloc()
        b, k = play(d)
        got = gc.mem_alloc() - a
        gc.enable()
        del b
        total += got
        acts += k
        worst = max(worst, got)
    OUT["alloc_per_hand"] = total / 50.0
    OUT["alloc_per_action"] = total / float(max(1, acts))
    OUT["alloc_worst_hand"] = worst
print(json.dumps(OUT))
