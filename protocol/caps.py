# The protocol's capability bits (identify's reply, SPEC.md section 9), in one place: wire.py
# serves them in the catalogue, link.py adds CAP_AUTH, and each hardware face (hal/sim.py,
# hal/rp2.py) says which it brings. A module of its own, as crc.py is, so that the hardware
# layer, built at power-up before anything loads the codec, need not import wire.py (about
# 18 KB of a Pico's heap) for a number. On the shoe's image at its root beside wire.py.
try:
    from micropython import const
except ImportError:  # CPython

    def const(x):
        return x


CAP_SIM = const(1)
CAP_JOURNAL = const(2)
CAP_AUTH = const(4)

CAPABILITIES = ((CAP_SIM, "CAP_SIM"), (CAP_JOURNAL, "CAP_JOURNAL"), (CAP_AUTH, "CAP_AUTH"))
