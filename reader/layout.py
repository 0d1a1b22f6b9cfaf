# Where the reader board's camera finds things in its frame, and the figures it judges them by:
# the reader board's own facts (the Pico never sees them). The frame is QVGA grayscale
# (320 x 240) of the window under the hold position (MECHANISM.md "Hold and read"), the card's
# leading index corner in its upper left quarter; trim these from frames of a held card
# (reader/README.md, "Templates").
WIDTH = 320
HEIGHT = 240
RANK_AT = (40, 36)          # where the rank's template's top left corner falls (px)
SUIT_AT = (40, 64)          # the suit's, under it
SLACK = 2                   # searched each way around those corners (px): the card's play at rest
CORNER = (32, 28, 40, 64)   # the index corner (x, y, w, h): paper there when a card is held
BACK_AT = (32, 28)          # where the back's template (the same corner of a back) falls
LIGHT_ROI = (280, 8, 32, 24)  # the white reference patch beside the window, lit by the LEDs
LIGHT_MIN = 150             # its mean grey: under it the LEDs are off or failing (LIGHT)
LIGHT_MAX = 250             # over it the camera is blinded (LIGHT)
EMPTY_MAX = 60              # the corner's mean grey with no card over the window (dark)
PAPER = [(110, 255)]        # image.binary's thresholds: paper white, ink (and a back's print) black
MARGIN_PCT = 10             # the best template must beat the runner-up by this (SSIM percent)
# the pocket sensor at the homing turn's 12,500 steps/s (hardware/fastpath.json): a pocket
# passes every 80 steps, 6.4 ms; a blocked edge within 1 ms of the last one counted is a glitch
POCKET_GAP_US = 1000
