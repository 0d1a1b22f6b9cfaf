# The shoe's front panel (the reference hardware's dealer buttons and floor key, pinmap.json):
# a press runs the host's commands for it, as the table's role (the dealer is at the table),
# chosen from the state of the hand. Nothing here touches a pin: the hardware layer reports
# debounced presses (hal.presses), the floor key (hal.floor_key) and sounds the answer
# (hal.signal); the device runs the commands (Device.execute, as a host's would run).
#
#   DEAL       no hand in progress: the next hand (the button moves on) and its initial deal;
#              the initial deal not complete: the rest of it; complete: the hand on the table
#              ends, the next hand is dealt (a hand ends at DEAL, as a dealer pushes the pot)
#   BURN       the next street (burn and turn); draw games draw at the console (discards)
#   EXPOSED    the last card dealt down to a seat was exposed (TDA RP-2 / 35: the procedure
#              follows from the hand's state, as for the host's report)
#   PREMATURE  the last street came out too soon (TDA RP-5, Rule 39 for a flop)
#   MISDEAL    a misdeal, only with the floor key turned (the floor's ruling, TDA 35)
#
# A step a mechanism fault stopped is finished by the button of that step (the same command
# again); any other press is refused until then, as the host's would be.
import wire
from hal.base import BUTTONS  # noqa: F401  (panel.BUTTONS: the buttons a press names)
from play import CommandError as Refused  # a press refused: the wire's code, the message


# the button that finishes each command a stopping fault stopped (Hand.stopped_command)
_FINISHES = {"deal": "deal", "street": "burn", "report": "exposed", "premature": "premature"}


def plan(device, button, floor_key):
    """The commands a press runs, [(name, args)]; raises Refused when the press does nothing."""
    why = device.local_refusal("deal")  # no key yet, or locked: no button does anything
    if why is not None:
        raise why
    h = device.hand
    live = h is not None and h.in_progress()
    it = h.stopped_command() if live else None
    if it is not None:  # a stopped step: its own button finishes it, nothing else runs
        if _FINISHES.get(it[0]) != button:
            raise Refused(wire.WRONG_STATE, "the %s was stopped by a mechanism fault: %s" % (
                it[0], "press %s again" % _FINISHES[it[0]].upper() if it[0] in _FINISHES
                else "finish it at the console"))
        if button == "exposed":
            return [("report", (1, it[1], it[2]))]
    if button == "deal":
        if it is not None or (live and not h.initial_complete()):
            return [("deal", (0,))]
        # a new hand, which ends the one on the table once it is made: a hand the shoe
        # refuses leaves that one as it was (a refused press changes nothing)
        return [("hand", (0, live)), ("deal", (0,))]
    if not live:
        raise Refused(wire.WRONG_STATE, "no hand in progress: DEAL starts one")
    if button == "burn":
        return [("street", ())]
    if button == "exposed":
        where = h.can_report_exposed()
        if where is None:
            raise Refused(wire.WRONG_STATE, "no card dealt down to a seat to report exposed")
        return [("report", (1, where[0], where[1]))]
    if button == "premature":
        return [("report", (2, 0, 0))]
    if button == "misdeal":
        if not floor_key:
            raise Refused(wire.DENIED, "a misdeal needs the floor key turned")
        return [("report", (3, 0, 0))]
    raise Refused(wire.BAD_ARGUMENT, "no button %r" % (button,))


def press(device, button, floor_key=False):
    """Run a press: (0, "") when every command of its plan ran, else (the wire status code of
    the first that did not, its message). The answer is sounded and counted."""
    code, message = wire.OK, ""
    try:
        for name, args in plan(device, button, floor_key):
            code, message = device.local(name, args, "panel+floor" if floor_key else "panel")
            if code != wire.OK:
                break
    except Refused as e:
        code, message = e.code, e.message
    counts = device.counts.setdefault("panel", {})
    key = button if code == wire.OK else "refused"
    counts[key] = counts.get(key, 0) + 1
    device.hal.log("panel: %s: %s" % (button, message or "ok"))
    device.hal.signal(code == wire.OK)
    return code, message
