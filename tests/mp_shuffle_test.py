# The shoe's random source and shuffler under the MicroPython unix port (and CPython):
#   micropython -X heapsize=256K tests/mp_shuffle_test.py     (run by tests/test_shuffle.py)
# Prints a transcript (NIST vector check, DRBG output for fixed seeds, below() draws, carousel
# plans, health-test verdicts) that must be byte-identical to CPython's run of this file.
# Ends with "OK"; any failure raises.
import sys

HERE = __file__.rsplit("/", 1)[0] if "/" in __file__ else "."
sys.path.insert(0, HERE + "/../firmware")
sys.path.append(HERE + "/../protocol")  # crc.py, wire.py: at the image's root on a shoe

from shoe.drbg import HmacDrbg, seeded_entropy, hmac_sha256  # noqa: E402
from shoe.health import HealthTests, CheckedSource, EntropyFault  # noqa: E402
from shoe import shuffler  # noqa: E402


def hx(b):
    return "".join("%02x" % x for x in b)


# NIST CAVP HMAC_DRBG SHA-256, no reseed, no PR, COUNT 0
d = HmacDrbg(None, nonce=bytes.fromhex("659ba96c601dc69fc902940805ec0ca8"),
             entropy_input=bytes.fromhex(
                 "ca851911349384bffe89de1cbdc46e6831e44d34a4fb935ee285dd14b71a7488"))
d.generate(128)
out = d.generate(128)
assert hx(out) == (
    "e528e9abf2dece54d47c7e75e5fe302149f817ea9fb4bee6f4199697d04d5b89"
    "d54fbb978a15b5c443c9ec21036d2460b6f73ebad0dc2aba6e624abf07745bc1"
    "07694bb7547bb0995f70de25d6b29e2d3011bb19d27676c07162c8b5ccde0668"
    "961df86803482cb37ed6d5c0bb8d50cf1f50d476aa0458bdaba806f48be9dcb8"), hx(out)
print("cavp", hx(out[:16]))
print("hmac", hx(hmac_sha256(b"key", b"The quick brown fox jumps over the lazy dog")))

for seed in ("facedown", "seed-2"):
    g = HmacDrbg(seeded_entropy(seed), personalization=b"mp-test", reseed_interval=5)
    print("gen", seed, hx(g.generate(48)), hx(g.generate(7, b"extra")))
    print("below", seed, " ".join(str(g.below(n)) for n in (2, 3, 52, 60, 255, 256, 257,
                                                            1000, 65536, 70000, 1 << 20)))
    g.cycle(b"\x01\x02")
    slot_of, unload = shuffler.plan(list(range(52)), g)
    print("plan", seed, slot_of, unload)
    print("deck", seed, shuffler.shuffle(list(range(52)), g))
    print("shelf", seed, shuffler.shelf_one_pass(list(range(52)), g))
    print("travel", shuffler.travel(slot_of))
    p = shuffler.Plan(list(range(52)), g)
    p.rotate(g.below(52))
    print("plan", seed, p.cards, p.drops())
    print("reseeds", g.reseeds, "counter", g.reseed_counter)

t = HealthTests()
try:
    t.feed_bits(bytes(16))
    print("stuck passed")
except EntropyFault as e:
    print("stuck", e.test)
try:
    t.feed_bits(bytes([0x55]))
    print("latched: no")
except EntropyFault:
    print("latched: yes")
src = CheckedSource(seeded_entropy("health"))
print("checked", hx(src(16)), src.tests.samples)

# the next deck (shoe/batch.py): gathered in a scrambled order, with strays; the same order out
from shoe import batch  # noqa: E402

nd = batch.NextDeck()
nd.start(HmacDrbg(seeded_entropy("next")))
for c in [(i * 7) % 52 for i in range(52) if i != 20] + [52, 7]:
    v, slot = nd.take(c, nd.back)
    print("take", c, batch.VERDICTS[v], slot)
print("problem", nd.problem())
print("take", nd.take(140 % 52, nd.back))
nd.unloaded()
print("next", nd.deal(), nd.back)
print("OK")
