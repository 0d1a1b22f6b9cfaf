# The pin map read as objects: pm.feed_stepper.enable, pm.level("maint_key"), pm.signal(name).
# The Pico's wiring (hal/rp2wire.py) reads the generated board module through this (board.py,
# made by facedown.build from hardware/pinmap.json: checked and its budget worked out on the
# host), so the Pico carries neither the pin map nor its checker (hal/pins.py, which builds on
# this for the host, the tests and the simulator's figures).


def _wrap(value):
    if isinstance(value, dict):
        return Node(value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


class Node:
    """A JSON object read as attributes or as a dict: node.baud == node["baud"]."""

    def __init__(self, data):
        self.data = data

    def __getattr__(self, key):
        try:
            return _wrap(self.data[key])
        except KeyError:
            raise AttributeError(key)

    def __getitem__(self, key):
        return _wrap(self.data[key])

    def __contains__(self, key):
        return key in self.data

    def get(self, key, default=None):
        if key in self.data:
            return _wrap(self.data[key])
        return default

    def keys(self):
        return self.data.keys()

    def items(self):
        return [(k, _wrap(v)) for k, v in self.data.items()]

    def __repr__(self):
        return "Node(%r)" % (self.data,)


class PinMap(Node):
    """The whole map. pm.feed_step.gpio, pm["feed_step"]["gpio"], pm.timing.double_feed_ms and
    pm["timing"]["double_feed_ms"] all work; signals and sections share one namespace (the
    validator keeps their names apart)."""

    def __init__(self, data, budget=None):
        Node.__init__(self, data)
        self._budget = budget
        self._sig = {}
        for s in data.get("signals", ()):
            self._sig[s["name"]] = s

    def __getattr__(self, key):
        if key in self._sig:
            return Node(self._sig[key])
        return Node.__getattr__(self, key)

    def __getitem__(self, key):
        if key in self._sig:
            return Node(self._sig[key])
        return Node.__getitem__(self, key)

    def __contains__(self, key):
        return key in self._sig or key in self.data

    def names(self):
        """Signal names in file order."""
        return [s["name"] for s in self.data.get("signals", ())]

    def signal(self, name):
        return Node(self._sig[name])

    def section(self, name):
        return Node(self.data[name])

    def gpio(self, name):
        return self._sig[name]["gpio"]

    def level(self, name):
        """The pin value (0 or 1) at which the signal is asserted."""
        return 1 if self._sig[name]["active"] == "high" else 0

    def asserted(self, name, value):
        """True if a raw pin value means the signal is asserted (beam blocked, button pressed)."""
        return (1 if value else 0) == self.level(name)

    def budget(self):
        """The timing budget (hal.pins.budget), worked out on the host when the image was built
        (the generated board module); hal.pins.PinMap works it out from the map instead."""
        return self._budget
