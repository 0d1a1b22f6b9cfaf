"""benchmarks/memory.py in its quick mode (the guide: every benchmark runs to completion in
`make test`): the image's littlefs blocks measured on a real VfsLfs2 of the Pico's geometry
agree with the estimate deploy's fit check uses, the check asks for at least what littlefs
takes, a 192 KB littlefs cannot hold the image (deploy refuses it), and the stock storage holds
the image and a journal of at least 200 blocks; the Pico's face after boot holds neither the
rare paths nor the engine's table, also when restarted with finished hands in its journal."""

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT


@pytest.mark.slow
def test_memory_benchmark_quick():
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "memory.py"),
                           "--quick", "--json"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    lfs = out["flash"]["littlefs"]
    stock, small = lfs["stock"], lfs["small"]
    image = stock["used"] - 2  # (the superblock's pair)
    assert abs(image - lfs["estimate"]) <= 2, (image, lfs["estimate"])
    assert lfs["fit_needs"] >= image
    assert small["full_after"] is not None and lfs["fit_needs"] > small["free0"]
    assert isinstance(stock["journal"], int) and stock["journal"] >= 200, stock
    assert stock["free_after_journal"] >= 40
    from facedown.virtualshoe import HEAP  # the session runs at the virtual shoe's own heap

    assert out["runs"][HEAP]["ok"], out["runs"]
    assert out["pico_heap_bytes"] == 233792  # the pool the real port reports (tests/fakes/machine.py)
    # the Pico's face: its modules' own import costs add up to the heap its imports took (less
    # the hardware layer's objects); the rare paths are not in the heap after boot (the login
    # with the HMAC, identify's catalogue), nor the engine's table and the recorder, which load
    # with the first hand (firmware/play.py, device.py's rec)
    hal = out["hal"]
    live = set(hal["modules"])
    own = sum(row[2] for row in out["modules32"] if set(row[1].split(",")) & live)
    assert 0.9 * hal["imports"] <= own <= hal["imports"], (own, hal["imports"])
    for name in ("rare", "login", "shoe.drbg", "catalogue", "recorder", "shoe.procedures",
                 "shoe.irregular", "integrity", "hal.pins", "shoe.hand", "shoe.house",
                 "shoe.shuffler", "shoe.rng", "shoe.record", "shoe.snapshot", "shoe.logplay"):
        assert name not in live, name
    # a shoe in service, restarted between hands (the session's journal: 3 hands, ended), does
    # not rebuild the last hand: no engine at boot, and its heap is a new shoe's (issue 13)
    service = out["in_service"]
    assert "boot" in service, service
    for name in ("shoe.hand", "shoe.house", "shoe.shuffler", "shoe.record", "recorder"):
        assert name not in service["booted"], name
    assert service["boot"] <= hal["boot"] + 2048, (service["boot"], hal["boot"])
