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


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    """One `facedown sim` for the misuse tests (a flash folder of its own)."""
    with Sim("--flash", tmp_path_factory.mktemp("misuse") / "flash") as s:
        yield s


def err(proc, code=None):
    """The one line (and hint) a refused command prints; no traceback."""
    assert proc.returncode != 0, proc.stdout
    if code is not None:
        assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stderr


def test_global_options_after_the_command(sim):
    assert "device %s" % sim.device in ok(run("identify", "--port", sim.port))
    assert "session" in ok(run("login", "--port", sim.port, "--role", "maintenance"))
    out = ok(run("config", "--port", sim.port, "--game", "holdem", "--seats", "1-6",
                 "--button", "6", "--debug"))
    assert "holdem" in out
    # every command that talks to a shoe lists --port in its help
    for command in ("replay", "deploy", "verify", "history", "status", "watch", "deal"):
        assert "--port PORT" in ok(run(command, "--help")), command
    assert "--port" not in ok(run("pots", "--help"))


@pytest.mark.parametrize("argv, says", [
    (("config", "--game", "holdem", "--seats", "9-1"), "9-1 runs backwards"),
    (("config", "--game", "holdem", "--seats", "1-6", "--button", "0"), "seats are 1..10, not 0"),
    (("config", "--game", "holdem", "--seats", "1-6", "--button", "9"),
     "--button 9 is not one of the seats (1,2,3,4,5,6)"),
    (("config", "--game", "holdem", "--seats", "0-3"), "seat 0: seats are 1..10"),
    (("report", "exposed", "--seat", "1", "--card", "0"), "counts from 1"),
    (("report", "exposed", "--seat", "1"), "report exposed needs --card K"),
    (("report", "premature", "--seat", "1"), "takes no --seat or --card"),
    (("deal", "--cards", "0"), "counts from 1"),
    (("history", "--last", "0"), "a number 1 or more, not 0"),
    (("action", "0", "call"), "seats are 1..10, not 0"),
])
def test_misuse_names_the_real_mistake(sim, argv, says):
    assert says in err(run("--port", sim.port, *argv))


def test_misuse_without_a_shoe(tmp_path):
    assert "keys derive needs --out FILE" in err(run("keys", "derive", "--device", "x"))
    e = err(run("keys", "derive", "--device", "sim-none", "--out", tmp_path / "k"))
    assert "no key for sim-none in the key store" in e and "missing" not in e
    assert "keys derive needs the shoe's key" in err(run("keys", "derive", "--out", tmp_path / "k"))
    assert "no bundled scenario matches 'nosuch'" in err(run("demo", "--scenarios", "nosuch"))
    assert "a number 1 or more, not 0" in err(run("demo", "--hands", "0"))
    assert "milliseconds, 0 or more" in err(run("demo", "--feed-ms", "-5"))
    assert "goes with --scenarios" in err(run("demo", "premature"))
    assert "--deck has 4 cards" in err(run("sim", "--deck", "AhKd7c2s"))
    assert "'Xx' is not a card" in err(run("sim", "--deck", "AhXx"))
    assert "--feed-ms is a time in milliseconds" in err(run("sim", "--feed-ms", "-5"))
    e = err(run("sim", "--flash", "/etc/passwd"))
    assert "--flash /etc/passwd is a file" in e
    scn = tmp_path / "nobutton.json"
    scn.write_text('{"game": "holdem", "seats": [1, 2, 3], "steps": [{"do": "deal"}]}')
    e = err(run("replay", scn, "--in-process"))
    assert 'holdem needs "button"' in e and "None" not in e


def test_demo_scenarios_takes_a_bare_word(capsys):
    out = ok(run("demo", "--scenarios", "premature-turn"))
    m = re.search(r"(\d+) scenarios replayed", out)
    assert m and int(m.group(1)) >= 2, out


def test_a_session_is_named_as_the_user_s_command(sim):
    run("--port", sim.port, "logout")
    e = err(run("--port", sim.port, "deal"))
    assert e.startswith("facedown: error: deal: deal needs a table session"), e
    assert "login --role table" in e and "--port %s" % sim.port in e
    assert "sim_*" not in e and "PORT" not in e


def test_piping_into_head_is_quiet(sim):
    import subprocess

    from cli import FACEDOWN, env

    for command in ("demo --scenarios '0*'", "--port %s status" % sim.port):
        p = subprocess.run("%s %s | head -1" % (FACEDOWN, command), shell=True,
                           executable="/bin/bash", capture_output=True, text=True, env=env())
        assert p.stdout.strip() and "Error" not in p.stderr, p.stderr
