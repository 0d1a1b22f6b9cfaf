# Where the mechanism sends a card it feeds (Mechanism.feed(route)), in one place: the engine
# asks for a route (shoe/hand.py), each hardware face sets its diverter by it (hal/rp2mech.py
# on the Pico, hal/simmech.py in the simulator), and the journal keeps the route of a card about
# to be fed. A position of the diverter: the numbers index the pin map's diverter.pulse_us in
# ROUTE_NAMES' order (hal/rp2wire.py; the carousel's fourth, hal.carousel_rp2.ROUTE_SHUFFLE).
from shoe.compat import const

ROUTE_OUT = const(0)     # to the table (a seat, the board)
ROUTE_BURN = const(1)    # to the burn pocket
ROUTE_REJECT = const(2)  # to the reject bin (a card nobody read, an extra of a double feed)
ROUTE_NAMES = ("output", "burn", "reject")
