# HMAC_DRBG over SHA-256 (NIST SP 800-90A Rev. 1, sec. 10.1.2): the shoe's random source.
# Same interface as shoe.rng.SeededRandom (the engine only calls below(n)), so Hand takes it.
#
# State: K and V, 2 x 256 bits = 512 bits (52! ~ 2^225.6: every deck order is reachable);
# security strength 256 bits. Entropy comes from a callable returning bytes: on the Pico the
# health-tested ring oscillator (shoe.health.CheckedSource over raw ROSC bits), in the
# simulator os.urandom or a seeded stream. Raw bits are assessed at 0.5 bit/sample, so we
# draw 2x: 96 raw bytes (768 samples, >= 384 bits) to instantiate (entropy input + nonce),
# 64 raw bytes (>= 256 bits) to reseed.
#
# Reseed: every RESEED_INTERVAL generate calls (SP 800-90A allows 2^48; we use 2^10) and on
# demand (reseed()). cycle() advances the state between hands (N.J.A.C. 13:69E-1.28G: the
# RNG cycles continuously in the background) and may mix in an uncontrolled event (e.g. the
# microsecond timer at a button press) as additional input.
# below(n): rejection sampling on the fewest whole bytes that cover n: no modulo bias.
#
# MicroPython has no hmac module and its sha256 objects have no copy(): HMAC is done here
# (RFC 2104), with CPython's copy() used when present (speed only; same output).
import hashlib

_sha256 = hashlib.sha256
RESEED_INTERVAL = 1024
INSTANTIATE_BYTES = 96
RESEED_BYTES = 64
BUFFER_BYTES = 128       # generate() size behind below(): 4 HMAC blocks
MAX_REQUEST = 65536      # bytes per generate call (SP 800-90A: 2^19 bits = 65536 bytes)

_IPAD = bytes(x ^ 0x36 for x in range(256))
_OPAD = bytes(x ^ 0x5C for x in range(256))

try:
    _sha256(b"").copy()
    _HAS_COPY = True
except AttributeError:  # MicroPython
    _HAS_COPY = False


class ReseedRequired(Exception):
    pass


class _Hmac:
    """HMAC-SHA256 with a fixed 32-byte key (RFC 2104); keys <= 64 bytes are zero-padded."""

    def __init__(self, key):
        key = key + bytes(64 - len(key))
        self.ik = bytes(_IPAD[b] for b in key)
        self.ok = bytes(_OPAD[b] for b in key)
        if _HAS_COPY:
            self.ih = _sha256(self.ik)
            self.oh = _sha256(self.ok)

    def mac(self, data):
        if _HAS_COPY:
            h = self.ih.copy()
            h.update(data)
            o = self.oh.copy()
            o.update(h.digest())
            return o.digest()
        h = _sha256(self.ik)
        h.update(data)
        o = _sha256(self.ok)
        o.update(h.digest())
        return o.digest()


def hmac_sha256(key, data):
    """One-shot HMAC-SHA256 (key <= 64 bytes)."""
    if len(key) > 64:
        key = _sha256(key).digest()
    return _Hmac(key).mac(data)


def accept(x, n, span):
    """Rejection step of below(): x uniform in [0, span) -> a uniform value in [0, n), or -1
    to reject. Accepts x < span - span % n (a whole number of copies of [0, n))."""
    if x < span - span % n:
        return x % n
    return -1


class HmacDrbg:
    def __init__(self, entropy, nonce=None, personalization=b"",
                 reseed_interval=RESEED_INTERVAL, entropy_input=None):
        """entropy: callable(n) -> n bytes. If entropy_input is given (a known-answer test),
        it is used instead of calling the source for the instantiation (nonce must be given
        too). nonce None: the instantiation draws INSTANTIATE_BYTES from the source, which
        covers entropy input and nonce (SP 800-90A 8.6.7)."""
        self.entropy = entropy
        self.reseed_interval = reseed_interval
        if entropy_input is None:
            entropy_input = entropy(INSTANTIATE_BYTES)
        if nonce is None:
            nonce = b""
        self.K = bytes(32)
        self.V = b"\x01" * 32
        self._h = _Hmac(self.K)
        self._update(bytes(entropy_input) + bytes(nonce) + bytes(personalization))
        self.reseed_counter = 1
        self.reseeds = 0
        self.generated = 0
        self._buf = b""
        self._pos = 0

    # -- SP 800-90A 10.1.2.2
    def _update(self, provided=b""):
        self.K = self._h.mac(self.V + b"\x00" + provided)
        self._h = _Hmac(self.K)
        self.V = self._h.mac(self.V)
        if provided:
            self.K = self._h.mac(self.V + b"\x01" + provided)
            self._h = _Hmac(self.K)
            self.V = self._h.mac(self.V)

    # -- 10.1.2.4
    def reseed(self, additional=b"", entropy_input=None):
        if entropy_input is None:
            entropy_input = self.entropy(RESEED_BYTES)
        self._update(bytes(entropy_input) + bytes(additional))
        self.reseed_counter = 1
        self.reseeds += 1
        self._buf = b""
        self._pos = 0

    # -- 10.1.2.5
    def generate(self, n, additional=b"", auto_reseed=True):
        """n pseudorandom bytes. Reseeds from the entropy source when the counter is due
        (auto_reseed False: raises ReseedRequired instead, as the bare algorithm does)."""
        if n > MAX_REQUEST:
            raise ValueError("request too large")
        if self.reseed_counter > self.reseed_interval:
            if not auto_reseed:
                raise ReseedRequired()
            self.reseed(additional)
            additional = b""
        if additional:
            self._update(additional)
        mac = self._h.mac
        v = self.V
        chunks = []
        got = 0
        while got < n:
            v = mac(v)
            chunks.append(v)
            got += 32
        self.V = v
        self._update(additional)
        self.reseed_counter += 1
        self.generated += n
        return b"".join(chunks)[:n]

    def cycle(self, event=b""):
        """Advance the state between hands: drop buffered output (nothing drawn before can be
        recomputed from the state that follows) and run one generate step, mixing `event`
        (timer value of an uncontrolled event) in as additional input."""
        self._buf = b""
        self._pos = 0
        self.generate(0, event)

    def _bytes(self, k):
        p = self._pos
        if p + k > len(self._buf):
            self._buf = self.generate(BUFFER_BYTES)
            p = 0
        self._pos = p + k
        return self._buf[p:p + k]

    def below(self, n):
        """Uniform integer in [0, n) by rejection sampling on ceil(log256 n) bytes."""
        if n <= 1:
            return 0
        if n <= 256:
            buf = self._buf
            limit = 256 - 256 % n
            while True:
                p = self._pos
                if p >= len(buf):
                    buf = self._buf = self.generate(BUFFER_BYTES)
                    p = 0
                x = buf[p]
                self._pos = p + 1
                if x < limit:
                    return x % n
        k = 1
        span = 256
        while span < n:
            k += 1
            span <<= 8
        while True:
            v = accept(int.from_bytes(self._bytes(k), "big"), n, span)
            if v >= 0:
                return v

    def raw(self, n):
        """n output bytes for outside statistical testing (whole generate calls)."""
        out = []
        while n > 0:
            k = n if n < 4096 else 4096
            out.append(self.generate(k))
            n -= k
        return b"".join(out)


def seeded_entropy(seed):
    """A deterministic entropy source for tests and replay: callable(n) -> n bytes of a
    SHA-256 counter stream keyed by `seed` (str or bytes). Never use on a live shoe."""
    if isinstance(seed, str):
        seed = seed.encode()
    state = [0]

    def source(n):
        out = []
        got = 0
        while got < n:
            h = _sha256(b"facedown-entropy:" + seed)
            h.update(state[0].to_bytes(8, "big"))
            state[0] += 1
            out.append(h.digest())
            got += 32
        return b"".join(out)[:n]

    return source
