# The simulator's stopping faults (hal/simmech.py arms them): what each one costs in time, from
# the pin map's figures (hardware/pinmap.json, deployed as pinmap.json), and what the sensors
# would have seen. Imported when the first one is armed: a shoe that never meets one keeps the
# heap this would take.
from shoe import faults as F
from shoe.faults import MechanismFault, JAM, EMPTY, LID_OPEN, READER_SILENT
from hal.motion import move_ms




class Figures:
    """What a stopping fault costs, in ms, from the pin map (its JSON as a dict)."""

    def __init__(self, pm):
        t = pm["timing"]
        rd = pm["reader"]
        fs = pm["feed_stepper"]
        self.jam_retries = t["jam_retries"]
        self.spc = fs["steps_per_card"]
        self.cruise = fs["cruise_steps_per_s"]
        self.accel = fs["accel_steps_per_s2"]
        self.stick_ms = t["throat_reach_ms"]  # a card stuck before the throat: this window
        self.reverse_steps = t["jam_reverse_steps"]
        # the reverse runs at the cruise rate / REVERSE_DIVISOR (as hal/rp2mech.py)
        self.reverse_ms = int(move_ms(self.reverse_steps, self.cruise // F.REVERSE_DIVISOR,
                                      self.accel))
        self.misfeed_ms = t["double_reach_ms"]  # a pick that brings nothing to the D beam
        self.lid_ms = t["feed_ms"] // 2
        self.silent_ms = 2 * (rd["retries"] + 1) * rd["timeout_ms"]  # the read, then status

    def jam_ms(self, times):
        """A card that sticks `times` times: (ms, retries, stopped). As hal/rp2mech.py does it:
        the first try ends when the throat window closes; each reverse backs the roller off
        reverse_steps; a later try runs to the end of the pick roller's turn (or the window);
        after jam_retries reverses, a card that sticks again stops the shoe."""
        stopped = times > self.jam_retries
        n = self.jam_retries + 1 if stopped else times
        v, a = self.cruise, self.accel
        ramp = v * v / (2 * a)  # steps to reach cruise
        ms = 0
        turn = 0  # steps into the pick roller's turn
        for k in range(n):
            full = move_ms(self.spc - turn, v, a)
            if full > self.stick_ms:  # the window closes first
                ms += self.stick_ms
                t = self.stick_ms / 1000
                turn += int(a * t * t / 2 if t < v / a else ramp + v * (t - v / a))
            else:
                ms += full
                turn = self.spc
            if k < n - 1 or not stopped:
                ms += self.reverse_ms
                turn -= self.reverse_steps
        return int(ms), n, stopped


def pinmap(paths=None):
    """The pin map as a dict: pinmap.json where the firmware runs (the virtual shoe's flash),
    else the checkout's hardware/pinmap.json."""
    import json

    paths = paths or _paths()
    for path in paths:
        try:
            f = open(path)
        except OSError:
            continue
        try:
            return json.load(f)
        finally:
            f.close()
    raise OSError("no pin map at %s: the simulated faults take their timing from it" % (
        " or ".join(paths)))


def _paths():
    here = __file__.rsplit("/", 1)[0] if "/" in __file__ else "."
    return ("pinmap.json", here + "/../../hardware/pinmap.json")


def loader_fitted(paths=None):
    """The pin map (pinmap.json where the firmware runs, else the checkout's) says the shoe has
    revision D's loader. Only its `loader` section's `fitted` is read, in small pieces: the
    whole map does not fit the unix port's small heaps beside the engine."""
    for path in paths or _paths():
        try:
            f = open(path)
        except OSError:
            continue
        try:
            return _fitted(f)
        finally:
            f.close()
    return False


def _fitted(f):
    text = ""
    at = -1
    while True:  # up to the section's "fitted" (pins.py requires it), then its value
        chunk = f.read(256)
        text = text[-64:] + chunk
        if at < 0:
            at = text.find('"loader"')
            if at >= 0:
                text = text[at:]
        if at >= 0:
            i = text.find('"fitted"')
            if i >= 0 and ("," in text[i:] or "}" in text[i:]):
                value = text[i + 8:].lstrip(" :\n")
                return value.startswith("true")
        if not chunk:
            return False


_FIGURES = []


def figures():
    """The Figures of this shoe's pin map, read once."""
    if not _FIGURES:
        _FIGURES.append(Figures(pinmap()))
    return _FIGURES[0]


def stop(mech, kind, code):
    """A stopping fault on mech's current feed: its time, then MechanismFault (nothing left the
    magazine). A jam the retries clear returns, counted."""
    why = _STOP[kind](mech, mech.figures(), code)
    if why is None:
        mech.recovered += 1
        return
    mech.feeds -= 1  # no card came out: the repeated step feeds this one again
    raise MechanismFault(kind, "%s: %s" % (why, F.advice(F.code(kind))))


# ---------------------------------------------------------------- the stopping faults
# Each takes (mech, figures, code), spends the fault's time, and says what the sensors saw
# (None: a jam the retries cleared).

def _jam(mech, fig, times):
    ms, mech.retries, stopped = fig.jam_ms(times)
    mech._wait(ms)
    if stopped:
        return "the card did not reach the throat within %d ms, %d times" % (fig.stick_ms,
                                                                             mech.retries)
    return None


def _empty(mech, fig, code):
    if len(mech.stack) > F.MAGAZINE_FEW:
        return "the magazine beam is clear"
    mech.retries = fig.jam_retries  # a few cards do not block the beam: the picks are tried
    mech._wait((fig.jam_retries + 1) * fig.misfeed_ms)
    return "no card came out and the magazine beam is clear"


def _lid(mech, fig, code):
    mech._wait(fig.lid_ms)
    return "the lid was opened while a card was moving"


def _silent(mech, fig, code):
    mech._wait(mech.feed_ms + fig.silent_ms)  # the card travels to the reader, then silence
    return "the card reader stopped answering"


_STOP = {JAM: _jam, EMPTY: _empty, LID_OPEN: _lid, READER_SILENT: _silent}
