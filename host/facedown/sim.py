"""`facedown sim`: a virtual shoe (the real firmware under the MicroPython unix port) on a
virtual serial port; prints the port to connect to and runs until interrupted.

As a real shoe, it reboots on the same port when the firmware resets (after `deploy`,
`verify`, `provision`: the unix port's process ends where a Pico reboots), and a folder given
with --flash keeps what was deployed there: the next `facedown sim --flash DIR` boots it."""

import os
import signal
import time

from .errors import UserError
from .virtualshoe import VirtualShoe


def add_command(sub):
    p = sub.add_parser("sim", help="run a virtual shoe and print its serial port")
    p.add_argument("--flash", metavar="DIR",
                   help="folder that plays the shoe's flash, kept across runs: a folder that "
                        "holds a shoe boots what is installed there (default: a temporary one, "
                        "removed on exit with the key it left in the key store)")
    p.add_argument("--seed", type=int, help="seed every shuffle (hand k uses seed/k)")
    p.add_argument("--deck", help="deal every hand from this stacked deck: the game's whole "
                                  "deck in load order, e.g. AhKdQs... (simulator only)")
    p.add_argument("--feed-ms", type=int, default=0, help="time one card takes to come out")
    p.add_argument("--mech-faults", type=float, default=0.0, metavar="P",
                   help="probability per card of a mechanism fault (double feed, boxed card, "
                        "a jam cleared by the retries or stopping the shoe, the lid, the reader)")
    p.add_argument("--two-decks", action="store_true",
                   help="the two-deck shoe (hardware/SHUFFLER.md): each hand starts from the "
                        "deck shuffled while the last one was dealt; status shows next_deck")
    p.add_argument("--gap-cards", type=int, default=None, metavar="N",
                   help="with --two-decks: the next deck loads N cards in each gap between the "
                        "hand's steps (default: all at the hand's start), so an in-hand "
                        "reshuffle or a power cut can meet it half loaded")
    for name in ("drop", "corrupt", "duplicate", "delay"):
        p.add_argument("--" + name, type=float, default=0.0, metavar="P",
                       help="line fault: probability per byte to %s it" % name)
    p.add_argument("--seconds", type=float, default=0, help="stop after this long (0: never)")
    p.set_defaults(func=run)


def sim_env(seed=None, deck=None, feed_ms=0, mech_faults=0.0, two_decks=False, gap_cards=None):
    opts = ["feed_ms=%d" % feed_ms]
    if two_decks:
        opts.append("two_decks=1")
        if gap_cards is not None:
            opts.append("gap_cards=%d" % gap_cards)
    if seed is not None:
        opts.append("seed=%d" % seed)
    if deck:
        opts.append("deck=%s" % deck.replace(" ", "").replace(",", ""))
    if mech_faults:
        opts.append("mech_faults=%g" % mech_faults)
    return {"FACEDOWN_SIM": ",".join(opts)}


def check_deck(text):
    """A stacked deck as --deck gives it: a whole 52-card or short (36-card) deck, each card
    once; else UserError."""
    from .engine import firmware_imports

    cards = firmware_imports().cards
    text = text.replace(" ", "").replace(",", "")
    names = [text[i:i + 2] for i in range(0, len(text), 2)]
    codes = []
    for n in names:
        try:
            codes.append(cards.parse(n))
        except ValueError:
            raise UserError("--deck: %r is not a card" % n, hint="cards are written like Ah, "
                            "Td, 2c, two characters each, e.g. --deck AhKdQs...")
    seen = set()
    for n, c in zip(names, codes):
        if c in seen:
            raise UserError("--deck: %s appears twice" % n)
        seen.add(c)
    if seen not in (set(cards.deck(cards.FULL)), set(cards.deck(cards.SHORT))):
        raise UserError("--deck has %d cards: a stacked deck is the game's whole deck (52 "
                        "cards, or 36 for shortdeck), each card once" % len(codes))


def check(args):
    """Every option, before anything starts: one line for each mistake."""
    modem = {k: getattr(args, k) for k in ("drop", "corrupt", "duplicate", "delay")}
    for k, v in modem.items():
        if not 0 <= v <= 1:
            raise UserError("--%s is a probability 0..1, not %g" % (k, v))
    if not 0 <= args.mech_faults <= 1:
        raise UserError("--mech-faults is a probability 0..1, not %g" % args.mech_faults)
    if args.feed_ms < 0:
        raise UserError("--feed-ms is a time in milliseconds, 0 or more (not %d)" % args.feed_ms)
    if args.seconds < 0:
        raise UserError("--seconds is 0 (run until interrupted) or more, not %g" % args.seconds)
    if args.deck:
        check_deck(args.deck)
        if args.two_decks:
            raise UserError("--deck stacks every hand, --two-decks deals each from the deck "
                            "shuffled during the last: give one of them")
    if args.gap_cards is not None:
        if not args.two_decks:
            raise UserError("--gap-cards paces the next deck's loading: it needs --two-decks")
        if args.gap_cards < 1:
            raise UserError("--gap-cards is the cards loaded in each gap between steps, 1 or "
                            "more (not %d)" % args.gap_cards)
    if args.flash and os.path.exists(args.flash) and not os.path.isdir(args.flash):
        raise UserError("--flash %s is a file: it names the folder that plays the shoe's "
                        "flash" % args.flash, hint="give a new or an existing shoe's folder")
    return modem


def _on_signal(signum, frame):
    raise KeyboardInterrupt  # SIGTERM, SIGHUP: stop as Ctrl-C does (the cleanup runs)


def run(args):
    modem = check(args)
    installed = bool(args.flash) and os.path.isfile(os.path.join(args.flash, "main.py"))
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    from . import keys

    key_path = None
    shoe = VirtualShoe(flash=args.flash, env=sim_env(args.seed, args.deck, args.feed_ms,
                                                     args.mech_faults, args.two_decks,
                                                     args.gap_cards),
                       nullmodem=modem, keep=bool(args.flash), install=not installed)
    try:
        if shoe.key is not None:
            key_path = keys.keystore_path(shoe.key.device)
            shoe.key.save(key_path)  # as `facedown provision` leaves it: login finds it there
        shoe.start(ready_line="ready", timeout=15)
        print("virtual shoe %s on %s  (flash %s%s; its key: %s)" % (
            shoe.key.device if shoe.key else "(not provisioned)", shoe.port, shoe.flash,
            ", booted what is installed there" if installed else "", key_path or "-"),
            flush=True)
        print("try: facedown --port %s identify; facedown --port %s login --role maintenance"
              % (shoe.port, shoe.port), flush=True)
        return serve(shoe, args.seconds)
    except KeyboardInterrupt:
        return 0
    finally:
        shoe.close()  # a throwaway shoe (no --flash): its key and sessions go with its flash


def serve(shoe, seconds):
    """Keep the shoe powered: when its firmware resets (the unix port's process ends), boot it
    again on the same port and flash, as a Pico does. Gives up (status 1, the log's tail) if it
    cannot stay up: three boots in a row that fail (a non-zero exit status) within a few
    seconds. A soft reset asked for by the host (verify, deploy, provision: exit status 0) is
    not a failure, however quickly commands follow each other."""
    end = time.monotonic() + seconds if seconds else None
    quick = 0
    up = time.monotonic()
    while end is None or time.monotonic() < end:
        time.sleep(0.2)
        if shoe.alive():
            continue
        status = shoe.returncode
        failed = status != 0 and time.monotonic() - up < 3
        quick = quick + 1 if failed else 0
        if quick >= 3:
            print("facedown: error: the virtual shoe keeps stopping (exit status %s); its log:\n%s"
                  % (status, shoe.log_tail(20)), flush=True)
            return 1
        print("the shoe reset (exit status %s): booting it again on %s" % (status, shoe.port),
              flush=True)
        up = time.monotonic()
        try:
            shoe.start(ready_line="ready", timeout=15)
        except (RuntimeError, TimeoutError) as e:
            if not shoe.alive():
                continue
            # a firmware that fails at boot stays at its REPL (as a Pico's): deploy repairs it
            print("the firmware did not come up (%s); the shoe is at its REPL: `facedown "
                  "--port %s deploy` installs a working one" % (str(e).splitlines()[0],
                                                                shoe.port), flush=True)
    return 0
