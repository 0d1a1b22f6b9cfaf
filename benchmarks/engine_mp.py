# Runs under MicroPython (and CPython): times the engine dealing 9-seat hold'em hands to the
# river, and measures the heap a 10-seat hand with many procedures needs. Prints JSON.
import gc
import json
import sys
import time

sys.path.insert(0, "../firmware")
sys.path.append("../protocol")  # crc.py, wire.py: at the image's root on a shoe
from shoe.hand import Hand  # noqa: E402
from shoe.record import record  # noqa: E402
from shoe.rng import SeededRandom  # noqa: E402
from hal.simmech import SimMech  # noqa: E402

SEATS9 = [1, 2, 3, 4, 5, 6, 7, 8, 9]
SEATS10 = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]


def now_us():
    try:
        return time.ticks_us()
    except AttributeError:
        return int(time.perf_counter() * 1000000)


# SimMech(revision_d=False): revision B's carousel, as the figures have always been measured; left
# to the pin map, the mechanism reads it at the first reshuffle, inside the measured window
# with the collector off (the loader's flag, read in pieces: tens of KB of garbage)
def one_hand(i):
    h = Hand("holdem", SEATS9, 9, "tda2024", None, SeededRandom(i), SimMech(revision_d=False))
    h.deal()
    for s in SEATS9:
        h.action(s, "call")
    for _ in range(3):
        h.street()
        for s in SEATS9:
            h.action(s, "check")
    h.end()
    return h


def hands_per_second(n):
    t0 = now_us()
    for i in range(n):
        one_hand(i)
    return n * 1000000.0 / max(1, now_us() - t0)


def procedures_hand(rules, probe=None):
    """A 10-seat hold'em hand that goes through as many procedures as one hand can.
    probe() is called after each step."""
    probe = probe or (lambda: None)
    mech = SimMech(revision_d=False)
    h = Hand("holdem", SEATS10, 10, rules, {"nonstandard_card": "scrap", "extra_holecard": "burn"},
             SeededRandom(5), mech)
    mech.arm("boxed", 5)
    mech.arm("foreign", 9, 52)
    h.deal(12)
    probe()
    h.expose(4, 1)
    probe()
    mech.begin_step()
    mech.arm("double_feed", 3)
    h.deal()
    probe()
    h.action(1, "call")
    probe()
    h.action(2, "fold")
    probe()
    h.action(3, "raise")
    probe()
    mech.begin_step()
    mech.arm("double_feed", 2)
    h.street()            # flop: four cards (39-A scramble / RRoP reshuffle)
    probe()
    h.street()            # turn
    probe()
    h.premature()         # RP-5-B / RRoP set aside
    probe()
    h.jam(["muck", "burns"])
    probe()
    h.street()            # turn again
    probe()
    mech.begin_step()
    mech.arm("double_feed", 2)
    h.street()            # river with an extra card
    probe()
    h.end()
    probe()
    return h


PEAK = [0, 0]


def sample():
    gc.collect()
    PEAK[1] = max(PEAK[1], gc.mem_alloc() - PEAK[0])


def heap(rules):
    """The heap one such hand needs: the peak of live memory between steps, and everything it
    allocates with the GC off (an upper bound of the true peak); then the record's size."""
    gc.collect()
    base = gc.mem_alloc()
    PEAK[0], PEAK[1] = base, 0
    procedures_hand(rules, sample)
    gc.collect()
    gc.disable()
    h = procedures_hand(rules)
    total = gc.mem_alloc() - base
    rec = record(h)
    with_record = gc.mem_alloc() - base
    gc.enable()
    return {"peak_live": PEAK[1], "allocated_gc_off": total, "with_record": with_record,
            "procedures": len(rec["procedures"])}


if __name__ == "__main__":  # benchmarks/betting_mp.py imports one_hand
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    out = {"hands_per_s": hands_per_second(n)}
    if hasattr(gc, "mem_alloc"):
        for rules in ("tda2024", "robert"):
            out[rules] = heap(rules)
    print(json.dumps(out))
