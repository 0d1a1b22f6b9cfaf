"""Test helper: a HAL for running firmware/device.py in this (CPython) process, on the
simulator's mechanism and a journal in RAM, with the shoe's files in a folder."""

import os
import time

from hal.base import Clock as BaseClock, Hal
from hal.flashdev import RamFlash
from hal.simmech import SimMech
from hal.store import DirStore
from shoe.rng import SeededRandom


class Clock(BaseClock):
    """The clock under CPython, which has no ticks API."""

    def __init__(self):
        pass

    def ticks_ms(self):
        return int(time.monotonic() * 1000)

    @staticmethod
    def ticks_diff(a, b):
        return a - b


class PyHal(Hal):
    """The tests' face of the hardware layer (hal/base.py declares the interface)."""

    simulated = True

    def __init__(self, folder, device_id="sim-test", flash=None, seed="pyhal"):
        self.folder = folder
        self.store = DirStore(folder)
        self.flash = flash if flash is not None else RamFlash(304)
        self.mech = SimMech()
        self.clock = Clock()
        self.device_id = device_id
        self.deck = None
        self.seed = seed
        self.hands = 0
        self.switch = False
        self.logs = []

    def rng(self, seed):
        self.hands += 1
        return SeededRandom(seed if seed is not None else "%s/%d" % (self.seed, self.hands))

    def entropy(self, n):
        return os.urandom(n)

    def maintenance_switch(self):
        return self.switch

    def log(self, msg):
        self.logs.append(msg)
