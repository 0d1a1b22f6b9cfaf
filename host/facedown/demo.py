"""`facedown demo`: the bundled example scenarios (one per procedure), each replayed on the
engine with the table shown after it."""

import glob
import os

from . import engine, view
from .replay import load, replay


def add_command(sub):
    p = sub.add_parser("demo", help="replay the bundled example scenarios")
    p.add_argument("--micropython", action="store_true",
                   help="run the engine under the MicroPython unix port")
    p.add_argument("pattern", nargs="?", default="*", help="only scenarios whose name matches")
    p.set_defaults(func=run)


def scenario_files(pattern="*"):
    folder = os.path.join(engine.ROOT, "tests", "scenarios")
    return sorted(glob.glob(os.path.join(folder, pattern + ".json")))


def run(args):
    files = scenario_files(args.pattern)
    procedures = set()
    for path in files:
        scn = load(path)
        rec = replay(scn, micropython=args.micropython)
        procedures.update(rec["procedures"])
        name = os.path.basename(path)
        print("=" * 78)
        print(view.render(rec, title="%s  %s" % (name, scn.get("title", ""))))
    print("=" * 78)
    print("%d scenarios replayed, %d distinct procedures applied" % (len(files), len(procedures)))
    return 0
