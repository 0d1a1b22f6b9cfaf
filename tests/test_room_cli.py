"""`facedown room` through a subprocess: a short run of a room (a virtual shoe with the real
firmware and 20 simulated shoes) ends with its counts; without Mosquitto, one line saying how
to install it, exit status 2, no traceback; bad counts refused in one line."""

import json
import os
import subprocess
import sys
import urllib.request

import pytest

from services import mosquitto

FACEDOWN = [sys.executable, "-m", "facedown.cli"]


def facedown(*args, env=None, timeout=120):
    return subprocess.run(FACEDOWN + list(args), capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ, **(env or {})))


@pytest.mark.slow
def test_a_short_room_deals_and_every_event_reaches_the_ledger_once(tmp_path):
    mosquitto()
    names = tmp_path / "names.json"
    names.write_text(json.dumps({"tables": {"light-001": {"table": "Rail 1", "dealer": "Ann"}}}))
    proc = subprocess.Popen(FACEDOWN + ["room", "--real", "1", "--light", "20", "--rate", "4",
                                        "--seconds", "12", "--names", str(names),
                                        "--dir", str(tmp_path / "room")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("floor page: "):
            url = line.split()[-1]
            break
    view = json.loads(urllib.request.urlopen(url + "floor?since=-1", timeout=10).read())
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    counts = json.loads(out.strip().splitlines()[-1])
    assert counts["tables"] == 21
    assert counts["real_hands"] >= 1
    assert counts["offered"] > 100
    # the live events of every table reached the ledger (the real one's too), once each
    assert counts["lost"] == 0
    assert counts["events"] > counts["offered"]
    assert any(t["table"] == "Rail 1" and t["dealer"] == "Ann" for t in view["tables"])
    assert os.path.exists(tmp_path / "room" / "room.sqlite")


def test_without_mosquitto_one_line_says_how_to_install_it(tmp_path):
    r = facedown("room", "--seconds", "1", env={"FACEDOWN_MOSQUITTO": str(tmp_path / "none")})
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "apt-get install mosquitto" in r.stderr
    assert "Traceback" not in r.stderr


def test_bad_counts_are_refused_in_one_line():
    r = facedown("room", "--light", "-3")
    assert r.returncode == 2 and "--light takes a count" in r.stderr
    assert "Traceback" not in r.stderr
