"""The `facedown` command: one subcommand per module, each registering itself."""

import argparse
import os
import sys

from . import __version__
from .errors import UserError

# Each module here has add_command(subparsers); its parser sets `func(args) -> int`.
COMMAND_MODULES = ("replay", "demo", "pots", "sim", "commands", "profiles", "history",
                   "serve", "ledger",
                   "deploy", "certify")


def build_parser():
    parser = argparse.ArgumentParser(
        prog="facedown",
        description="Drive, watch and replay the Facedown dealing shoe.",
    )
    parser.add_argument("--version", action="version", version="facedown " + __version__)
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    parser.add_argument("--port", default=os.environ.get("FACEDOWN_PORT"),
                        help="the shoe's serial port (default: $FACEDOWN_PORT)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    import importlib

    for name in COMMAND_MODULES:
        importlib.import_module("facedown." + name).add_command(sub)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args) or 0
    except UserError as exc:
        if args.debug:
            raise
        print("facedown: error: %s" % exc, file=sys.stderr)
        if exc.hint:
            print("hint: %s" % exc.hint, file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
