"""Shared test set-up: the firmware's pure-logic core is importable as on the device."""

import os
import signal
import sys

import pytest
from hypothesis import HealthCheck, settings

# A loaded machine (CI's, or one running other jobs) can stall a draw for seconds: that is not
# a property failing. Every test's own settings still apply on top of this profile.
settings.register_profile("facedown", suppress_health_check=[HealthCheck.too_slow], deadline=None)
settings.load_profile("facedown")

# Ctrl-C as in a terminal. A run started in the background (`make test &`, nohup, a runner
# without job control) inherits SIGINT ignored, and so did every `facedown sim` the tests stop
# with SIGINT as a user does (tests/cli.py Sim.stop, tests/test_wheel.py): each ran on for its
# 20 s of grace and was killed, its throwaway flash folder and key left behind (a failure of
# test_throwaway_sims_leave_nothing_behind, and ~20 s lost each time).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# MicroPython scripts (mp_reader_test.py: the reader board's), run under the unix port by the
# tests that name them (test_rp2.py, test_journal_mp.py, test_reader.py), not pytest modules:
# not collected (pytest counted each as a skipped module). mp_wire_test.py is collected: its
# suite runs under CPython and MicroPython alike.
collect_ignore = ["mp_%s_test.py" % n for n in (
    "carousel", "decks", "journal", "loader", "pico_port", "reader", "rp2")]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIRMWARE = os.path.join(ROOT, "firmware")
PROTOCOL = os.path.join(ROOT, "protocol")
SCENARIOS = os.path.join(ROOT, "tests", "scenarios")

# The one place a test process puts project folders on sys.path: the firmware's modules by
# their flat names, as on the device (and protocol/wire.py as `wire`), the same modules the
# host package's loader gives (facedown.firmware.share_flat_names); fuzz/ for fuzzlib. The `facedown` command the
# tests run in subprocesses imports them as facedown.fw.* (tests/test_wheel.py).
for _path in (os.path.join(ROOT, "fuzz"), PROTOCOL, FIRMWARE):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from facedown import firmware as _firmware  # noqa: E402

_firmware.share_flat_names()



@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """The modules that hold a test marked slow first, each module's tests in their own order
    (tests that share a module's shoe may count on what the ones before them did). `make test`
    runs the suite on pytest-xdist workers that take the next test as each finishes one
    (--dist loadgroup --no-loadscope-reorder): a minute-long test taken last would keep one
    worker busy while the others sit idle. docs/testing.md "Running the suite"."""
    _xdist_groups(config, items)

    def module(item):
        return item.nodeid.split("::")[0]

    slow = {module(item) for item in items if item.get_closest_marker("slow")}
    items[:] = sorted(items, key=lambda item: module(item) not in slow)


def _xdist_groups(config, items):
    """--dist loadgroup sends the tests of an xdist_group to one worker by the "@group" suffix
    of their node ids. pytest-xdist 3.8 appends it to item._nodeid, which pytest 9 no longer
    reads (a node id is item._id, a NodeId): every group was spread over the workers (seen:
    test_deploy's shoe deployed on one worker and verified on the other). The same suffix,
    set where pytest 9 keeps it; nothing is done where xdist's own took."""
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})
        suffix = "@" + "_".join(names)
        if names and not item.nodeid.endswith(suffix) and hasattr(item, "_id"):
            from _pytest.nodeid import NodeId

            item._id = NodeId.parse(item.nodeid + suffix)


@pytest.fixture(autouse=True, scope="session")
def _facedown_home(tmp_path_factory):
    """Key and session files go to a folder of the test run's, never the user's."""
    home = str(tmp_path_factory.mktemp("facedown-home"))
    saved = os.environ.get("FACEDOWN_HOME")
    os.environ["FACEDOWN_HOME"] = home
    for name in ("FACEDOWN_KEY", "FACEDOWN_KEY_FILE"):
        os.environ.pop(name, None)
    yield home
    if saved is None:
        os.environ.pop("FACEDOWN_HOME", None)
    else:
        os.environ["FACEDOWN_HOME"] = saved


def login_cli(shoe, role="maintenance"):
    """`facedown --port PORT login` on a virtual shoe, its key in the key store."""
    from facedown import keys
    from facedown.cli import main

    shoe.key.save(keys.keystore_path(shoe.key.device))
    assert main(["--port", shoe.port, "login", "--role", role]) == 0

@pytest.fixture(scope="module")
def virtual_shoe():
    """A virtual shoe (the firmware under the MicroPython unix port) for a test module."""
    from facedown.virtualshoe import VirtualShoe

    with VirtualShoe() as s:
        s.start(ready_line="ready", timeout=20)
        yield s
