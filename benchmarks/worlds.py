"""The tests' fake worlds (tests/mp_*_test.py) as modules under CPython, for the benchmarks that
measure the Pico's own firmware in them (shuffle.py, table.py, pico_loader.py): the script of
the tree at root, with that tree's tests/ and protocol/ first on sys.path (its fakes, its
firmware's codec)."""
import importlib.util
import os
import sys


def test_script(name, root):
    """tests/<name>.py of the tree at root, loaded as a module of its own."""
    sys.path[:0] = [os.path.join(root, "tests"), os.path.join(root, "protocol")]
    spec = importlib.util.spec_from_file_location(
        name + "_bench", os.path.join(root, "tests", name + ".py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m
