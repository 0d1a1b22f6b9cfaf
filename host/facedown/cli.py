"""The `facedown` command: one subcommand per module, each registering itself."""

import argparse
import os
import sys

from . import __version__
from .errors import UserError

# Each module here has add_command(subparsers); its parser sets `func(args) -> int`.
COMMAND_MODULES = ("replay", "demo", "pots", "sim", "commands", "profiles", "history",
                   "serve", "ledger", "room",
                   "deploy", "certify")
# The commands that never talk to a shoe: every other one takes --port (before or after its
# name, as --debug).
NO_PORT = ("certify", "demo", "room", "image", "pots", "profiles", "sim", "keys")
PORT_HELP = "the shoe's serial port (default: $FACEDOWN_PORT)"
DEBUG_HELP = "show tracebacks on errors"


class _Commands:
    """The subparsers, giving each command the global options too (argparse.SUPPRESS: given
    after the command's name they count, else the ones before it stand)."""

    def __init__(self, sub):
        self.sub = sub
        self.debug = argparse.ArgumentParser(add_help=False)
        self.debug.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                                help=DEBUG_HELP)
        self.port = argparse.ArgumentParser(add_help=False)
        self.port.add_argument("--port", default=argparse.SUPPRESS, help=PORT_HELP)

    def add_parser(self, name, **kwargs):
        parents = [self.debug] + ([] if name in NO_PORT else [self.port])
        kwargs["parents"] = list(kwargs.get("parents", ())) + parents
        return self.sub.add_parser(name, **kwargs)


def version_line():
    """What `facedown --version` says: this host's version, the protocol's frame format it
    speaks and the firmware version of the image it deploys (what to compare with a shoe's
    `identify`). Host and firmware are one release: firmware/version.py, unless
    FACEDOWN_FIRMWARE points at other firmware."""
    from .engine import FIRMWARE, wire
    from .firmware import version

    try:
        protocol = wire().PROTOCOL_VERSION
    except UserError:  # no firmware there: the command run says so, in one line
        protocol = "?"
    return "facedown %s (protocol %s; deploys firmware %s)" % (
        __version__, protocol, version(FIRMWARE))


class Parser(argparse.ArgumentParser):
    """Misuse is one line, as every other error (docs/guide.md, Troubleshooting), with where
    to look: not argparse's usage block."""

    def error(self, message):
        self.exit(2, "facedown: error: %s\nhint: `%s --help` shows the usage\n" % (
            message, self.prog))


def build_parser():
    parser = Parser(
        prog="facedown",
        description="Drive, watch and replay the Facedown dealing shoe.",
    )
    parser.add_argument("--version", action="version", version=version_line())
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    parser.add_argument("--port", default=os.environ.get("FACEDOWN_PORT"), help=PORT_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    import importlib

    commands = _Commands(sub)
    for name in COMMAND_MODULES:
        importlib.import_module("facedown." + name).add_command(commands)
    return parser


def main(argv=None):
    try:
        parser = build_parser()  # (its modules import the firmware's tables: they may be missing)
    except UserError as exc:
        if "--debug" in (sys.argv[1:] if argv is None else argv):
            raise
        return _refused(exc)
    args = parser.parse_args(argv)
    try:
        return args.func(args) or 0
    except UserError as exc:
        if args.debug:
            raise
        return _refused(exc)
    except BrokenPipeError:
        # the reader went away (`facedown ... | head`): stop quietly, as other commands do
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except OSError:
            pass
        return 141  # 128 + SIGPIPE, what a shell shows for a command cut off by its reader


def _refused(exc):
    """A UserError as the user sees it: one line, and the hint."""
    print("facedown: error: %s" % exc, file=sys.stderr)
    if exc.hint:
        print("hint: %s" % exc.hint, file=sys.stderr)
    return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
