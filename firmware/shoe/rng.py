# The injectable random source. The engine only ever calls below(n); every face-down
# reshuffle and random pick goes through it. SeededRandom is the simulator's: a SHA-256
# counter stream, identical on CPython and MicroPython, so a seed replays the same hand.
import hashlib


class SeededRandom:
    def __init__(self, seed):
        self._key = ("facedown-sim:%s" % (seed,)).encode()
        self._counter = 0
        self._buf = b""
        self._pos = 0

    def _u16(self):
        if self._pos + 2 > len(self._buf):
            h = hashlib.sha256(self._key)
            h.update(self._counter.to_bytes(8, "big"))
            self._buf = h.digest()
            self._counter += 1
            self._pos = 0
        p = self._pos
        self._pos = p + 2
        return (self._buf[p] << 8) | self._buf[p + 1]

    def below(self, n):
        """Uniform integer in [0, n) by rejection sampling: no modulo bias. n <= 65536."""
        if n <= 1:
            return 0
        limit = 65536 - (65536 % n)
        while True:
            x = self._u16()
            if x < limit:
                return x % n


def shuffle(rng, items):
    """Fisher-Yates in place."""
    i = len(items) - 1
    while i > 0:
        j = rng.below(i + 1)
        items[i], items[j] = items[j], items[i]
        i -= 1


def cut(rng, items):
    """A random cut: rotate the stack at a uniform position. Returns the cut position."""
    n = len(items)
    if n < 2:
        return 0
    k = rng.below(n)
    if k:
        items[:] = items[k:] + items[:k]
    return k
