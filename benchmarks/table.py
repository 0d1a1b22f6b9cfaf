"""Table benchmark: what a card room sees of the shoe, in the simulator's timing model.

1. The mechanism, measured in the fake world of tests/mp_carousel_test.py (the Pico's own
   firmware on fakes whose clock is the PIO timing model's): a 52-card reshuffle and a 40-card
   in-hand stub reshuffle, the first after power-up and the next; the initial deal of 9-seat
   hold'em (18 cards) and a flop (a burn and three cards).
2. The timing side channel: the carousel's part of a reshuffle (every loading move, then the
   unloading turn) for --plans plans of 52 cards arriving in one fixed order; max minus min
   must be 0 to the fake clock's grain (its waits end within a few ms).
3. A table's hour: --hands hands of 9-seat hold'em played on the engine in this process
   (firmware/device.py on the simulated mechanism), with the irregularities of `facedown demo`
   (host/facedown/demo.py's Demo.play: exposed cards, premature boards, double feeds, boxed
   cards, missing burns, jams, an empty magazine, the lid, a silent reader; not its power cut).
   Each hand's cards, reshuffles and stops are timed with the figures of 1; hands per hour
   where the shoe is the only delay (betting time 0) and with hardware/table.json's betting
   time; the table's wait for the shoe per hand (for the opening shuffle, in-hand reshuffles,
   the cards); the share of the hour the mechanism is busy.

Every figure is given for the shoe as designed (hardware/pinmap.json) and, as the baseline in
the same run, for revision B as first built (hardware/table.json `baseline`: the pin map's
values that differ).

    .venv/bin/python benchmarks/table.py [--hands N] [--plans N] [--quick]

--quick (run by `make test`): 40 hands, 4 plans.
"""

import argparse
import collections
import copy
import importlib.util
import json
import os
import random
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TABLE = os.path.join(ROOT, "hardware", "table.json")


def fake_world():
    """tests/mp_carousel_test.py as a module under CPython (the fakes, the world)."""
    for p in (os.path.join(ROOT, "tests"), os.path.join(ROOT, "protocol")):
        if p not in sys.path:
            sys.path.insert(0, p)
    spec = importlib.util.spec_from_file_location(
        "carousel_figures", os.path.join(ROOT, "tests", "mp_carousel_test.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def variants():
    """(name, pin map overrides) for the design and the baseline."""
    with open(TABLE) as f:
        table = json.load(f)
    return table, (("now", {}), ("baseline", table["baseline"]["pinmap"]))


def mechanism(m, overrides, plans):
    m.PINMAP_OVERRIDES.clear()
    m.PINMAP_OVERRIDES.update(copy.deepcopy(overrides))
    first52, next52 = m.reshuffle_figures(52)
    first40, next40 = m.reshuffle_figures(40, seed="stub")
    deal = m.deal_figures(9)
    lo, hi, tlo, thi = m.carousel_spread(plans)
    m.PINMAP_OVERRIDES.clear()
    return {"r52": (first52, next52), "r40": (first40, next40), "deal": deal,
            "spread_ms": hi - lo, "spread_range_ms": (lo, hi), "travel": (tlo, thi),
            "plans": plans}


# --------------------------------------------------------------------------- the table's hour

class Table:
    """The demo's client, in this process: call/status/sync on firmware/device.py's Device
    over an InProcess session, on the simulated mechanism (counted: the cards fed by route,
    the reshuffles and their sizes, the stops' time)."""

    def __init__(self, seed):
        for p in (os.path.join(ROOT, "tests"), os.path.join(ROOT, "protocol"),
                  os.path.join(ROOT, "firmware"), os.path.join(ROOT, "host")):
            if p not in sys.path:
                sys.path.insert(0, p)
        import wire
        from device import Device
        from hal.flashdev import RamFlash
        from pyhal import PyHal
        from sessions import InProcess, provision

        self.W = wire
        folder = tempfile.mkdtemp(prefix="facedown-table-")
        hal = PyHal(folder, flash=RamFlash(blocks=64), seed="table/%d" % seed)
        key = provision(folder, hal.device_id)
        self.mech = hal.mech
        self.dev = Device(hal)
        self.host = InProcess(self.dev, wire, key, "maintenance")
        self.hand = None
        self.mirror = argparse.Namespace(status=0)  # Demo.over() reads the hand's status here
        self._count()

    def _count(self):
        mech = self.mech
        feed, load = mech.feed, mech.load
        t = self

        def counted_feed(route):
            out = feed(route)
            t.hand["cards"][route] += 1
            return out

        def counted_load(stub, plan=None):
            if plan is not None and t.hand is not None:
                t.hand["reshuffles"].append(len(plan.cards))
            return load(stub, plan)

        mech.feed = counted_feed
        mech.load = counted_load

    def new_hand(self):
        self.hand = {"cards": collections.Counter(), "reshuffles": [], "stop_ms": 0}
        self.mech.spent_ms = 0

    def call(self, name, *args):
        from facedown.client import ShoeError

        body = self.host.raw(name, *args)
        code, got = self.W.decode_reply(body, self.W.COMMAND_REPLY[self.W.COMMAND_IDS[name]])
        if code:
            raise ShoeError(code, got if isinstance(got, str) else str(got), name)
        return got

    def status(self):
        doc = b""
        while True:
            _hand, _next, chunk = self.call("status", len(doc))
            if not chunk:
                return json.loads(doc.decode())
            doc += chunk

    def sync(self):
        h = self.dev.hand
        self.mirror.status = h.status if h is not None else 0


def play_hour(hands, seed):
    """Play `hands` hands of 9-seat hold'em with the demo's irregularities: a list of what each
    hand asked of the mechanism."""
    sys.path.insert(0, os.path.join(ROOT, "host"))
    from facedown.demo import SEATS, Demo

    args = argparse.Namespace(seed=seed, hands=hands, feed_ms=0, rules="tda2024")
    demo = Demo(args)
    demo.screen = argparse.Namespace(say=lambda *a, **k: None)
    t = Table(seed)
    t.call("config", "holdem", sum(1 << s for s in SEATS), 9, "tda2024", "{}")
    out = []
    for _ in range(hands):
        t.new_hand()
        t.call("hand", 0)
        demo.mirror = t.mirror
        try:
            demo.play(t, None)
        except Exception as e:  # the demo's own: a hand stopped once it is over (rare)
            if type(e).__name__ != "ShoeError":
                raise
            if t.dev.hand is not None and t.dev.hand.status == 0:
                t.call("end")
        if t.dev.hand is not None and t.dev.hand.status == 0:
            t.call("end")
        t.hand["stop_ms"] = t.mech.spent_ms
        t.dev.ack(t.dev.event_next - 1)  # the host has every event
        out.append(t.hand)
    return out


def reshuffle_s(fig, n):
    """The next (not the first) reshuffle of n cards, in s: linear in n through the measured
    40- and 52-card figures (a card's loading time is the same for every card)."""
    a, b = fig["r40"][1]["total_s"], fig["r52"][1]["total_s"]
    return a + (n - 40) * (b - a) / 12.0


def hour(fig, hands, betting_s):
    """The table's hour from the hands played and the mechanism's figures: a dict of figures.
    The opening shuffle is the hand's first reshuffle; the table waits for all of it."""
    card_s = fig["deal"]["deal_s"] / fig["deal"]["cards"]
    route_change_s = (fig["deal"]["flop_s"] - 4 * card_s) / 2  # a flop moves the diverter twice
    opening = in_hand = cards = stops = 0.0
    in_hand_count = 0
    for h in hands:
        rs = h["reshuffles"]
        if rs:
            opening += reshuffle_s(fig, rs[0])
        for n in rs[1:]:
            in_hand += reshuffle_s(fig, n)
            in_hand_count += 1
        c = h["cards"]
        n_cards = sum(c.values())
        cards += n_cards * card_s + 2 * c.get(1, 0) * route_change_s  # to and from the burn
        stops += h["stop_ms"] / 1000.0
    k = float(len(hands))
    shoe = (opening + in_hand + cards + stops) / k
    wait = shoe  # one deck: the table waits for everything the shoe does
    per_hand = wait + betting_s
    return {"hands": len(hands), "opening_s": opening / k, "in_hand_s": in_hand / k,
            "in_hand_reshuffles": in_hand_count, "cards_s": cards / k, "stops_s": stops / k,
            "shoe_s": shoe, "wait_s": wait, "wait_opening_s": opening / k,
            "hands_per_hour_shoe_only": 3600.0 / wait,
            "hands_per_hour": 3600.0 / per_hand, "betting_s": betting_s,
            "busy_share": shoe / per_hand, "card_s": card_s}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hands", type=int, default=300, help="hands played for the hour")
    ap.add_argument("--plans", type=int, default=1000, help="plans for the timing spread")
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--quick", action="store_true", help="40 hands, 4 plans (`make test`)")
    args = ap.parse_args()
    if args.quick:
        args.hands, args.plans = min(args.hands, 40), min(args.plans, 4)
    table, designs = variants()
    betting_s = table["betting_s_per_hand"]["value"]
    m = fake_world()
    hands = play_hour(args.hands, args.seed)
    res = {}
    for name, overrides in designs:
        fig = mechanism(m, overrides, args.plans)
        res[name] = {"mechanism": fig, "hour": hour(fig, hands, betting_s)}
    base = res["baseline"]
    for name, _ in designs:
        fig, hr = res[name]["mechanism"], res[name]["hour"]
        print("== %s%s" % (name, "" if name == "baseline" else
                           " (the shoe as designed; baseline: %s)" % table["baseline"]["name"]))
        for n in ("52", "40"):
            first, nxt = fig["r" + n]
            print("reshuffle of %s cards: first after power-up %.1f s, next %.1f s (%.2f s a "
                  "card loaded, %.1f s unloading)%s" % (
                      n, first["total_s"], nxt["total_s"], nxt["load_s_per_card"],
                      nxt["unload_s"], "" if name == "baseline" else "; baseline %.1f s" %
                      base["mechanism"]["r" + n][1]["total_s"]))
        print("initial deal of 18 cards: %.1f s (%.2f s a card); a flop with its burn %.1f s"
              % (fig["deal"]["deal_s"], fig["deal"]["deal_s"] / 18, fig["deal"]["flop_s"]))
        print("reshuffle time spread over %d plans: %.1f ms (max minus min, the carousel's "
              "part %.1f..%.1f ms; travel %d..%d slots)"
              % (fig["plans"], fig["spread_ms"], fig["spread_range_ms"][0],
                 fig["spread_range_ms"][1], fig["travel"][0], fig["travel"][1]))
        print("table's hour, %d hands of 9-seat hold'em with the demo's irregularities "
              "(%d in-hand reshuffles):" % (hr["hands"], hr["in_hand_reshuffles"]))
        print("  hands/hour, the shoe the only delay: %.1f" % hr["hands_per_hour_shoe_only"])
        print("  hands/hour with %.0f s of betting a hand: %.1f"
              % (betting_s, hr["hands_per_hour"]))
        print("  the table waits for the shoe %.1f s a hand: opening shuffle %.1f s, in-hand "
              "reshuffles %.1f s, cards %.1f s, stops %.1f s"
              % (hr["wait_s"], hr["wait_opening_s"], hr["in_hand_s"], hr["cards_s"],
                 hr["stops_s"]))
        print("  mechanism busy %.0f %% of the hour" % (100 * hr["busy_share"]))
    now = res["now"]["hour"]
    print("ratio to the baseline: hands/hour x%.2f (shoe only), x%.2f (with betting); "
          "52-card reshuffle x%.2f"
          % (now["hands_per_hour_shoe_only"] / base["hour"]["hands_per_hour_shoe_only"],
             now["hands_per_hour"] / base["hour"]["hands_per_hour"],
             res["now"]["mechanism"]["r52"][1]["total_s"]
             / base["mechanism"]["r52"][1]["total_s"]))
    print(json.dumps(res, default=str))


if __name__ == "__main__":
    random.seed(0)
    main()
