"""A scenario file played through a shoe (virtual or real) over the protocol: the same steps the
in-process replay applies, sent as commands; the hand record rebuilt from the shoe's events."""

import json

from .client import ShoeError
from .engine import scenario_module, wire
from .mirror import Mirror

W = wire()
REPORT = {"expose": 1, "premature": 2, "misdeal": 3}
JAM_FLAGS = {"muck": 1, "burns": 2}
SIM_KIND = {"jam": "feed_jam"}  # the mechanism's jam on the wire (its "jam" is RP-4's)


class Run:
    """One scenario on a connected client."""

    def __init__(self, client, scn, shoe=None, discards=None):
        self.mod = scenario_module()
        self.discards = discards  # (step index, {seat: codes}, record so far) -> {seat: codes}
        self.client = client
        self.scn = scn
        self.shoe = shoe  # the VirtualShoe, for power cuts
        self.cut_pending = None  # the boot count when a delayed power cut was armed
        self.args, self.steps = self.mod.check(scn)  # the same checks as in-process
        game, seats, button, rules, house, order, seed = self.args
        self.mirror = Mirror(game, seats, button, rules)
        self.hand_no = None
        self.chained = client.on_event  # whoever listened before keeps hearing every event
        self.stops = 0  # stopping faults armed and not met yet

    def on_event(self, number, hand, entry):
        if hand == self.hand_no:
            self.mirror.apply(entry)
        if self.chained is not None:
            self.chained(number, hand, entry)

    def setup(self):
        game, seats, button, rules, house, order, seed = self.args
        c = self.client
        mask = 0
        for s in seats:
            mask |= 1 << s
        c.sync()  # settle any earlier events before this hand's
        if self.shoe is not None:  # first: a cut an earlier run left armed would hit end/config
            c.call("sim_fault", "power_cut", 0, 0, 0)
        try:
            c.call("end")  # a hand an earlier scenario left unfinished
        except ShoeError:
            pass
        c.call("config", game, mask, button or 0, rules, json.dumps(house))
        if order is not None or seed is not None:
            c.call("sim_deck", bytes(order or ()), 1 if seed is not None else 0, seed or 0)
        c.call("hand", button or 0)
        self.hand_no = c.call("status", 0xFFFF)[0]

    def step(self, i):
        step = self.steps[i]
        c = self.client
        do = step[0]
        if do == "deal":
            c.call("deal", step[1] or 0)
        elif do in ("street", "end"):
            c.call(do)
        elif do == "draw":
            chosen = step[1]
            if self.discards is not None:  # the cards named, as the shoe dealt this hand
                c.sync()
                chosen = self.discards(i, chosen, self.mirror.record())
            c.call("draw", W.pack_discards(sorted(chosen.items())))
        elif do == "action":
            kind = scenario_module().ACTIONS.index(step[2])
            if step[5] is not None:  # the chips put out: the chips command
                c.call("chips", step[1], kind | (0x80 if step[4] else 0),
                       W.NO_AMOUNT if step[3] is None else step[3], *step[5])
            elif step[3] is None and not step[4]:
                c.call("action", step[1], kind)
            else:  # an amount, or out of turn: a table that is bet
                c.call("bet", step[1], kind | (0x80 if step[4] else 0),
                       W.NO_AMOUNT if step[3] is None else step[3])
        elif do == "stacks":
            c.call("stacks", W.pack_stacks(step[1]))
        elif do == "expose":
            c.call("report", REPORT[do], step[1], step[2])
        elif do in ("premature", "misdeal"):
            c.call("report", REPORT[do], 0, 0)
        elif do == "cut":
            self.power_cut(step[1])
        elif do == "jam":
            flags = 4 if step[2] else 0
            for what in step[1]:
                flags |= JAM_FLAGS[what]
            c.call("sim_fault", "jam", 0, 0, flags)
        else:  # a mechanism fault for the next step that dispenses
            if step[1] in self.mod.STOPS and (step[1] != "jam" or step[3] > self.jam_retries()):
                self.stops += 1
            c.call("sim_fault", SIM_KIND.get(step[1], step[1]), step[2], step[3], 0)

    def jam_retries(self):
        """How many sticks the mechanism's retries clear (the pin map's, as the shoe's)."""
        return self.mod.SimMech().figures().jam_retries

    def power_cut(self, after_writes):
        if self.shoe is None:
            raise self.mod.ScenarioError("a power cut needs a virtual shoe (simulator only)")
        if after_writes:  # during the next step's flash writes: the shoe dies mid-command
            self.client.call("sim_fault", "power_cut", after_writes, 0, 0)
            self.client.on_silence = self.revive
            self.cut_pending = self.shoe.boots
        else:
            self.shoe.restart(ready_line="ready", timeout=20)
            self.stops = 0  # the mechanism's armed faults went with the power
            self.client.resume()

    def revive(self):
        """The shoe went quiet: if its power went, bring it back and pick up the stream."""
        if self.shoe.alive():
            return
        self.client.on_silence = None
        self.shoe.restart(ready_line="ready", timeout=20)
        self.stops = 0
        self.client.resume()

    def run(self):
        game, seats, button, rules, house, order, seed = self.args
        if self.shoe is not None and seed is not None:
            # after a power cut the shoe's random source is the simulator's, seeded as the
            # in-process run seeds it
            env = dict(self.shoe.env)
            opts = [o for o in env.get("FACEDOWN_SIM", "").split(",") if o and
                    not o.startswith("seed=")]
            env["FACEDOWN_SIM"] = ",".join(opts + ["seed=%d" % seed])
            self.shoe.env = env
        self.setup()
        armed = False
        for i in range(len(self.steps)):
            do = self.steps[i][0]
            try:
                self.step(i)
            except ShoeError as e:
                if e.code != W.MECHANISM or not self.stops:
                    raise self.mod.ScenarioError("step %d (%s): %s" % (
                        i + 1, self.scn["steps"][i]["do"], e.message))
                # the armed stop: the shoe stopped (the event is logged); the next step repeats
                self.stops -= 1
                continue
            if do == "fault":
                armed = True
            elif do == "cut":
                pass  # not a step that deals (a restart forgets what was armed: see below)
            elif armed:
                pending, feeds = self.client.call("sim_fault", "pending", 0, 0, 0)
                if feeds and pending:
                    raise self.mod.ScenarioError(
                        "step %d (%s): a fault armed for it was not reached (%d cards "
                        "dispensed)" % (i + 1, do, feeds))
                armed = bool(pending)
        if armed:
            raise self.mod.ScenarioError("a fault is armed after the last step: no step "
                                         "dispensed its card")
        if self.cut_pending is not None and self.shoe.boots == self.cut_pending:
            self.client.on_silence = None
            raise self.mod.ScenarioError("a power cut is armed after the last step: the steps "
                                         "after it wrote fewer journal records than "
                                         "after_writes")
        self.client.sync()
        rec = self.mirror.record()
        if "betting" in (self.scn.get("house") or {}):  # the shoe's own view of the chips
            rec["betting"] = (self.client.status().get("table") or {}).get("betting")
        return rec


def replay(client, scn, shoe=None, discards=None):
    """The hand record of a scenario played on the shoe behind `client` (`shoe`: the
    VirtualShoe, needed for power cuts; `discards`: chooses each draw's cards from the hand so
    far, for a shoe that dealt from its own shuffle)."""
    run = Run(client, scn, shoe, discards)
    client.on_event = run.on_event
    try:
        return run.run()
    finally:
        client.on_event = run.chained
        client.on_silence = None
