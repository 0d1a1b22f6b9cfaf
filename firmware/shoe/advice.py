# What the operator does about each stopping fault (shoe/faults.py's FAULTS, by code): the
# host names it (facedown status, the event stream), the simulator and the entropy stop say it.
# Its own module, imported when asked (faults.advice): the texts are not resident on a Pico.
ADVICE = (
    (1, "open the lid, clear the card path, put the card back under the stack (it is fed "
        "next), close the lid, then repeat the step"),  # jam
    (2, "load the cards into the magazine, then repeat the step"),  # empty
    (3, "close the lid (a card caught in the path goes back under the stack first), then "
        "repeat the step"),  # lid_open
    (4, "check the card reader's cable and power (the card waits at the reader), then repeat "
        "the step"),  # reader_silent
    (5, "the card reader reports a camera or light fault: service it, then repeat the step"),  # reader_fault
    (6, "check the 24 V motor supply, then repeat the step"),  # motor_power
    (7, "take both cards out of the path, put them back under the stack, then repeat the step"),  # double_feed_unresolved
    (8, "nothing is dealt: the floor rules on the hand and ends it; power-cycle the shoe, "
        "and call service if it happens again"),  # entropy
    (9, "the shuffler's carousel lost its place: open the lid, take the cards out of the "
        "carousel and put them in the magazine, close the lid, then repeat the step (the "
        "shoe reshuffles them)"),  # carousel_lost_steps
    (10, "the carousel's index is not seen: check its sensor and the ring, take the cards "
         "out of the carousel, then repeat the step"),  # carousel_no_index
    (11, "a card did not go into its carousel pocket: open the lid, take the cards out of "
         "the carousel, then repeat the step"),  # carousel_pocket
    (12, "a fault in the shoe itself (its log and audit name it): nothing is dealt until the "
         "floor ends the hand (end or misdeal in a maintenance session, or the floor key); "
         "call service if it happens again"),  # latched
    (13, "a card is caught in an escrow of the carousel's loader (revision D): open the lid, "
         "take it out, put it face down on top of the magazine, close the lid, then repeat "
         "the step"),  # escrow_caught
    (14, "the carousel loader's servo driver does not answer: check its I2C cable and its 5 "
         "V supply, then repeat the step"),  # servo_driver
)
