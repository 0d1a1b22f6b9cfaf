"""`facedown sim`: a virtual shoe (the real firmware under the MicroPython unix port) on a
virtual serial port; prints the port to connect to and runs until interrupted."""

import time

from .errors import UserError
from .virtualshoe import VirtualShoe


def add_command(sub):
    p = sub.add_parser("sim", help="run a virtual shoe and print its serial port")
    p.add_argument("--flash", help="folder that plays the shoe's flash (default: a temporary one)")
    p.add_argument("--seed", type=int, help="seed every shuffle (hand k uses seed/k)")
    p.add_argument("--deck", help="deal every hand from this stacked deck: cards in load order, "
                                  "e.g. AhKdQs... (simulator only)")
    p.add_argument("--feed-ms", type=int, default=0, help="time one card takes to come out")
    p.add_argument("--mech-faults", type=float, default=0.0, metavar="P",
                   help="probability per card of a mechanism fault (double feed, boxed card, "
                        "a jam cleared by the retries or stopping the shoe, the lid, the reader)")
    for name in ("drop", "corrupt", "duplicate", "delay"):
        p.add_argument("--" + name, type=float, default=0.0, metavar="P",
                       help="line fault: probability per byte to %s it" % name)
    p.add_argument("--seconds", type=float, default=0, help="stop after this long (0: never)")
    p.set_defaults(func=run)


def sim_env(seed=None, deck=None, feed_ms=0, mech_faults=0.0):
    opts = ["feed_ms=%d" % feed_ms]
    if seed is not None:
        opts.append("seed=%d" % seed)
    if deck:
        opts.append("deck=%s" % deck.replace(" ", "").replace(",", ""))
    if mech_faults:
        opts.append("mech_faults=%g" % mech_faults)
    return {"FACEDOWN_SIM": ",".join(opts)}


def run(args):
    modem = {k: getattr(args, k) for k in ("drop", "corrupt", "duplicate", "delay")}
    for k, v in modem.items():
        if not 0 <= v <= 1:
            raise UserError("--%s is a probability 0..1, not %g" % (k, v))
    shoe = VirtualShoe(flash=args.flash, env=sim_env(args.seed, args.deck, args.feed_ms,
                                                     args.mech_faults),
                       nullmodem=modem, keep=bool(args.flash))
    with shoe:
        from . import keys

        path = keys.keystore_path(shoe.key.device)
        shoe.key.save(path)  # as `facedown provision` leaves it: login finds it there
        shoe.start(ready_line="ready", timeout=15)
        print("virtual shoe %s on %s  (flash %s; its key: %s)" % (
            shoe.key.device, shoe.port, shoe.flash, path), flush=True)
        print("try: facedown --port %s identify; facedown --port %s login --role maintenance"
              % (shoe.port, shoe.port), flush=True)
        end = time.monotonic() + args.seconds if args.seconds else None
        try:
            while (end is None or time.monotonic() < end) and shoe.alive():
                time.sleep(0.2)
        except KeyboardInterrupt:
            pass
        if not shoe.alive():
            print(shoe.log_tail(20))
            return 1
    return 0
