# Continuous health tests on the raw entropy bits, in the spirit of NIST SP 800-90B sec. 4.4.
# The samples are single bits from the ring oscillator (RANDOMBIT), tested BEFORE any
# debiasing or hashing: a conditioner hides a dead source, the health tests must see it.
#
# Assessed min-entropy per sample: H = 0.5 bit (conservative for a ring oscillator; the
# DRBG asks for twice as many raw bits as the entropy it needs). False alarm rate
# alpha = 2^-30 per test, as SP 800-90B recommends.
#
#   Repetition count test (4.4.1): cutoff C = 1 + ceil(-log2(alpha) / H) = 1 + ceil(30 / 0.5)
#     = 61: 61 identical bits in a row raise EntropyFault.
#   Adaptive proportion test (4.4.2), binary window W = 1024: the first bit of each window is
#     the reference A, B counts A in the window (the first bit included); B >= C raises.
#     C = 1 + CRITBINOM(1024, 2^-H = 0.7071, 1 - 2^-30) = 1 + 809 = 810
#     (P[Binom(1024, 0.7071) >= 810] = 6.98e-10 <= 2^-30 = 9.31e-10; 809 would be 1.10e-9).
#     tests/test_shuffle.py recomputes both numbers.
#   Start-up test (4.3): 1024 samples through both tests before the first output.
#
# A failing source raises EntropyFault and stays failed (latched): the shoe stops dealing
# with a fault event and never silently degrades to a weaker source. Only reset() (an
# operator's power cycle / service action) clears it.
from shoe.compat import const

H_MIN = 0.5          # assessed min-entropy per raw bit
ALPHA_LOG2 = 30      # alpha = 2^-30
RCT_CUTOFF = const(61)
APT_WINDOW = const(1024)
APT_CUTOFF = const(810)
STARTUP_SAMPLES = const(1024)


class EntropyFault(Exception):
    """The raw entropy source failed a health test: no random output until reset."""

    def __init__(self, test, detail):
        super().__init__("entropy source failed the %s test: %s" % (test, detail))
        self.test = test
        self.detail = detail


class HealthTests:
    """Repetition count + adaptive proportion tests over a stream of bits."""

    def __init__(self, rct_cutoff=RCT_CUTOFF, apt_window=APT_WINDOW, apt_cutoff=APT_CUTOFF):
        self.rct_cutoff = rct_cutoff
        self.apt_window = apt_window
        self.apt_cutoff = apt_cutoff
        self.reset()

    def reset(self):
        self.fault = None
        self.samples = 0
        self._last = -1
        self._run = 0
        self._ref = -1
        self._count = 0
        self._seen = 0

    def _fail(self, test, detail):
        self.fault = EntropyFault(test, detail)
        raise self.fault

    def feed_bits(self, data):
        """Test every bit of the bytes `data` (most significant bit first). Raises
        EntropyFault on a failure, and on every later call until reset()."""
        if self.fault is not None:
            raise self.fault
        last = self._last
        run = self._run
        ref = self._ref
        count = self._count
        seen = self._seen
        rct_c = self.rct_cutoff
        win = self.apt_window
        apt_c = self.apt_cutoff
        for byte in data:
            for shift in (7, 6, 5, 4, 3, 2, 1, 0):
                b = (byte >> shift) & 1
                # repetition count
                if b == last:
                    run += 1
                    if run >= rct_c:
                        self._last = last
                        self._run = run
                        self._fail("repetition count", "%d identical bits in a row (cutoff %d)"
                                   % (run, rct_c))
                else:
                    last = b
                    run = 1
                # adaptive proportion
                if seen == 0:
                    ref = b
                    count = 1
                    seen = 1
                else:
                    if b == ref:
                        count += 1
                        if count >= apt_c:
                            self._fail("adaptive proportion",
                                       "%d of %d bits equal to %d (cutoff %d)"
                                       % (count, win, ref, apt_c))
                    seen += 1
                    if seen >= win:
                        seen = 0
        self._last = last
        self._run = run
        self._ref = ref
        self._count = count
        self._seen = seen
        self.samples += 8 * len(data)


class CheckedSource:
    """An entropy source for the DRBG: callable(n) -> n raw bytes from `raw` (a callable
    returning raw, unconditioned bytes: 8 one-bit samples each), every bit health-tested.
    Runs the start-up test on the first call. Raises EntropyFault; never returns untested
    or failed bytes."""

    def __init__(self, raw, tests=None):
        self.raw = raw
        self.tests = tests if tests is not None else HealthTests()
        self.started = False

    def startup(self):
        # SP 800-90B 4.3: the start-up samples are tested and discarded.
        self.tests.feed_bits(self.raw(STARTUP_SAMPLES // 8))
        self.started = True

    def __call__(self, n):
        if not self.started:
            self.startup()
        data = self.raw(n)
        if len(data) != n:
            self.tests._fail("length", "asked %d bytes, got %d" % (n, len(data)))
        self.tests.feed_bits(data)
        return bytes(data)

    @property
    def fault(self):
        return self.tests.fault


def raw_from_bits(bit):
    """Wrap a one-bit sampler (e.g. the ROSC RANDOMBIT read) as callable(n) -> n raw bytes,
    no debiasing: the health tests and the DRBG's 2x input take care of the bias."""

    def raw(n):
        out = bytearray(n)
        for i in range(n):
            v = 0
            for _ in range(8):
                v = (v << 1) | (bit() & 1)
            out[i] = v
        return out

    return raw
