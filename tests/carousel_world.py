# tests/mp_carousel_test.py as a module (its fitted shoe and carousel model), for the scripts
# that build on it (tests/mp_decks_test.py, tests/mp_loader_test.py): imported when a case needs
# it (a script's first run only starts each case in an interpreter of its own). A module of its
# own: every world imports tests/mp_rp2_world.py, on a tight heap.
import sys

from mp_rp2_world import HERE


def carousel_world():
    """tests/mp_carousel_test.py as a module (its fitted shoe and carousel model), for the
    scripts that build on it (imported when a case needs it: a script's first run only starts
    each case in an interpreter of its own)."""
    if sys.implementation.name == "micropython":
        import mp_carousel_test as m
    else:  # (under pytest a plain import of it would skip: its own guard)
        import importlib.util

        spec = importlib.util.spec_from_file_location("carousel_test_world",
                                                      HERE + "/mp_carousel_test.py")
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
    return m
