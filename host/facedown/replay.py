"""`facedown replay SCENARIO.json`: where every card went, and the procedures applied."""

import json

from . import engine, view
from .errors import UserError


def add_command(sub):
    p = sub.add_parser("replay", help="replay a scenario file and show the table",
                       description="Replay a hand described in a scenario file and show where "
                                   "every card went.")
    p.add_argument("scenario", help="scenario file (JSON)")
    p.add_argument("--json", action="store_true", help="print the hand record as JSON")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--micropython", action="store_true",
                     help="run the engine under the MicroPython unix port")
    how.add_argument("--in-process", action="store_true",
                     help="run the engine in this process (the default for now)")
    p.set_defaults(func=run)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise UserError("cannot read %s: %s" % (path, e.strerror))
    except ValueError as e:
        raise UserError("%s is not valid JSON: %s" % (path, e))


def replay(scn, micropython=False):
    """The hand record of a scenario dict (raises UserError for a bad scenario)."""
    if micropython:
        rec = engine.run_micropython([scn])[0]
    else:
        mod = engine.scenario_module()
        try:
            rec = mod.run(scn)
        except mod.ScenarioError as e:
            rec = {"error": str(e)}
    if "error" in rec:
        raise UserError("scenario rejected: %s" % rec["error"],
                        hint="see docs/engine.md for the scenario format")
    return rec


def run(args):
    scn = load(args.scenario)
    rec = replay(scn, micropython=args.micropython)
    if args.json:
        print(json.dumps(rec, indent=1))
    else:
        print(view.render(rec, title=scn.get("title")))
    return 0
