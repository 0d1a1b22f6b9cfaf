"""A scenario file played through a shoe (virtual or real) over the protocol: the same steps the
in-process replay applies, sent as commands; the hand record rebuilt from the shoe's events."""

import json

from .client import ShoeError
from .engine import scenario_module, wire
from .mirror import Mirror

W = wire()
REPORT = {"expose": 1, "premature": 2, "misdeal": 3}
JAM_FLAGS = {"muck": 1, "burns": 2}


class Run:
    """One scenario on a connected client."""

    def __init__(self, client, scn):
        self.mod = scenario_module()
        self.client = client
        self.scn = scn
        self.args, self.steps = self.mod.check(scn)  # the same checks as in-process
        game, seats, button, rules, house, order, seed = self.args
        self.mirror = Mirror(game, seats, button, rules)
        self.hand_no = None
        client.on_event = self.on_event

    def on_event(self, number, hand, entry):
        if hand == self.hand_no:
            self.mirror.apply(entry)

    def setup(self):
        game, seats, button, rules, house, order, seed = self.args
        c = self.client
        mask = 0
        for s in seats:
            mask |= 1 << s
        c.sync()  # settle any earlier events before this hand's
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
            c.call("draw", W.pack_discards(sorted(step[1].items())))
        elif do == "action":
            c.call("action", step[1], ("check", "call", "bet", "raise", "fold",
                                       "allin").index(step[2]))
        elif do == "expose":
            c.call("report", REPORT[do], step[1], step[2])
        elif do in ("premature", "misdeal"):
            c.call("report", REPORT[do], 0, 0)
        elif do == "jam":
            flags = 4 if step[2] else 0
            for what in step[1]:
                flags |= JAM_FLAGS[what]
            c.call("sim_fault", "jam", 0, 0, flags)
        else:  # a mechanism fault for the next step that dispenses
            c.call("sim_fault", step[1], step[2], step[3], 0)

    def run(self):
        self.setup()
        armed = False
        for i in range(len(self.steps)):
            do = self.steps[i][0]
            try:
                self.step(i)
            except ShoeError as e:
                raise self.mod.ScenarioError("step %d (%s): %s" % (
                    i + 1, self.scn["steps"][i]["do"], e.message))
            if do == "fault":
                armed = True
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
        self.client.sync()
        return self.mirror.record()


def replay(client, scn):
    """The hand record of a scenario played on the shoe behind `client`."""
    return Run(client, scn).run()
