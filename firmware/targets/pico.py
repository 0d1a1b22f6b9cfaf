# The Raspberry Pi Pico's image (`facedown deploy` to a shoe, `facedown image`): the common
# part and the rp2 hardware face, wired from the pin map. No simulator code: each module a
# shoe holds costs its heap (docs/deploy.md, "The memory budget").
include("common.py")
module("hal/rp2.py")
module("hal/rp2wire.py")  # the wiring from the pin map: at power-up, then let go
module("hal/rp2mech.py")
module("hal/readerline.py")  # the reader's line: its frame and messages (the reader board's too)
module("hal/pinview.py")  # the board module read as objects
module("hal/stepper_pio.py")
module("hal/led_pio.py")
module("hal/carousel_rp2.py")
module("hal/decks_rp2.py")  # two decks (revision C): imported only when gather_tray is fitted
module("hal/decks_d_rp2.py")  # two decks on revision D: imported only when both are fitted
module("hal/loader_rp2.py")  # revision D's escrows: imported only when loader is fitted
module("hal/loader_board.py")  # ... and its parts on the reader board ($PK, $EB)
module("hal/pipeline_rp2.py")  # revision D's pipelined card path: at the first reshuffle, when loader is fitted
module("hal/fastpath.py")   # ... and its timing figures (read then, from fastpath.json)
module("fastpath.json")
module("board.py")  # the pin map, checked and its budget worked out when the image was built
