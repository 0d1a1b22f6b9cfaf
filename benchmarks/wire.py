"""Wire benchmark: a 9-seat hold'em hand dealt to the river (hand, deal, 9 actions, flop,
9 checks, turn, 9 checks, river, 9 checks, end) through the real firmware on the MicroPython
unix port (a virtual shoe on a virtual null-modem), driven by the host client over protocol v1.

Reports, each against a baseline or a target measured/stated in the same run:
  1. hands/s end to end (the full record-building replay, and plain commands with config once)
     against the in-process engine (scenario.run on CPython);
  2. command round-trip latency p50/p99 (ping, and the action command);
  3. bytes and frames on the wire per hand, each direction (the identify handshake excluded);
  4. the line time one hand needs on a 115200-baud UART (target: under 0.1 s for both directions
     together), and hands/s with the null-modem actually paced at 115200 baud;
  5. hands/s and the client's retries per hand with 1% line faults (seeded).

    .venv/bin/python benchmarks/wire.py [--hands N] [--quick]
"""

import argparse
import math
import time

# (this file is called wire.py and its folder is sys.path[0]: harmless, the firmware's own
# `import wire` means facedown.fw.wire, the protocol codec; host/facedown/firmware.py)
from facedown.client import connect
from facedown.engine import scenario_module
from facedown.shoereplay import replay
from facedown.virtualshoe import VirtualShoe

SEATS = [1, 2, 3, 4, 5, 6, 7, 8, 9]
BUTTON = 9
PREFLOP = [3, 4, 5, 6, 7, 8, 9, 1, 2]  # UTG first (button 9, blinds 1 and 2)
ACTION = {"check": 0, "call": 1}
BAUD = 115200
TARGET_LINE_S = 0.1
FAULTS = {"drop": 0.0025, "corrupt": 0.0025, "duplicate": 0.0025, "delay": 0.0025, "seed": 11}
COUNTERS = ("bytes_sent", "bytes_received", "frames_sent", "frames_received", "retries",
            "fast_retries", "duplicate_events", "events", "commands")


def hand_steps():
    """The per-hand steps as (do, seat, kind) after the hand is started."""
    steps = [("deal", None, None)] + [("action", s, "call") for s in PREFLOP]
    for _street in range(3):
        steps.append(("street", None, None))
        steps += [("action", s, "check") for s in SEATS]
    steps.append(("end", None, None))
    return steps


STEPS = hand_steps()


def scenario(seed):
    """The same hand as a scenario dict (what shoereplay.replay and scenario.run take)."""
    steps = []
    for do, seat, kind in STEPS:
        step = {"do": do}
        if do == "action":
            step.update(seat=seat, kind=kind)
        steps.append(step)
    return {"game": "holdem", "rules": "tda2024", "house": {}, "seats": SEATS,
            "button": BUTTON, "seed": seed, "steps": steps}


def seats_mask():
    mask = 0
    for s in SEATS:
        mask |= 1 << s
    return mask


# ---------------------------------------------------------------------------------- helpers

def snap(client):
    return {k: client.stats.get(k, 0) for k in COUNTERS}


def count_commands(client):
    """Count the commands the client sends (replay's included), as stats["commands"]."""
    call = client.call

    def counted(*args, **kw):
        client.stats["commands"] = client.stats.get("commands", 0) + 1
        return call(*args, **kw)

    client.call = counted


def delta(before, after):
    return {k: after[k] - before[k] for k in COUNTERS}


def pct(sorted_values, q):
    """Nearest-rank percentile of an already sorted list."""
    if not sorted_values:
        return float("nan")
    i = min(len(sorted_values) - 1, max(0, math.ceil(q / 100.0 * len(sorted_values)) - 1))
    return sorted_values[i]


class Shoe:
    """A virtual shoe plus a client connected, identified, in a maintenance session (config
    needs one; it may deal too) and attached, as `facedown` commands are."""

    def __init__(self, nullmodem=None, timeout=30):
        self.shoe = VirtualShoe(nullmodem=nullmodem)
        try:
            self.shoe.start(ready_line="ready", timeout=30)
            t0 = time.perf_counter()
            self.client = connect(self.shoe.port, self.shoe.key, timeout=timeout)
            count_commands(self.client)
        except BaseException:
            self.shoe.close()
            raise
        self.handshake_s = time.perf_counter() - t0
        self.handshake = snap(self.client)  # identify, login, attach: left out of the per-hand figures

    def close(self):
        self.client.close()
        self.shoe.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def configure(c):
    c.call("config", "holdem", seats_mask(), BUTTON, "tda2024", "{}")


def plain_hand(c, action_times=None):
    """One hand by plain commands, config already sent: hand, deal, 9 actions, flop, 9 checks,
    turn, 9 checks, river, 9 checks, end (the shoe shuffles). Optionally times each action."""
    c.call("hand", 0)
    for do, seat, kind in STEPS:
        if do == "action":
            t0 = time.perf_counter()
            c.call("action", seat, ACTION[kind])
            if action_times is not None:
                action_times.append(time.perf_counter() - t0)
        elif do == "deal":
            c.call("deal", 0)
        else:
            c.call(do)


def sync_cost(c):
    """The traffic of one sync with nothing pending (to take it off a run's totals)."""
    before = snap(c)
    c.sync()
    return delta(before, snap(c))


def plain_run(c, n, action_times=None):
    """n hands by plain commands; returns (seconds, per-run traffic delta minus the final sync)."""
    configure(c)
    c.sync()
    before = snap(c)
    t0 = time.perf_counter()
    for _ in range(n):
        plain_hand(c, action_times)
    c.sync()  # every event of the last hand in and ACKed
    secs = time.perf_counter() - t0
    d = delta(before, snap(c))
    s = sync_cost(c)
    return secs, {k: d[k] - s[k] for k in COUNTERS}


def replay_run(c, seeds, check=None):
    """Replay one scenario per seed; returns (seconds, traffic delta, records that differ from
    the in-process run, when `check` holds the in-process records)."""
    before = snap(c)
    bad = 0
    t0 = time.perf_counter()
    for i, seed in enumerate(seeds):
        rec = replay(c, scenario(seed))
        if check is not None and rec != check[i]:
            bad += 1
    secs = time.perf_counter() - t0
    return secs, delta(before, snap(c)), bad


def ping_times(c, n):
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        c.call("ping", i)
        out.append(time.perf_counter() - t0)
    return out


def in_process_rate(scn_mod, seeds):
    scns = [scenario(s) for s in seeds]
    t0 = time.perf_counter()
    recs = [scn_mod.run(s) for s in scns]
    return len(seeds) / (time.perf_counter() - t0), recs


# ---------------------------------------------------------------------------------- report

def row(label, value, unit="", ratio=None):
    text = "  %-46s %12s %-8s" % (label, value, unit)
    if ratio is not None:
        text += " %s" % ratio
    print(text.rstrip())


def lat_row(label, times):
    ms = sorted(t * 1000.0 for t in times)
    print("  %-46s p50 %7.3f ms   p99 %7.3f ms   max %7.3f ms   (n=%d)" % (
        label, pct(ms, 50), pct(ms, 99), ms[-1], len(ms)))


def line_s(nbytes):
    return nbytes * 10.0 / BAUD


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=100, help="hands per end-to-end run (100)")
    ap.add_argument("--pings", type=int, default=500, help="ping calls per latency run (500)")
    ap.add_argument("--paced-hands", type=int, default=5,
                    help="hands on the null-modem paced at 115200 baud (5)")
    ap.add_argument("--fault-hands", type=int, default=30, help="hands on the 1%% lossy line (30)")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run (`make test` runs it): 5 hands, 30 pings, 1 paced, "
                         "3 lossy")
    args = ap.parse_args()
    if args.quick:
        args.hands, args.pings = min(args.hands, 5), min(args.pings, 30)
        args.paced_hands, args.fault_hands = min(args.paced_hands, 1), min(args.fault_hands, 3)
    n = max(1, args.hands)
    t_start = time.perf_counter()
    scn_mod = scenario_module()
    seeds = list(range(1, n + 1))

    # baseline: the engine in-process (several passes, best, so it is not a cold-start figure)
    base = 0.0
    for _ in range(3):
        rate, records = in_process_rate(scn_mod, seeds)
        base = max(base, rate)

    with Shoe() as sh:
        c = sh.client
        # 1. end to end, the record-building path (shoereplay: config, sim_deck, hand, the
        # steps, sync; the record rebuilt from the events), each checked against in-process
        clean_handshake = sh.handshake
        r_secs, r_tr, r_bad = replay_run(c, seeds, check=records)
        # 1b. plain commands, config once
        action_times = []
        p_secs, p_tr = plain_run(c, n, action_times)
        # 2. latency: ping with no hand (right after config), ping mid-hand, action
        configure(c)
        ping_idle = ping_times(c, args.pings)
        c.call("hand", 0)
        c.call("deal", 0)
        ping_hand = ping_times(c, args.pings)
        status_hand = []
        for _ in range(max(50, args.pings // 5)):
            t0 = time.perf_counter()
            c.call("status", 0xFFFF)
            status_hand.append(time.perf_counter() - t0)
        c.call("end")
        c.sync()
        shoe_stats = dict(c.stats)

    # 4b. the null-modem paced at 115200 baud
    with Shoe(nullmodem={"baud": BAUD}) as sh:
        c = sh.client
        paced_n = max(1, args.paced_hands)
        pc_secs, pc_tr = plain_run(c, paced_n)
        pr_secs, pr_tr, _ = replay_run(c, seeds[:paced_n])
        paced_ping = ping_times(c, 50)

    # 5. 1% line faults
    with Shoe(nullmodem=dict(FAULTS), timeout=60) as sh:
        c = sh.client
        fn = max(1, args.fault_hands)
        f_seeds = [seeds[i % len(seeds)] for i in range(fn)]
        check = [records[i % len(records)] for i in range(fn)]
        sh.shoe.modem.reset_stats()  # the faults of the handshake are not the hands'
        f_secs, f_tr, f_bad = replay_run(c, f_seeds, check=check)
        modem = sh.shoe.modem.stats()
        lossy_handshake, lossy_handshake_s = sh.handshake, sh.handshake_s

    # ------------------------------------------------------------------ print
    total = time.perf_counter() - t_start
    e2e_r, e2e_p = n / r_secs, n / p_secs
    print("9-seat hold'em to the river (hand, deal, 9 actions, flop, 9, turn, 9, river, 9, end:"
          " %d commands), %d hands" % (len(STEPS) + 1, n))
    print("1. hands per second (virtual shoe: firmware on the MicroPython unix port, no baud "
          "limit)")
    row("in-process engine, scenario.run on CPython", "%.0f" % base, "hands/s", "(baseline)")
    row("shoe, replay (record rebuilt; config each hand)", "%.1f" % e2e_r, "hands/s",
        "%.4fx = 1/%.0f  (%.1f ms/hand; %d/%d records differ)" % (
            e2e_r / base, base / e2e_r, 1000 * r_secs / n, r_bad, n))
    row("shoe, plain commands (config once)", "%.1f" % e2e_p, "hands/s",
        "%.4fx = 1/%.0f  (%.1f ms/hand)" % (e2e_p / base, base / e2e_p, 1000 * p_secs / n))
    print("2. command round trip (time.perf_counter around client.call)")
    lat_row("ping, no hand (after config)", ping_idle)
    lat_row("ping, hand in progress", ping_hand)
    lat_row("status 0xFFFF (counters), hand in progress", status_hand)
    lat_row("action (from the plain-command hands)", action_times)
    print("3. wire traffic per hand (identify/login/attach handshake excluded: %d B out, %d B in)" % (
        clean_handshake["bytes_sent"], clean_handshake["bytes_received"]))
    print("  %-34s %9s %9s %9s %9s %9s" % ("", "host->dev", "dev->host", "total", "frames>",
                                          "frames<"))
    for label, tr, k in (("plain commands (config once)", p_tr, n),
                         ("replay (record-building path)", r_tr, n)):
        print("  %-34s %8.0fB %8.0fB %8.0fB %9.1f %9.1f" % (
            label, tr["bytes_sent"] / k, tr["bytes_received"] / k,
            (tr["bytes_sent"] + tr["bytes_received"]) / k, tr["frames_sent"] / k,
            tr["frames_received"] / k))
    for label, tr in (("plain", p_tr), ("replay", r_tr)):
        cmds = tr["commands"] / n
        acks = (tr["frames_sent"] - tr["commands"] - tr["retries"] - tr["fast_retries"]) / n
        print("  %-6s %4.1f commands + %4.1f ACK/NAK frames out; %4.1f replies + %4.1f EVENT "
              "frames in, %4.1f events (%3.0f B of event entries)" % (
                  label, cmds, acks, cmds, tr["frames_received"] / n - cmds, tr["events"] / n,
                  4 * tr["events"] / n))
    print("4. line time on a %d-baud UART (10 bits a byte), target < %.1f s a hand, both "
          "directions together" % (BAUD, TARGET_LINE_S))
    for label, tr in (("plain commands", p_tr), ("replay", r_tr)):
        up, down = tr["bytes_sent"] / n, tr["bytes_received"] / n
        t = line_s(up + down)
        print("  %-34s %7.3f s  (%3.0f%% of target)  %s   [busiest direction alone %.3f s]" % (
            label, t, 100 * t / TARGET_LINE_S, "PASS" if t < TARGET_LINE_S else "FAIL",
            line_s(max(up, down))))
    print("  null-modem paced at %d baud:" % BAUD)
    row("plain commands, %d hands" % paced_n, "%.2f" % (paced_n / pc_secs), "hands/s",
        "%.0f ms/hand wall (%.0f ms line time)" % (
            1000 * pc_secs / paced_n,
            1000 * line_s((pc_tr["bytes_sent"] + pc_tr["bytes_received"]) / paced_n)))
    row("replay, %d hands" % paced_n, "%.2f" % (paced_n / pr_secs), "hands/s",
        "%.0f ms/hand wall" % (1000 * pr_secs / paced_n))
    lat_row("ping at %d baud" % BAUD, paced_ping)
    print("5. 1%% line faults (drop/corrupt/duplicate/delay %.4f each per byte, seed %d), "
          "replay, %d hands" % (FAULTS["drop"], FAULTS["seed"], fn))
    row("hands per second", "%.2f" % (fn / f_secs), "hands/s",
        "%.3fx of the clean replay  (%d/%d records differ)" % ((fn / f_secs) / e2e_r, f_bad, fn))
    print("  per hand: retries %.2f, fast retries %.2f, duplicate events %.2f; "
          "line faults/hand %.1f" % (
              f_tr["retries"] / fn, f_tr["fast_retries"] / fn, f_tr["duplicate_events"] / fn,
              sum(modem[d][k] for d in modem for k in ("dropped", "corrupted", "duplicated",
                                                        "delayed")) / fn))
    print("  identify handshake on this line: %.2f s, %d B in (clean line: %d B)" % (
        lossy_handshake_s, lossy_handshake["bytes_received"], clean_handshake["bytes_received"]))
    print("(clean shoe totals: retries %d, fast retries %d, duplicate events %d; run %.1f s)" % (
        shoe_stats["retries"], shoe_stats["fast_retries"], shoe_stats["duplicate_events"], total))


if __name__ == "__main__":
    main()
