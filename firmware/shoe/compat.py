# What differs between CPython and MicroPython, in one place.
try:
    from micropython import const  # noqa: F401
except ImportError:  # CPython

    def const(value):
        return value


def release(name):
    """A module imported for a rare path (the device's rare commands, the pin map's loader and
    the wiring) leaves the heap after use: out of sys.modules and off its package (the import
    set it there), so nothing holds its globals, its bytecode or its tables (a Pico loads a
    .mpy from littlefs into the heap). The same under CPython (the tests see it)."""
    import sys

    sys.modules.pop(name, None)
    if "." in name:
        package, leaf = name.rsplit(".", 1)
        package = sys.modules.get(package)
        if package is not None and leaf in package.__dict__:
            delattr(package, leaf)
