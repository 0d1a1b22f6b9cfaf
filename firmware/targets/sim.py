# The virtual shoe's image (MicroPython's unix port behind a pty: `facedown sim`, the tests):
# the common part, the simulated mechanism and the scenario runner. The pin map gives the
# simulator the hardware's timings (hal/simstops.py).
include("common.py")
module("hal/sim.py")
module("hal/simmech.py")
module("hal/simstops.py")
module("hal/simcarousel.py")
module("hal/simdecks.py")
module("hal/simfast.py")   # revision D's carousel, when the pin map's loader is fitted
module("hal/fastpath.py")  # revision D's timing model (simfast.py's, benchmarks/table.py's)
module("scenario.py")
module("pinmap.json")
module("fastpath.json")    # revision D's figures (hal/simfast.py)
