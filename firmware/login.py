# The login (SPEC.md, "Sessions"): the challenge and the host's proof, checked with the role's
# key, which opens a session. Only a login runs it, so device.py imports this module for the
# command and lets it go after (_on_demand, as history.py); what every ACMD frame needs (its
# tag and counter checked, the session's end) stays resident in session.py. The HMAC-SHA256
# (shoe/drbg.py) is imported here too: a shoe nobody has logged in to since power-up holds
# neither.
import wire
from session import AuthError, FAIL_FILE, equal
from shoe.drbg import hmac_sha256, _Hmac as Hmac  # one HMAC-SHA256 for the firmware

CHALLENGE_MS = 30000          # a challenge is good for one login within this long
BACKOFF_MS = 1000             # the wait after the first failed login; doubles with each one
BACKOFF_MAX_MS = 300000


def _wait_ms(s):
    if not s.failures:
        return 0
    span = min(BACKOFF_MS << min(s.failures - 1, 20), BACKOFF_MAX_MS)
    return span - s.clock.ticks_diff(s.clock.ticks_ms(), s.wait_from)


def challenge(dev, role):
    s = dev.sessions
    if s.key is None:
        raise AuthError(wire.DENIED, "this shoe has no key: provision it first "
                                     "(facedown provision)")
    if role != wire.ROLE_TABLE and role != wire.ROLE_MAINTENANCE:
        raise AuthError(wire.BAD_ARGUMENT, "role is 1 table or 2 maintenance, not %d" % role)
    wait = _wait_ms(s)
    if wait > 0:
        raise AuthError(wire.BUSY, "%d failed logins: wait %d s" % (
            s.failures, (wait + 999) // 1000))
    nonce = bytes(s.entropy(wire.NONCE))
    s.challenge = (role, nonce, s.clock.ticks_ms())
    return (nonce,)


def login(dev, host_nonce, proof, time):
    s = dev.sessions
    ch = s.challenge
    s.challenge = None      # one attempt per challenge, right or wrong
    if ch is None:
        raise AuthError(wire.WRONG_STATE, "no challenge: send challenge first")
    role, nonce, t = ch
    if s.clock.ticks_diff(s.clock.ticks_ms(), t) > CHALLENGE_MS:
        raise AuthError(wire.WRONG_STATE, "the challenge expired: ask for a new one")
    if len(host_nonce) != wire.NONCE or len(proof) != wire.TAG:
        raise AuthError(wire.BAD_ARGUMENT, "login: a %d-byte nonce and a %d-byte proof" % (
            wire.NONCE, wire.TAG))
    rk = hmac_sha256(s.key, wire.role_message(role))  # the role's key
    want = hmac_sha256(rk, wire.login_message(role, s.device_id, nonce, host_nonce, time))
    if not equal(want, proof):
        s.failures += 1
        s.wait_from = s.clock.ticks_ms()
        s.store.write(FAIL_FILE, str(s.failures))
        s.audit.add("public", "login-failed", "%s, failure %d" % (wire.ROLES[role],
                                                                  s.failures))
        raise AuthError(wire.DENIED, "login failed: wrong key for %s; the next challenge "
                                     "waits %d s" % (s.device_id, _wait_ms(s) // 1000))
    if s.failures:
        s.failures = 0
        s.store.write(FAIL_FILE, "0")
    if s.skey is not None:
        s.audit.add(s.actor(), "session-replaced", "")
        s.ended = s.skey
    s.skey = Hmac(hmac_sha256(rk, wire.session_message(nonce, host_nonce)))
    s.role = role
    s.counter = 0
    s.number = (s.number + 1) & 0xFFFFFFFF or 1
    s.used = s.clock.ticks_ms()
    s.audit.set_time(time)
    s.audit.add(s.actor(), "login", "")
    return (hmac_sha256(rk, wire.device_message(nonce, host_nonce)), s.number)
