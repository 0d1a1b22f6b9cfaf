# The card's index corner read from one frame: rank and suit by comparing the frame, at the
# places reader/layout.py gives, with the templates taken from the house's deck, by OpenMV's
# structural similarity (image.Image.get_similarity: SSIM over 8 x 8 blocks, lib/imlib/stats.c
# in openmv/openmv; find_template is not built for the H7, boards/OPENMV4/imlib_config.h). The
# camera sees the face of a card lying face down, as it should; a card that shows its back
# there is reversed (face up in the deck).
#
# Templates (grayscale images, loaded once at power-up and made black and white as the frames
# are: image.Image.binary with layout.PAPER): ranks {'A': img, ...} keyed by the
# rank's letter of firmware/shoe/cards.py ('23456789TJQKA'; 'Jk' for the joker's corner, which
# has no suit), suits {'s': img, ...}, back: the back's corner (None: no back template, a
# reversed card is then unreadable).
import layout

UNREAD = ("??", 0, 0)


def _score(img, tpl, at, slack):
    """The best SSIM mean (percent) of tpl placed within slack px of at."""
    best = -100
    x0, y0 = at
    for dy in range(-slack, slack + 1):
        for dx in range(-slack, slack + 1):
            s = img.get_similarity(tpl, x0 + dx, y0 + dy)
            m = int(s.mean * 100)
            if m > best:
                best = m
    return best


def _best(img, templates, at, slack):
    """(name, confidence percent) of the template that matches best; its lead over the
    runner-up under MARGIN_PCT takes its confidence down with it."""
    first, second, name = -100, -100, None
    for key in templates:
        s = _score(img, templates[key], at, slack)
        if s > first:
            first, second, name = s, first, key
        elif s > second:
            second = s
    conf = first
    if first - second < layout.MARGIN_PCT:
        conf = first * max(0, first - second) // layout.MARGIN_PCT
    return name, max(0, min(100, conf))


class IndexReader:
    """snapshot: () -> the frame (image.Image, grayscale); ranks, suits, back: the templates."""

    def __init__(self, snapshot, ranks, suits, back=None):
        self.snapshot = snapshot
        self.ranks = ranks
        self.suits = suits
        self.back = back

    def light(self, img=None):
        """The white reference's mean grey (the illumination's check)."""
        if img is None:
            img = self.snapshot()
        return img.get_statistics(roi=layout.LIGHT_ROI).mean

    def read(self):
        """(card name, face_up 0/1, confidence percent): UNREAD when no card is in the
        window or nothing matches; ('??', 1, c) for a reversed card (its face is not seen)."""
        img = self.snapshot()
        if img.get_statistics(roi=layout.CORNER).mean <= layout.EMPTY_MAX:
            return UNREAD
        img.binary(layout.PAPER)  # ink black, paper white: the sensor's noise and the light's
        #                           level out of the comparison (the templates are made so too)
        rank, rc = _best(img, self.ranks, layout.RANK_AT, layout.SLACK)
        if self.back is not None:
            bc = _score(img, self.back, layout.BACK_AT, layout.SLACK)
            if bc > rc:
                return ("??", 1, max(0, min(100, bc)))
        if rank is None:
            return UNREAD
        if rank == "Jk":
            return ("Jk", 0, rc)
        suit, sc = _best(img, self.suits, layout.SUIT_AT, layout.SLACK)
        if suit is None:
            return UNREAD
        return (rank + suit, 0, min(rc, sc))
