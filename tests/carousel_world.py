# tests/mp_carousel_test.py as a module (its fitted shoe and carousel model), for the scripts
# that build on it (tests/mp_decks_test.py, tests/mp_loader_test.py): imported when a case needs
# it (a script's first run only starts each case in an interpreter of its own). A module of its
# own: every world imports tests/mp_rp2_world.py, on a tight heap.
import sys

from mp_rp2_world import HERE


def _script(name):
    """tests/<name>.py as a module: imported under MicroPython; under CPython loaded from its
    file under another name (under pytest a plain import of it would skip: its own guard)."""
    if sys.implementation.name == "micropython":
        return __import__(name)
    import importlib.util

    spec = importlib.util.spec_from_file_location(name[3:] + "_world",
                                                  HERE + "/" + name + ".py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def carousel_world():
    """tests/mp_carousel_test.py as a module (its fitted shoe and carousel model), for the
    scripts that build on it (imported when a case needs it: a script's first run only starts
    each case in an interpreter of its own)."""
    return _script("mp_carousel_test")


def decks_world():
    """tests/mp_decks_test.py as a module (its reader board's side of the gather tray,
    GatherWorld), for revision D's two decks (tests/mp_loader_test.py)."""
    return _script("mp_decks_test")
