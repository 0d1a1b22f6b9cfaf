"""The virtual shoe: the MicroPython unix port on the device end of a NullModem, with power cuts
and power cycles that keep the host's port path.  Uses tests/data/echo_main.py as main.py (the
real firmware's main.py is exercised elsewhere)."""

import os
import sys
import time

import pytest
import serial

from facedown import virtualshoe
from facedown.build import SIM, manifest_files
from facedown.virtualshoe import VirtualShoe, find_micropython

from conftest import ROOT
ECHO = os.path.join(ROOT, "tests", "data", "echo_main.py")
ALL_BYTES = bytes(range(256))


def read_exactly(ser, n, timeout=5.0):
    deadline = time.monotonic() + timeout
    buf = bytearray()
    while len(buf) < n and time.monotonic() < deadline:
        buf += ser.read(n - len(buf))
    return bytes(buf)


def echo_ok(ser, payload):
    ser.write(payload)
    return read_exactly(ser, len(payload)) == payload


@pytest.fixture
def shoe():
    s = VirtualShoe(main=ECHO, ready_line="ready", ready_timeout=10)
    yield s
    s.close()


def test_start_echoes_every_byte_and_logs_ready(shoe):
    shoe.start()
    assert shoe.alive()
    with serial.Serial(shoe.port, 115200, timeout=1) as s:
        assert echo_ok(s, ALL_BYTES * 4)
        assert echo_ok(s, b"\x03\r\n\x7e\x00")
    assert "ready" in shoe.log()
    assert "ready" in shoe.log_tail(5)
    assert shoe.port == shoe.modem.b_path and shoe.device_port == shoe.modem.a_path


def test_restart_is_a_new_process_on_the_same_port(shoe):
    shoe.start()
    port, pid = shoe.port, shoe.pid
    with serial.Serial(port, 115200, timeout=1) as s:
        assert echo_ok(s, b"before")
        shoe.restart()
        assert shoe.alive() and shoe.pid != pid and shoe.port == port
        assert echo_ok(s, b"after, same open port")
    with serial.Serial(port, 115200, timeout=1) as s:  # and a fresh host connection
        assert echo_ok(s, b"reconnected")
    assert shoe.boots == 2
    assert shoe.log(this_boot=False).count(virtualshoe.BOOT_MARK.decode().strip()) == 2
    assert shoe.log(this_boot=False).count("ready") == 2


def test_stop_is_a_power_cut(shoe):
    shoe.start()
    with serial.Serial(shoe.port, 115200, timeout=0.3) as s:
        assert echo_ok(s, b"x")
        assert shoe.stop() == -9
        assert not shoe.alive() and shoe.returncode == -9
        s.write(b"sent while off")  # lost with the power
        time.sleep(0.1)
        assert s.read(100) == b""
        shoe.start()
        assert echo_ok(s, b"fresh")
        time.sleep(0.1)
        assert s.read(100) == b""  # nothing from before the cut came back


@pytest.mark.parametrize("compiled", [True, False], ids=["mpy", "source"])
def test_flash_holds_firmware_tree_without_caches(tmp_path, compiled):
    flash = tmp_path / "flash"
    s = VirtualShoe(flash=flash, main=ECHO, compile=compiled)
    try:
        files = {os.path.relpath(os.path.join(d, f), flash) for d, _, fs in os.walk(flash) for f in fs}
        expected = set(manifest_files(SIM))  # the virtual shoe's image (firmware/targets)
        assert "wire.py" in expected and "hal/sim.py" in expected
        if compiled:
            expected = {f if f == "main.py" or f.endswith(".json") else f[:-3] + ".mpy"
                        for f in expected}
        expected.add("main.py")
        assert expected <= files
        assert not any(f.startswith("targets") or f.startswith("hal/rp2") for f in files)
        assert not any("__pycache__" in f or f.endswith(".pyc") for f in files)
        with open(flash / "main.py") as f, open(ECHO) as g:
            assert f.read() == g.read()
    finally:
        s.close()
    assert flash.is_dir()  # a given flash folder is kept


def test_temporary_flash_removed_on_close():
    s = VirtualShoe(main=ECHO, sources=[])
    folder = s.flash
    s.start()
    assert os.path.isfile(os.path.join(folder, "main.py"))
    s.close()
    assert not os.path.exists(folder) and not s.alive() and s.modem.closed


def test_env_and_sources(tmp_path):
    script = tmp_path / "env_main.py"
    script.write_text('import os\nimport helper\nprint("sim=" + str(os.getenv("FACEDOWN_SIM")), helper.X)\n')
    (tmp_path / "helper.py").write_text("X = 42\n")
    with VirtualShoe(main=script, sources=[tmp_path / "helper.py"], env={"FACEDOWN_SIM": "jam=0.1"}) as s:
        s.wait_for("sim=", timeout=10)
        deadline = time.monotonic() + 5
        while s.alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert "sim=jam=0.1 42" in s.log()
        assert s.returncode == 0


def test_ready_timeout_and_early_exit(tmp_path):
    quiet = tmp_path / "quiet.py"
    quiet.write_text("import time\ntime.sleep(30)\n")
    with VirtualShoe(main=quiet, sources=[]) as s:
        with pytest.raises(TimeoutError):
            s.restart(ready_line="never printed", timeout=0.3)
    crash = tmp_path / "crash.py"
    crash.write_text("print('booting')\nraise ValueError('boom')\n")
    s = VirtualShoe(main=crash, sources=[], ready_line="ready")
    try:
        with pytest.raises(RuntimeError) as e:
            s.start()
        assert "boom" in str(e.value)
    finally:
        s.close()


def test_missing_sources_and_main(tmp_path):
    with pytest.raises(FileNotFoundError):
        VirtualShoe(sources=[tmp_path / "nope"])
    s = VirtualShoe(sources=[])
    try:
        with pytest.raises(FileNotFoundError):
            s.start()
    finally:
        s.close()


def test_micropython_lookup(monkeypatch, tmp_path):
    assert os.access(find_micropython(), os.X_OK)
    monkeypatch.delenv("FACEDOWN_MICROPYTHON", raising=False)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="make setup"):
        find_micropython()
