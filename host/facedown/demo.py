"""`facedown demo`: the main job on a virtual shoe. The real firmware (MicroPython unix port)
deals a stream of 9-seat hold'em hands over the serial protocol, with irregularities injected at
random (exposed cards, premature boards, double feeds, boxed cards, disordered stubs, stopping
faults of the mechanism: jams, an empty magazine, the lid, a silent reader; a power cycle); the
table is shown live as each event arrives, a fault highlighted with what the operator does (the
demo then plays the operator and the dealer: the step is sent again); a summary closes the run.

`facedown demo --scenarios` replays the bundled example scenarios instead (one per procedure)."""

import collections
import glob
import os
import random
import sys
import time

from . import engine, view
from .events import decode, describe
from .firmware import SCENARIOS
from .replay import load, replay

SEATS = list(range(1, 10))
ACTIONS = ("check", "call", "bet", "raise", "fold", "allin")


def add_command(sub):
    p = sub.add_parser("demo", help="a virtual shoe dealing hands with irregularities, live")
    p.add_argument("--hands", type=_count, default=12, help="how many hands (default 12)")
    p.add_argument("--seed", type=int, default=None, help="repeat a run exactly")
    p.add_argument("--feed-ms", type=_ms, default=25, help="time one card takes to come out")
    p.add_argument("--rules", default="tda2024", choices=("tda2024", "robert"))
    p.add_argument("--scenarios", action="store_true",
                   help="replay the bundled example scenarios instead")
    p.add_argument("--micropython", action="store_true",
                   help="with --scenarios: run the engine under the MicroPython unix port")
    p.add_argument("pattern", nargs="?", default="*",
                   help="with --scenarios: a name or a glob of names (premature: every "
                        "scenario with it in its name)")
    p.set_defaults(func=run)


def _count(text):
    import argparse

    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("a number 1 or more, not %r" % text)
    if n < 1:
        raise argparse.ArgumentTypeError("a number 1 or more, not %d" % n)
    return n


def _ms(text):
    import argparse

    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("milliseconds, 0 or more, not %r" % text)
    if n < 0:
        raise argparse.ArgumentTypeError("milliseconds, 0 or more, not %d" % n)
    return n


def run(args):
    if not args.scenarios and (args.pattern != "*" or args.micropython):
        from .errors import UserError

        raise UserError("%s goes with --scenarios" % ("a pattern (%r)" % args.pattern
                                                     if args.pattern != "*" else "--micropython"),
                        hint="facedown demo --scenarios %s" % (
                            args.pattern if args.pattern != "*" else "--micropython"))
    if args.scenarios:
        return run_scenarios(args)
    return Demo(args).run()


# ----------------------------------------------------------------------- bundled scenarios

def scenario_files(pattern="*"):
    """The bundled scenarios a pattern names: a glob, or a bare word matching inside names."""
    folder = SCENARIOS
    if pattern.endswith(".json"):
        pattern = pattern[:-5]
    if not glob.has_magic(pattern):
        pattern = "*" + pattern + "*"
    return sorted(glob.glob(os.path.join(folder, pattern + ".json")))


def run_scenarios(args):
    files = scenario_files(args.pattern)
    if not files:
        from .errors import UserError

        raise UserError("no bundled scenario matches %r" % args.pattern,
                        hint="they are in tests/scenarios/, e.g. demo --scenarios premature")
    procedures = set()
    for path in files:
        scn = load(path)
        rec = replay(scn, micropython=args.micropython)
        procedures.update(rec["procedures"])
        print("=" * 78)
        print(view.render(rec, title="%s  %s" % (os.path.basename(path), scn.get("title", ""))))
    print("=" * 78)
    print("%s replayed, %s applied" % (view.count(len(files), "scenario"),
                                       view.count(len(procedures), "distinct procedure")))
    return 0


# ----------------------------------------------------------------------- the live demo

def styled(text):
    """The table with faults and procedures highlighted (rich)."""
    from rich.text import Text

    out = Text()
    for line in text.split("\n"):
        style = None
        if "MISDEAL" in line or "VOID" in line or line.startswith("  ! ") or \
                "FAULT" in line[:40]:
            style = "bold white on red"
        elif line.startswith("  > "):
            style = "bold yellow"
        elif line.startswith("#") or line.startswith("hand "):
            style = "bold cyan"
        out.append(line + "\n", style=style)
    return out


class Screen:
    """The live table: redrawn in place on a terminal, printed per hand otherwise."""

    def __init__(self):
        self.live = None
        if sys.stdout.isatty():
            from rich.console import Console
            from rich.live import Live

            self.live = Live(console=Console(), refresh_per_second=20, transient=False)
            self.live.start()

    def show(self, text, final=False, highlight=True):
        if self.live is not None:
            self.live.update(styled(text) if highlight else text)
        elif final:
            print(text, flush=True)

    def say(self, line, alarm=False):
        """A line above the live table (alarm: highlighted, as a fault)."""
        if self.live is not None:
            self.live.console.print(line, style="bold white on red" if alarm else None,
                                    markup=False, highlight=False)
        else:
            print(line, flush=True)

    def stop(self):
        if self.live is not None:
            self.live.stop()


class Demo:
    def __init__(self, args):
        self.args = args
        self.seed = args.seed if args.seed is not None else random.randrange(10**6)
        self.r = random.Random(self.seed)
        self.mirror = None
        self.hand_no = 0
        self.procedures = collections.Counter()
        self.moves = 0
        self.events = 0
        self.screen = None
        self.last_line = ""
        self.power_cycle_at = self.r.randrange(2, max(3, args.hands)) if args.hands > 1 else None
        self.stops = collections.Counter()  # stopping faults met, by kind

    # events arrive here, live, while the shoe deals
    def on_event(self, number, hand, entry):
        self.events += 1
        if self.mirror is None or hand != self.hand_no:
            return
        self.mirror.apply(entry)
        kind, fields = decode(entry)
        if kind == "move":
            self.moves += 1
        if kind == "procedure":
            self.procedures[self.fw.procedures.pid(fields["procedure"])] += 1
        self.last_line = describe(entry, hand, self.args.rules)
        self.redraw()

    def redraw(self, final=False):
        rec = self.mirror.record()
        text = view.render(rec, title="hand %d   last: %s" % (self.hand_no, self.last_line))
        self.screen.show(text, final)

    def run(self):
        from .client import ShoeError
        from .mirror import Mirror
        from .virtualshoe import VirtualShoe

        self.fw = engine.firmware_imports()
        print("Facedown demo: a virtual shoe deals %s of 9-seat hold'em (%s), seed %d" % (
            view.count(self.args.hands, "hand"), self.args.rules, self.seed), flush=True)
        env = {"FACEDOWN_SIM": "feed_ms=%d,seed=%d" % (self.args.feed_ms, self.seed)}
        t0 = time.monotonic()
        with VirtualShoe(env=env) as shoe:
            shoe.start(ready_line="ready", timeout=20)
            print("virtual shoe on %s (flash %s)" % (shoe.port, shoe.flash), flush=True)
            client = shoe.connect(on_event=self.on_event, timeout=30)  # a technician's session
            info = client.info
            print("identified: device %s, firmware %s, protocol %d" % (
                info["device_id"], info["firmware"], info["protocol"]), flush=True)
            mask = sum(1 << s for s in SEATS)
            client.call("config", "holdem", mask, 9, self.args.rules, "{}")
            client.login(shoe.key, "table")  # then the dealer's console: a table session
            self.screen = Screen()
            try:
                for k in range(self.args.hands):
                    client.call("hand", 0)
                    st = client.status()
                    self.hand_no = st["hand"]
                    cfg = st["config"]
                    self.mirror = Mirror("holdem", SEATS, cfg["button"], self.args.rules)
                    self.last_line = "shuffled face down; button on seat %d" % cfg["button"]
                    self.redraw()
                    refused = None
                    try:
                        self.play(client, shoe, power_cycle=(k == self.power_cycle_at))
                    except ShoeError as e:  # (the demo stops a hand once it is over: rare)
                        refused = e
                    client.sync()
                    self.redraw(final=True)
                    rec = self.mirror.record()
                    self.screen.say("hand %d: %s%s" % (
                        self.hand_no, rec["status"],
                        "; " + ", ".join(rec["procedures"]) if rec["procedures"] else ""))
                    if refused is not None:
                        self.screen.say("  (the shoe declined the demo's next step for it: %s)"
                                        % refused)
            finally:
                self.screen.stop()
            wall = time.monotonic() - t0
            self.recovered = client.status()["recovered"]
            s = client.stats
            client.close()
        self.summary(s, wall)
        return 0

    def step(self, c, name, *args):
        """A command that may meet a stopping fault: the fault is shown (highlighted, with the
        shoe's words for what to do), the operator clears it, and the dealer sends the same
        command again, which finishes the step."""
        from .client import ShoeError

        for _ in range(5):
            try:
                return c.call(name, *args)
            except ShoeError as e:
                if e.fault is None:
                    raise
                self.stops[e.fault] += 1
                self.screen.say("  !! STOPPED during %s: %s" % (name, e.message), alarm=True)
                self.screen.say("  .. the operator clears it; the dealer sends %s again" % name)
        raise RuntimeError("the shoe stopped five times in a row")

    def stop_fault(self, c, most):
        """Now and then, a stopping fault on one of the next step's first `most` cards."""
        r = self.r
        if r.random() < 0.12:
            kind = r.choice(["feed_jam", "feed_jam", "empty", "lid_open", "reader_silent"])
            times = r.choice([1, 2, 255]) if kind == "feed_jam" else 0  # 1, 2: retries clear it
            c.call("sim_fault", kind, r.randint(1, most), times, 0)

    # one hand, with irregularities drawn at random
    def play(self, c, shoe, power_cycle=False):
        r = self.r
        if r.random() < 0.15:
            c.call("sim_fault", r.choice(["double_feed", "boxed"]), r.randint(3, 18), 0, 0)
        if r.random() < 0.3:
            self.stop_fault(c, 3)
            self.step(c, "deal", r.randint(3, 15))
            seat = r.choice(SEATS)
            table = c.status()["table"]
            if table["status"] != "dealing":
                return
            if table["seats"][str(seat)]:
                self.step(c, "report", 1, seat, 1)  # an exposed card
            if c.status()["table"]["status"] != "dealing":
                return
        self.stop_fault(c, 3)
        self.step(c, "deal", 0)
        if self.over(c):
            return
        live = list(SEATS)
        if self.betting(c, live, preflop=True):
            return
        for street in range(3):
            if len(live) < 2:
                break
            if r.random() < 0.12:
                c.call("sim_fault", "double_feed", r.randint(2, 3), 0, 0)
            elif street == 0 and r.random() < 0.08:
                c.call("sim_fault", "no_burn", 0, 0, 0)
            else:
                self.stop_fault(c, 2)
            if power_cycle and street == 1:
                self.screen.say("  ** power cut: the virtual shoe loses power mid-hand **")
                shoe.restart(ready_line="ready", timeout=20)
                c.resume()
                self.screen.say("  ** power back: the events go on where they stopped, the "
                                "stub reshuffled (RP-4) **")
            self.step(c, "street")
            if self.over(c):
                return
            if r.random() < 0.1:
                c.call("report", 2, 0, 0)  # premature: the street is dealt again later
                self.step(c, "street")
                if self.over(c):
                    return
            if r.random() < 0.05:
                c.call("sim_fault", "jam", 0, 0, r.choice([0, 1]))
            if self.betting(c, live):
                return
        c.call("end")

    def over(self, c):
        """Has the hand ended (a misdeal, a fouled deck...)? Its events all in first."""
        c.sync()
        return self.mirror.status != 0

    def betting(self, c, live, preflop=False):
        """One betting round; True if the hand ended in it (then nothing more is sent)."""
        r = self.r
        for seat in list(live):
            if len(live) < 2:
                return
            kind = r.choice(("call", "call", "check", "raise", "fold")) if preflop else \
                r.choice(("check", "check", "bet", "call", "fold"))
            self.step(c, "action", seat, ACTIONS.index(kind))
            if kind == "fold":
                live.remove(seat)
            if self.over(c):
                return True
        return False

    def summary(self, s, wall):
        print()
        print("Summary (seed %d, %.1f s)" % (self.seed, wall))
        print("  hands dealt          %d" % self.args.hands)  # (a figure, not a phrase)
        print("  cards tracked        %s, every card in exactly one place" %
              view.count(self.moves, "card movement"))
        print("  events               %d received in order (%s dropped)" % (
            s["events"], view.count(s["duplicate_events"], "duplicate")))
        print("  frames               %d sent, %d received, %d retried (%d at once on a NAK)" % (
            s["frames_sent"], s["frames_received"], s["retries"] + s["fast_retries"],
            s["fast_retries"]))
        print("  bytes                %d sent, %d received" % (s["bytes_sent"],
                                                             s["bytes_received"]))
        print("  mechanism stopped    %s%s, %s cleared by the retries" % (
            view.count(sum(self.stops.values()), "time"), " (%s)" % ", ".join(
                "%s %d" % kv for kv in sorted(self.stops.items())) if self.stops else "",
            view.count(self.recovered, "jam")))
        print("  procedures applied   %d" % sum(self.procedures.values()))
        for pid, n in self.procedures.most_common():
            p = self.fw.procedures
            num = p.INDEX[pid]
            print("    %3d x %-24s %s" % (n, pid, p.rule(num, self.args.rules)))
