"""The documented workflows as a user meets them: `facedown` commands in subprocesses against
a real `facedown sim` (issue 16)."""

import os
import re

import pytest

from cli import Sim, run
from facedown.virtualshoe import VirtualShoe


def ok(proc):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_deploy_verify_identify_in_a_row_on_one_sim(tmp_path):
    with Sim("--flash", tmp_path / "flash") as sim:
        out = ok(run("--port", sim.port, "verify", "--no-reset"))
        # the sim's files are the image `facedown image` builds: wire.mpy included
        assert "MISMATCH" not in out and re.search(r"OK: \d+ match, 0 mismatch", out), out
        ok(run("--port", sim.port, "verify"))  # the reset: the sim boots again
        assert "deployed firmware" in ok(run("--port", sim.port, "deploy"))
        assert "OK:" in ok(run("--port", sim.port, "verify"))
        assert "device %s" % sim.device in ok(run("--port", sim.port, "identify"))
        refused = run("--port", sim.port, "provision")
        assert refused.returncode != 0 and "already has its key" in refused.stderr
        assert "device %s" % sim.device in ok(run("--port", sim.port, "identify"))
        assert sim.alive()


def test_a_sim_restarted_on_its_folder_boots_what_is_installed_there(tmp_path):
    flash = tmp_path / "flash"
    path = os.path.join(flash, "device.py")
    # a shoe whose folder holds another firmware (as a deploy of an older release leaves it)
    with VirtualShoe(flash=flash, compile=False) as s:
        s.stop()
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(re.sub(r'FIRMWARE_VERSION = "[^"]+"', 'FIRMWARE_VERSION = "0.0.1-old"', text))
    with Sim("--flash", flash) as sim:
        out = ok(run("--port", sim.port, "identify"))
        assert "firmware 0.0.1-old" in out, out  # not the checkout's copied over it
        assert "booted what is installed there" in sim.lines[0]
