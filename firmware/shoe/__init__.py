# The shoe's core: pure dealing logic (no machine, no HAL, no I/O). Runs on CPython,
# the MicroPython unix port and the Pico unchanged.
