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

4. Revision D (the pipelined loader, designed: hardware/SHUFFLER.md), in the simulator's timing
   model (firmware/hal/fastpath.py with hardware/fastpath.json's sourced figures): the same
   reshuffles, the power-up's homing turn and purge (before any command: no reshuffle carries
   them), their spread over --plans plans to the model's grain (1 us), and the table's hour
   with one deck and with two (the opening wait a hand, and its bound; the longest a dealing
   command waits for the mechanism, on a timeline of each hand: deal_waits).

Every figure is given for the shoe as designed (this tree's firmware and pin map) and, as the
baseline in the same run, for the tree of hardware/table.json's `baseline` commit (revision B
before issue 19: taken out of git into a temporary folder; its firmware measured in a process
of its own; the same hands played).

    .venv/bin/python benchmarks/table.py [--hands N] [--plans N] [--world-plans N] [--quick]

--world-plans N: the fake world's spread (2, revision B's and the baseline's Pico firmware on
the PIO timing model, the slow part of a full run) over N plans instead of --plans.

--quick (run by `make test`): 40 hands, 4 plans.
"""

import argparse
import collections
import json
import os
import random
import subprocess
import sys
import tempfile

from facedown.firmware import ROOT

TABLE = os.path.join(ROOT, "hardware", "table.json")


def fake_world(root):
    """tests/mp_carousel_test.py of the tree at root as a module under CPython (its fakes,
    its world, its firmware)."""
    from worlds import test_script  # (beside this file; the tests load this one by its path)

    return test_script("mp_carousel_test", root)


def deal_figures(m, seats=9):
    """The initial deal of hold'em at `seats` seats (2 x seats cards to the output) and a flop
    (a burn, three cards out: the diverter moves twice) on the fitted shoe of the fake world m,
    after power-up's homing: seconds for each."""
    world, hal, cw = m.fitted()
    mech, board = hal.mech, m.board
    stub = list(range(52))
    world.magazine = [m.Card(c) for c in stub]
    mech.load(stub[::-1])
    mech.feed(m.ROUTE_REJECT)  # power-up's homing out of the figures: a card to the reject bin
    t0 = board.ns
    for _ in range(2 * seats):
        mech.feed(m.ROUTE_OUT)
    t1 = board.ns
    mech.feed(m.ROUTE_BURN)
    for _ in range(3):
        mech.feed(m.ROUTE_OUT)
    return {"deal_s": (t1 - t0) / 1e9, "cards": 2 * seats, "flop_s": (board.ns - t1) / 1e9}


def carousel_spread(m, plans, n=52, seed="spread"):
    """The carousel's part of a reshuffle of n cards in the fake world m (each card's loading
    move, as the mechanism makes it, then the unloading turn) for `plans` plans drawn in turn,
    the cards arriving in one fixed order (the feed path's part does not depend on the plan):
    (min, max) in ms of the fake clock, and the travel's (min, max) in slots."""
    from shoe.drbg import HmacDrbg, seeded_entropy
    from shoe.shuffler import Plan

    world, hal, cw = m.fitted()
    car, board = hal.carousel, m.board
    car.ready()
    rng = HmacDrbg(seeded_entropy(seed))
    stub = list(range(n))
    times, travels = [], []
    numbered = car.load_to.__code__.co_argcount > 2  # (the baseline's takes no card number)
    for _ in range(plans):
        plan = Plan(stub, rng)
        t0 = board.ns
        travel = car.travel
        for k, c in enumerate(stub):
            slot = plan.slot_of(c)
            if numbered:
                car.load_to(slot, k)
            else:
                car.load_to(slot)
            cw.deposit(m.ROUTE_SHUFFLE, m.Card(c))
            car.fill(c, slot)
        car.unload(plan.drops())
        assert len(cw.tray) == n and not cw.missed
        del cw.tray[:]
        times.append((board.ns - t0) / 1e6)
        travels.append((car.travel - travel) // car.t.sps)
    return min(times), max(times), min(travels), max(travels)


def mechanism_here(root, plans):
    """The mechanism's figures of the tree at root (run in a process of its own: each tree
    imports its own firmware)."""
    m = fake_world(root)
    first52, next52 = m.reshuffle_figures(52)
    first40, next40 = m.reshuffle_figures(40, seed="stub")
    deal = deal_figures(m, 9)
    lo, hi, tlo, thi = carousel_spread(m, plans)
    return {"r52": (first52, next52), "r40": (first40, next40), "deal": deal,
            "spread_ms": hi - lo, "spread_range_ms": (lo, hi), "travel": (tlo, thi),
            "plans": plans}


def mechanism(root, plans):
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--mechanism", root,
                          "--plans", str(plans)], capture_output=True, text=True, cwd=root)
    if out.returncode:
        raise SystemExit("the mechanism's figures of %s failed:\n%s" % (root, out.stderr[-3000:]))
    return json.loads(out.stdout.strip().splitlines()[-1])


def baseline_tree(commit):
    """The baseline's tree (hardware/table.json: a commit of this repository) in a temporary
    folder, or None (with why) when git cannot give it."""
    folder = tempfile.mkdtemp(prefix="facedown-baseline-")
    git = subprocess.run("git archive %s | tar -x -C %s" % (commit, folder), shell=True,
                         cwd=ROOT, capture_output=True, text=True)
    if git.returncode:
        return None, git.stderr.strip().splitlines()[-1:] or ["git failed"]
    return folder, None


def fast_path(plans, seed="fastpath"):
    """Revision D (the pipelined loader: SHUFFLER.md "Revision D"), measured on the simulator
    running it (hal/simmech.py's SimMech with the pin map's loader fitted: its carousel is
    hal/simfast.py's, timed by hal/fastpath.py on hardware/fastpath.json's sourced figures):
    reshuffles of 52 and 40 cards, first after power-up (the pockets seen empty; and after a
    power cut left cards in them) and next, in the figures' format of mechanism_here (the deal
    is revision B's: the dealing path is unchanged); the spread over `plans` plans of 52 cards
    arriving in one order, the ring where the last one left it. Each figure is checked against
    the model computed on its own for the same plan (the cross-check: they must agree)."""
    sys.path.insert(0, os.path.join(ROOT, "firmware"))
    from hal.fastpath import load
    from hal.simmech import SimMech
    from shoe.drbg import HmacDrbg, seeded_entropy
    from shoe.shuffler import Plan

    m = load(os.path.join(ROOT, "hardware"))[0]
    rng = HmacDrbg(seeded_entropy(seed))
    disagree = []

    def shoe():
        mech = SimMech()
        mech.revision_d = True  # (as the pin map's loader.fitted makes it)
        return mech

    def measured(mech, n, model_args):
        """One reshuffle of n cards through the simulator: its time in us, and the model's."""
        plan = Plan(list(range(n)), rng)
        fed = list(range(n))
        mech.stack[:] = fed[::-1]  # the magazine: card 0 is fed first
        start = mech.carousel.at if mech.carousel is not None else 0
        us = mech.shuffle_us
        mech.load(list(plan.cards), plan)
        got = mech.shuffle_us - us
        pockets = m.park_map(plan.drops())  # each card's pocket: its place in the order
        r = m.reshuffle([pockets[plan.slot_of(c)] for c in fed], start, *model_args)
        if got != r["total_us"]:
            disagree.append((n, model_args, got, r["total_us"]))
        return got, r

    def fig(n, power_up=False, purge=False):
        """The simulator homes at power-up, and purges there the cards a power cut left in
        the pockets: its reshuffles carry neither (the model's reshuffle without them), the
        power-up's time is the model's power_up_us. carried_s: the same reshuffle on a loader
        that homes and purges in its first reshuffle instead (the model's)."""
        mech = shoe()
        if purge:
            mech.left_in_pockets = {7: 12}  # a power cut left a card in pocket 7
        if not power_up:
            measured(mech, n, (False, False))
        got, r = measured(mech, n, (False, False))
        if mech.boot_us != m.power_up_us(purge):
            disagree.append((n, "power-up", mech.boot_us, m.power_up_us(purge)))
        carried = m.reshuffle(list(range(n)), 0, power_up, purge)["total_us"]
        return {"total_s": got / 1e6, "unload_s": r["unload_us"] / 1e6,
                "load_s_per_card": r["cycle_us"] / 1e6, "first_card_s": r["first_card_us"] / 1e6,
                "model_s": r["total_us"] / 1e6, "boot_s": mech.boot_us / 1e6,
                "carried_s": carried / 1e6}

    out = {"r52": (fig(52, True), fig(52)), "r40": (fig(40, True), fig(40)),
           "r52_purge": fig(52, True, True), "r40_purge": fig(40, True, True)}
    totals, worst = [], 0
    mech = shoe()
    measured(mech, 52, (False, False))
    for _ in range(plans):
        got, r = measured(mech, 52, (False, False))
        totals.append(got)
        worst = max(worst, r["worst_move_us"])
    if disagree:
        raise SystemExit("revision D: the simulator and the model disagree (n, args, simulator "
                         "us, model us): %r" % disagree[:5])
    out.update({"unload_turn_s": m.unload_us() / 1e6, "first_card_s": m.reshuffle([0])["load_us"] / 1e6,
                "deal_wait_bound_s": m.deal_wait_us() / 1e6})
    out.update({"spread_us": max(totals) - min(totals), "plans": plans,
                "worst_move_ms": worst / 1e3, "move_bound_ms": m.move_bound_us / 1e3,
                "cycle_ms": m.cycle_us / 1e3, "feed_steps_per_s": m.feed_v,
                "stations_used": list(mech.carousel.stations_used), "model_agrees": True})
    return out


# --------------------------------------------------------------------------- the table's hour

class Table:
    """The demo's client, in this process: call/status/sync on firmware/device.py's Device
    over an InProcess session, on the simulated mechanism (counted: the cards fed by route,
    the reshuffles and their sizes, the stops' time)."""

    def __init__(self, seed, two_decks=False, revision_d=False):
        for p in (os.path.join(ROOT, "tests"), os.path.join(ROOT, "protocol"),
                  os.path.join(ROOT, "firmware")):
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
        self.mech.revision_d = revision_d  # the pipelined loader (hal/simfast.py), timed
        if two_decks:
            self.mech.two_decks()  # the simulator's two-deck shoe (SimMech, shoe/batch.py)
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
            us = mech.shuffle_us
            out = load(stub, plan)
            if plan is not None and t.hand is not None:
                t.hand["reshuffles"].append(len(plan.cards))
                if mech.revision_d:  # the simulator timed it (revision D's loader)
                    t.hand["reshuffle_s"].append((mech.shuffle_us - us) / 1e6)
            return out

        mech.feed = counted_feed
        mech.load = counted_load

    def new_hand(self):
        self.hand = {"cards": collections.Counter(), "reshuffles": [], "reshuffle_s": [],
                     "stop_ms": 0, "steps": 0}
        self.mech.spent_ms = 0

    def call(self, name, *args):
        from facedown.client import ShoeError

        fed = sum(self.hand["cards"].values()) if self.hand is not None else 0
        body = self.host.raw(name, *args)
        if self.hand is not None and sum(self.hand["cards"].values()) > fed:
            self.hand["steps"] += 1  # a step that fed cards: the path was the hand's
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


def play_hour(hands, seed, two_decks=False, revision_d=False):
    """Play `hands` hands of 9-seat hold'em with the demo's irregularities: a list of what each
    hand asked of the mechanism. two_decks: on the simulator's two-deck shoe, where a hand
    starts from the deck shuffled during the last one when it is ready ("from_next");
    revision_d: on revision D's loader, whose reshuffles the simulator times ("reshuffle_s")."""
    from facedown.demo import SEATS, Demo

    args = argparse.Namespace(seed=seed, hands=hands, feed_ms=0, rules="tda2024")
    demo = Demo(args)
    demo.screen = argparse.Namespace(say=lambda *a, **k: None)
    t = Table(seed, two_decks, revision_d)
    t.call("config", "holdem", sum(1 << s for s in SEATS), 9, "tda2024", "{}")
    out = []
    for _ in range(hands):
        t.new_hand()
        t.call("hand", 0)
        t.hand["from_next"] = not t.hand["reshuffles"]  # no opening shuffle: the next deck
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
        if revision_d and t.mech.carousel is not None:  # the carousel's next user waited for
            t.hand["turn_wait_s"] = t.mech.carousel.turn_wait_us / 1e6  # an unloading turn
        t.dev.ack(t.dev.event_next - 1)  # the host has every event
        out.append(t.hand)
    return out


def deal_waits(hands, fm, betting_s, background=True):
    """Two decks on revision D: the time each of the table's commands waits for the loader, on
    a timeline of each hand played (the simulator's two-deck shoe): the next deck loads in the
    gaps after the hand's dealing steps, the players' time (betting_s, half of it after an
    in-hand reshuffle, as hour() gives the next deck) split evenly over them; the feed picks a
    card of the gather tray every card cycle, the deck's first card of a gap at its start. A
    command comes at a gap's end: it waits for the card picked before it to clear the path (the
    rest of its cycle). When the last card is in (its fall the pipeline's first-card time after
    its pick), the unloading turn starts: background=True, it runs on its own (hal/simfast.py);
    False, as before, it holds the path and the link until it ends. Returns (the longest wait
    in s, the mean in s, commands, commands that waited)."""
    cyc = fm["r52"][1]["load_s_per_card"]
    fall = fm["first_card_s"]  # a card's pick to its fall into the pocket, alone
    turn = fm["unload_turn_s"]
    worst = total = 0.0
    count = held = 0
    for h in hands:
        k = max(1, h["steps"])
        idle = betting_s / (2.0 if len(h["reshuffles"]) > (0 if h.get("from_next") else 1)
                            else 1.0)
        gap = idle / k
        left = 52  # the next deck, gathered as the hand starts, loads from its first gap on
        for _step in range(k):
            w = 0.0
            if left > 0 and gap > 0:
                picks = int(gap // cyc) + (1 if gap % cyc else 0)  # picks at 0, cyc, .. < gap
                n = min(left, picks)
                left -= n
                last = (n - 1) * cyc  # the last pick of the gap
                w = max(0.0, last + cyc - gap)
                if left == 0:  # the deck is in: the unloading turn starts as its last card falls
                    end = last + fall + turn
                    if not background:
                        w = max(w, end - gap)
            worst = max(worst, w)
            total += w
            count += 1
            held += w > 0
    return worst, total / max(1, count), count, held


def _reshuffle_s(fig, n):
    """The next (not the first) reshuffle of n cards, in s: linear in n through the measured
    40- and 52-card figures (a card's loading time is the same for every card)."""
    a, b = fig["r40"][1]["total_s"], fig["r52"][1]["total_s"]
    return a + (n - 40) * (b - a) / 12.0


def hour(fig, hands, betting_s, two_decks=False):
    """The table's hour from the hands played and the mechanism's figures: a dict of figures.
    One deck: the opening shuffle is the hand's first reshuffle, and the table waits for all
    of it. Two decks (hands played on the simulator's two-deck shoe): a hand that starts from
    the next deck had it loaded in the path's idle time during the last hand while the players
    acted (betting_s); the table waits for what did not fit (all of it with no betting time),
    a dealing step waits for the card going into the carousel to finish (half a card's loading
    on average), and a hand with an in-hand reshuffle (which clears the carousel first: the
    next deck starts again after it) leaves the next deck half its idle time. A hand that does
    not start from the next deck (the first) waits for its own opening shuffle."""
    card_s = fig["deal"]["deal_s"] / fig["deal"]["cards"]
    route_change_s = (fig["deal"]["flop_s"] - 4 * card_s) / 2  # a flop moves the diverter twice
    load_card_s = fig["r52"][1]["load_s_per_card"]
    opening = in_hand = cards = stops = wait_open = interleave = 0.0
    in_hand_count = zero = from_next = zero_next = 0
    worst_next = 0.0
    idle = betting_s
    for h in hands:
        rs = list(h["reshuffles"])
        # the hand's own reshuffles as the simulator timed them (revision D), else from the
        # mechanism's figures
        timed = list(h.get("reshuffle_s") or []) or [_reshuffle_s(fig, n) for n in rs]
        if h.get("from_next"):
            t_open = _reshuffle_s(fig, 52)  # the next deck, loaded during the last hand
            w = max(0.0, t_open - idle)
            from_next += 1
            zero_next += w == 0.0
            worst_next = max(worst_next, w)
        else:
            t_open = timed.pop(0) if rs else 0.0
            rs = rs[1:]
            w = t_open
        opening += t_open
        wait_open += w
        zero += w == 0.0
        for _n in rs:
            in_hand += timed.pop(0)
            in_hand_count += 1
        idle = betting_s / (2.0 if rs else 1.0)  # what the next hand's deck gets
        if two_decks:
            interleave += min(h["steps"] * load_card_s / 2, idle)
        c = h["cards"]
        n_cards = sum(c.values())
        cards += n_cards * card_s + 2 * c.get(1, 0) * route_change_s  # to and from the burn
        stops += h["stop_ms"] / 1000.0
    k = float(len(hands))
    shoe = (opening + in_hand + cards + stops) / k   # the mechanism's work a hand
    wait = (wait_open + interleave + in_hand + cards + stops) / k
    per_hand = wait + betting_s
    return {"hands": len(hands), "opening_s": opening / k, "in_hand_s": in_hand / k,
            "in_hand_reshuffles": in_hand_count, "cards_s": cards / k, "stops_s": stops / k,
            "shoe_s": shoe, "wait_s": wait, "wait_opening_s": wait_open / k,
            "interleave_s": interleave / k, "hands_no_wait": zero, "from_next": from_next,
            "from_next_no_wait": zero_next, "wait_opening_max_from_next_s": worst_next,
            "hands_per_hour_shoe_only": 3600.0 / (shoe if two_decks else wait),
            "hands_per_hour": 3600.0 / per_hand, "betting_s": betting_s,
            "busy_share": min(1.0, shoe / per_hand), "card_s": card_s}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hands", type=int, default=300, help="hands played for the hour")
    ap.add_argument("--plans", type=int, default=1000, help="plans for the timing spread")
    ap.add_argument("--world-plans", type=int, default=None,
                    help="plans for the fake world's spread (revision B, the baseline); "
                         "default --plans")
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--quick", action="store_true", help="40 hands, 4 plans (`make test`)")
    ap.add_argument("--mechanism", metavar="ROOT", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.mechanism:
        print(json.dumps(mechanism_here(args.mechanism, args.plans)))
        return
    if args.quick:
        args.hands, args.plans = min(args.hands, 40), min(args.plans, 4)
    with open(TABLE) as f:
        table = json.load(f)
    betting_s = table["betting_s_per_hand"]["value"]
    hands = play_hour(args.hands, args.seed)
    base_root, why = baseline_tree(table["baseline"]["commit"])
    if base_root is None:
        raise SystemExit("the baseline (commit %s) is not to be had: %s; run this from a git "
                         "checkout of the project" % (table["baseline"]["commit"], why[0]))
    designs = ("now", "baseline")
    res = {}
    for name, root in (("now", ROOT), ("baseline", base_root)):
        fig = mechanism(root, args.plans if args.world_plans is None else args.world_plans)
        res[name] = {"mechanism": fig, "hour": hour(fig, hands, betting_s)}
    two_hands = play_hour(args.hands, args.seed, two_decks=True)
    res["now"]["two_decks"] = hour(res["now"]["mechanism"], two_hands, betting_s, True)
    fast = fast_path(args.plans)
    fig_d = dict(res["now"]["mechanism"], r52=fast["r52"], r40=fast["r40"])
    # the same hands on revision D's loader: the simulator times each reshuffle
    d_hands = play_hour(args.hands, args.seed, revision_d=True)
    d_two = play_hour(args.hands, args.seed, two_decks=True, revision_d=True)
    res["revision_d"] = {"mechanism": fast, "hour": hour(fig_d, d_hands, betting_s),
                         "two_decks": hour(fig_d, d_two, betting_s, True),
                         "hour_shoe_only": hour(fig_d, d_hands, 0.0),
                         "two_decks_shoe_only": hour(fig_d, d_two, 0.0, True),
                         "deal_wait": deal_waits(d_two, fast, betting_s),
                         "deal_wait_blocking": deal_waits(d_two, fast, betting_s, False),
                         "turn_wait_s": max([h.get("turn_wait_s", 0.0) for h in d_two] + [0.0])}
    base = res["baseline"]
    for name in designs:
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
    two = res["now"]["two_decks"]
    print("== two decks (the next deck shuffled while a hand is dealt: SHUFFLER.md; this tree's "
          "mechanism)")
    print("  %d of %d hands started from the deck shuffled during the last one (the "
          "simulator's two-deck shoe, the same demo seed)" % (two["from_next"], two["hands"]))
    print("  the table waits for the opening shuffle %.1f s a hand (0 s in %d of %d hands; one "
          "deck: %.1f s; baseline %.1f s), %.1f s a hand for dealing steps behind a card going "
          "into the carousel"
          % (two["wait_opening_s"], two["hands_no_wait"], two["hands"],
             res["now"]["hour"]["wait_opening_s"], base["hour"]["wait_opening_s"],
             two["interleave_s"]))
    print("  hands/hour with %.0f s of betting a hand: %.1f (one deck %.1f, baseline %.1f); the "
          "shoe the only delay: %.1f (the path shuffles the next deck too)"
          % (betting_s, two["hands_per_hour"], res["now"]["hour"]["hands_per_hour"],
             base["hour"]["hands_per_hour"], two["hands_per_hour_shoe_only"]))
    print("  mechanism busy %.0f %% of the hour" % (100 * two["busy_share"]))
    d = res["revision_d"]
    fm = d["mechanism"]
    print("== revision D (the pipelined loader: SHUFFLER.md; measured on the simulator running "
          "it, hal/simfast.py timed by hal/fastpath.py on hardware/fastpath.json's sourced "
          "figures; the model computed on its own agrees to the microsecond)")
    for n in ("52", "40"):
        first, nxt = fm["r" + n]
        purge = fm["r%s_purge" % n]
        print("reshuffle of %s cards: first after power-up %.1f s, next %.1f s (%.3f s a card, "
              "%.1f s unloading; %.1f s after a power cut left cards in the pockets); "
              "revision B %.1f s, baseline %.1f s"
              % (n, first["total_s"], nxt["total_s"], nxt["load_s_per_card"], nxt["unload_s"],
                 purge["total_s"], res["now"]["mechanism"]["r" + n][1]["total_s"],
                 base["mechanism"]["r" + n][1]["total_s"]))
        print("  the power-up, before any command: %.2f s (the homing turn), %.2f s when a power "
              "cut left cards in the pockets (+ the purge); a loader that did them in its first "
              "reshuffle instead: %.1f s, %.1f s"
              % (first["boot_s"], purge["boot_s"], first["carried_s"], purge["carried_s"]))
    print("card cycle %.1f ms (the carousel's padded quarter turn %.1f ms, the longest real "
          "move %.1f ms, then the card's fall into its pocket); the feed at %.0f steps/s"
          % (fm["cycle_ms"], fm["move_bound_ms"], fm["worst_move_ms"], fm["feed_steps_per_s"]))
    print("revision D reshuffle time spread over %d plans: %d us (max minus min; the model's "
          "grain 1 us); cards through station 0 / station 1: %d / %d"
          % (fm["plans"], fm["spread_us"], fm["stations_used"][0], fm["stations_used"][1]))
    print("initial deal of 18 cards: %.1f s (the dealing path is revision B's)"
          % res["now"]["mechanism"]["deal"]["deal_s"])
    for name, hr, hr0 in (("one deck", d["hour"], d["hour_shoe_only"]),
                          ("two decks", d["two_decks"], d["two_decks_shoe_only"])):
        print("  revision D, %s: hands/hour %.1f with %.0f s of betting, %.1f the shoe the only "
              "delay; the table waits %.1f s a hand (opening shuffle %.1f s, in-hand "
              "reshuffles %.1f s); mechanism busy %.0f %% of the hour"
              % (name, hr["hands_per_hour"], betting_s, hr0["hands_per_hour_shoe_only"],
                 hr["wait_s"], hr["wait_opening_s"], hr["in_hand_s"], 100 * hr["busy_share"]))
    two = d["two_decks"]
    print("  revision D, two decks: the opening wait is 0 s in %d of the %d hands that start "
          "from the next deck (the longest %.1f s); %d hand(s) shuffle their own deck (the "
          "session's first: %.1f s, before the table's first hand can be dealt)"
          % (two["from_next_no_wait"], two["from_next"], two["wait_opening_max_from_next_s"],
             two["hands"] - two["from_next"], fm["r52"][0]["total_s"]))
    dw, dw_old = d["deal_wait"], d["deal_wait_blocking"]
    print("  revision D, two decks: the longest a dealing command waited for the mechanism: "
          "%.0f ms (the card in flight; %.0f ms on average, %d of %d commands waited; the "
          "unloading turn runs on its own); were the %.1f s turn to hold the path and the link: "
          "%.1f s (%d commands); the carousel's next user waited for a turn at most %.1f s"
          % (1000 * dw[0], 1000 * dw[1], dw[3], dw[2], fm["unload_turn_s"], dw_old[0],
             dw_old[3], d["turn_wait_s"]))
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
