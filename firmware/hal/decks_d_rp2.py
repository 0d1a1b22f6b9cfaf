# Revision D with two decks on the Pico (hardware/SHUFFLER.md "Revision D" and "Two decks"),
# imported by hal/rp2wire.py only when the pin map fits both the loader and the gather tray.
# hal/decks_rp2.py's TwoDeckMechanism on revision D's StationCarousel (hal/loader_rp2.py):
# - the hand's reshuffles (the opening one when no next deck is ready, an in-hand one) go
#   through the pipeline (LoaderMechanism's loading: hal/pipeline_rp2.py), after the next
#   deck's cards are out of the pockets as on revision C;
# - the next deck goes in between the hand's steps, one card a call of between() as on
#   revision C (a command that arrives waits at most for that card): picked from the gather
#   tray, stopped at the hold position and read (face and back), so that a card that does not
#   belong goes to the reject bin, named, as on revision C; then down the Y-chute onto the latch
#   of the station nearer its pocket (the pockets of the next deck's plan's order:
#   StationCarousel.use), the ring's move padded to the quarter turn's bound, the latch let go
#   once the card is on it. Once the deck is in, the non-stop unloading turn lays it on the
#   shuffle tray in its plan's order.
from hal.decks_rp2 import TwoDeckMechanism
from hal.loader_rp2 import LoaderMechanism

__all__ = ["LoaderTwoDecks", "fit"]


def fit(hal, args):
    """The mechanism of a revision D shoe with the gather tray (hal/rp2wire.py): args as
    ShufflingMechanism's after the carousel (hal.carousel: the StationCarousel)."""
    mech = LoaderTwoDecks(hal.carousel, *args)
    mech.rng_source = lambda: hal.rng(None)
    return mech


class LoaderTwoDecks(TwoDeckMechanism):
    """TwoDeckMechanism whose reshuffles load through revision D's pipeline."""

    pipe = None
    _load_all = LoaderMechanism._load_all
    _load_run = LoaderMechanism._load_run

    def _gather_one(self):
        """One card of the next deck, into the pocket of its place in the next deck's plan."""
        car = self.carousel
        plan = self.nd.plan
        if plan is not None and car.plan is not plan:
            car.use(plan)  # (an in-hand reshuffle used the pockets for its own plan)
        TwoDeckMechanism._gather_one(self)
