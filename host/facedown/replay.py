"""`facedown replay SCENARIO.json`: where every card went, and the procedures applied.

By default the scenario runs through a fresh virtual shoe (the real firmware under the
MicroPython unix port, over the serial protocol); `--in-process` runs the engine in this
process, `--micropython` runs it in-process under the unix port, `--port` on a given shoe."""

import json

from . import engine, view
from .errors import UserError


def add_command(sub):
    p = sub.add_parser("replay", help="replay a scenario file and show the table",
                       description="Replay a hand described in a scenario file and show where "
                                   "every card went. Runs through a fresh virtual shoe unless "
                                   "told otherwise; the hand record is the same every way.")
    p.add_argument("scenario", help="scenario file (JSON)")
    p.add_argument("--json", action="store_true", help="print the hand record as JSON")
    p.add_argument("--phh", action="store_true", help="print the hand as PHH")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--in-process", action="store_true",
                     help="run the engine in this process instead of a virtual shoe")
    how.add_argument("--micropython", action="store_true",
                     help="run the engine in-process under the MicroPython unix port")
    p.set_defaults(func=run)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise UserError("cannot read %s: %s" % (path, e.strerror))
    except ValueError as e:
        raise UserError("%s is not valid JSON: %s" % (path, e))


def _rejected(message):
    return UserError("scenario rejected: %s" % message,
                     hint="see docs/engine.md for the scenario format")


def replay(scn, micropython=False):
    """The hand record of a scenario dict, from the engine in-process (or under MicroPython)."""
    if micropython:
        rec = engine.run_micropython([scn])[0]
    else:
        mod = engine.scenario_module()
        try:
            rec = mod.run(scn)
        except mod.ScenarioError as e:
            rec = {"error": str(e)}
    if "error" in rec:
        raise _rejected(rec["error"])
    return rec


def replay_on_shoe(scn, port=None):
    """The hand record of a scenario played on the shoe at `port`, or on a fresh virtual shoe."""
    from .client import connect_port
    from .shoereplay import replay as play
    from .virtualshoe import VirtualShoe

    mod = engine.scenario_module()
    shoe = None
    try:
        if port is None:
            shoe = VirtualShoe()
            shoe.start(ready_line="ready", timeout=20)
            client = shoe.connect(timeout=30)
        else:
            client = connect_port(port, timeout=30)
        try:
            return play(client, scn, shoe)
        except mod.ScenarioError as e:
            raise _rejected(str(e))
        finally:
            client.close()
    finally:
        if shoe is not None:
            shoe.close()


def run(args):
    scn = load(args.scenario)
    if args.in_process or args.micropython:
        rec = replay(scn, micropython=args.micropython)
    else:
        rec = replay_on_shoe(scn, args.port)
    if args.phh:
        from . import phh

        print(phh.dumps(rec), end="")
    elif args.json:
        print(json.dumps(rec, indent=1))
    else:
        print(view.render(rec, title=scn.get("title")))
    return 0
