"""The package as a user installs it: the wheel built from this checkout, installed into a fresh
venv, run from a folder outside any checkout. It must carry the firmware, protocol, pin map,
profiles and scenarios it drives (facedown/_repo/, host/facedown/firmware.py) and work
without the checkout: replay (in-process and under MicroPython), the demo, image, sim,
identify and deploy, one version throughout."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zipfile

import pytest

from conftest import ROOT, SCENARIOS

# one xdist worker for the module: its wheel and venv are built once, and `pip wheel` writes
# build/ and host/facedown.egg-info in the checkout, as test_cli_workflows' `pip install -e`
# dry run does (the same group, never at the same time)
pytestmark = pytest.mark.xdist_group("checkout_build")

SCENARIO = "03-premature-flop-tda.json"
with open(os.path.join(ROOT, "firmware", "version.py"), encoding="utf-8") as _f:
    VERSION = re.search(r'^VERSION = "([^"]+)"', _f.read(), re.M).group(1)


def _run(cmd, timeout=300, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    assert proc.returncode == 0, (cmd, proc.stdout[-2000:], proc.stderr[-2000:])
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), ROOT])
    (path,) = [p for p in out.iterdir() if p.suffix == ".whl"]
    assert path.name.startswith("facedown-%s-" % VERSION), path.name
    return path


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """(bin folder of a fresh venv holding the wheel and its dependencies, environment, a
    working folder outside the checkout)."""
    venv = tmp_path_factory.mktemp("venv")
    _run([sys.executable, "-m", "venv", str(venv)])
    bin_ = venv / "bin"
    _run([str(bin_ / "python"), "-m", "pip", "install", "-q", str(wheel)], timeout=600)
    work = tmp_path_factory.mktemp("work")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("FACEDOWN_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(FACEDOWN_HOME=str(work / "home"), PATH=str(bin_) + os.pathsep + env["PATH"])
    return bin_, env, work


def facedown(installed, *argv, timeout=120):
    bin_, env, work = installed
    return _run([str(bin_ / "facedown")] + [str(a) for a in argv], timeout=timeout, env=env,
                cwd=str(work))


def test_the_wheel_holds_what_the_host_drives(wheel):
    """Every file an image may hold, every target's manifest, the profiles and the bundled
    scenarios, under facedown/_repo/ as in the repository (a new firmware folder missing from
    pyproject.toml's packages fails here)."""
    from facedown import build

    names = set(zipfile.ZipFile(wheel).namelist())
    want = [os.path.relpath(src, build.ROOT) for src in build.source_files().values()]
    want += [os.path.relpath(build.manifest_path(t), build.ROOT) for t in build.TARGETS]
    want += [os.path.join("profiles", n) for n in os.listdir(os.path.join(ROOT, "profiles"))]
    want += [os.path.relpath(os.path.join(SCENARIOS, n), ROOT) for n in os.listdir(SCENARIOS)
             if n.endswith(".json")]
    missing = sorted(r for r in want if "facedown/_repo/" + r.replace(os.sep, "/") not in names)
    assert not missing, missing
    assert "facedown/firmware.py" in names and "facedown/schemas/ohh-1.4.schema.json" in names


LOADER_PROBE = """
import sys
from facedown.firmware import NAMESPACE, load
device = load("device")   # imports wire, journal, shoe.*, session, audit... the firmware's way
assert device.__name__ == "facedown.fw.device", device.__name__
assert device.wire is load("wire") and device.wire.__name__ == "facedown.fw.wire"
assert device.C is load("shoe.cards"), "from shoe import cards as C inside the firmware"
import facedown.audit
assert load("audit") is not facedown.audit and load("audit").__name__ == "facedown.fw.audit"
flat = sorted(n for n in sys.modules if n.split(".")[0] in (
    "wire", "shoe", "hal", "device", "journal", "session", "audit", "recorder", "scenario"))
assert not flat, flat
assert not [p for p in sys.path if p.rstrip("/").endswith(("firmware", "protocol"))], sys.path
print(len([n for n in sys.modules if n.startswith(NAMESPACE + ".")]))
"""


def test_the_loader_keeps_the_firmware_in_its_namespace():
    """In a process without the test bootstrap (as the `facedown` command runs), the firmware
    is facedown.fw.*: its own flat imports resolve there, no flat name is global, nothing is
    on sys.path, a host module named like a firmware one stays apart."""
    proc = _run([sys.executable, "-c", LOADER_PROBE], cwd=ROOT)
    assert int(proc.stdout) > 10, proc.stdout


def test_firmware_missing_is_one_line(tmp_path):
    """FACEDOWN_FIRMWARE or FACEDOWN_PROTOCOL naming an empty folder: one line naming the
    module and the folders, and what to do; no traceback."""
    facedown = os.path.join(os.path.dirname(sys.executable), "facedown")
    for var in ("FACEDOWN_FIRMWARE", "FACEDOWN_PROTOCOL"):
        proc = subprocess.run([facedown, "replay", os.path.join(SCENARIOS, SCENARIO),
                               "--in-process"], capture_output=True, text=True, timeout=60,
                              env=dict(os.environ, **{var: str(tmp_path)}))
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert "was not found in" in proc.stderr and str(tmp_path) in proc.stderr, proc.stderr
        assert "hint: reinstall facedown, or set FACEDOWN_FIRMWARE" in proc.stderr


def test_installed_outside_a_checkout(installed):
    bin_, env, work = installed
    out = facedown(installed, "--version").stdout
    assert out == "facedown %s (protocol 1; deploys firmware %s)\n" % (VERSION, VERSION), out
    # the firmware is the wheel's, imported under the namespace: no flat names in the host
    probe = _run([str(bin_ / "python"), "-c",
                  "import sys, facedown.firmware as f, facedown.engine as e; "
                  "e.scenario_module(); e.wire(); print(f.ROOT); "
                  "print(sorted(n for n in sys.modules if n.split('.')[0] in "
                  "('wire', 'shoe', 'scenario', 'device', 'hal')))"],
                 env=env, cwd=str(work)).stdout.splitlines()
    assert probe[0].startswith(str(bin_.parent)) and probe[0].endswith(
        os.path.join("facedown", "_repo")), probe
    assert probe[1] == "[]", probe


def test_replay_from_a_copied_scenario(installed):
    _, _, work = installed
    shutil.copy(os.path.join(SCENARIOS, SCENARIO), work / SCENARIO)
    table = facedown(installed, "replay", SCENARIO, "--in-process").stdout
    assert "premature-flop" in table and "TDA" in table and "order secret" in table, table
    cpython = json.loads(facedown(installed, "replay", SCENARIO, "--json", "--in-process").stdout)
    micro = json.loads(facedown(installed, "replay", SCENARIO, "--json", "--micropython").stdout)
    assert cpython == micro and "premature-flop" in cpython["procedures"], (cpython, micro)


def test_a_two_hand_demo(installed):
    out = facedown(installed, "demo", "--hands", "2", "--seed", "3").stdout
    assert "2 hands of 9-seat hold'em" in out and "Traceback" not in out, out
    assert len(re.findall(r"^hand \d+ ", out, re.M)) == 2, out


def test_image_from_the_wheel(installed):
    _, _, work = installed
    out = facedown(installed, "image", "--out", "img").stdout
    assert "firmware %s" % VERSION in out and "(armv6m)" in out, out
    manifest = json.loads((work / "img" / "manifest.json").read_text())
    assert manifest["firmware"] == VERSION
    assert (work / "img" / "device.mpy").exists() and (work / "img" / "main.py").exists()


@pytest.mark.slow
def test_sim_identify_and_deploy(installed):
    """`facedown sim` from the wheel; its identify reports the version --version prints; a
    maintenance login and `facedown deploy` onto it."""
    bin_, env, work = installed
    proc = subprocess.Popen([str(bin_ / "facedown"), "sim", "--flash", "flash"], cwd=str(work),
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    try:
        port, lines, end = None, [], time.monotonic() + 60
        while port is None and time.monotonic() < end:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            m = re.search(r" on (\S+) ", line)
            port = m.group(1) if m and line.startswith("virtual shoe") else None
        assert port, lines
        out = facedown(installed, "--port", port, "identify").stdout
        assert "firmware %s, protocol 1" % VERSION in out, out
        facedown(installed, "--port", port, "login", "--role", "maintenance")
        out = facedown(installed, "--port", port, "deploy", timeout=300).stdout
        assert re.search(r"deployed firmware %s to .*verified" % re.escape(VERSION), out), out
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
