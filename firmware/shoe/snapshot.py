# A hand's counters as a fixed image, for the flash journal: it stores the image's changes as
# (offset, value) pairs, and a hand's zones are rebuilt from its log entries, so the stub's order
# is never written.

IMAGE_SIZE = 147
_SCALARS = ("status", "initial_done", "nstreet", "draw_round", "window_closed", "n_actions",
            "n_chips", "dispensed")
# what each counter is ever compared with: beyond it a change means nothing (and costs flash)
_CAP = (255, 255, 255, 255, 255, 3, 3, 2)
# list fields: (attribute, offset of the length byte, capacity)
_LISTS = (("replace_queue", 35, 10), ("down3", 46, 10), ("returning", 70, 4))
_SMALL = ("exposures", "boxed_initial", "extra_initial")
# 13, 14 and 57..69 are unused (they held the burn flags and queue the ledger replaced)


def image(hand):
    img = bytearray(IMAGE_SIZE)
    for i in range(len(_SCALARS)):
        v = getattr(hand, _SCALARS[i])
        img[i] = min(_CAP[i], int(v))
    img[8] = hand.first_two[0]
    img[9] = hand.first_two[1]
    for i in range(len(_SMALL)):
        img[10 + i] = min(255, int(getattr(hand, _SMALL[i])))
    img[15] = 255 if hand.reason_num is None else hand.reason_num
    img[16:24] = hand.burn_for  # the burn ledger: what each street owes the burns
    img[24:35] = hand.seat_states
    for name, at, cap in _LISTS:
        items = getattr(hand, name)
        if len(items) > cap:
            raise ValueError("%s holds %d items (room for %d)" % (name, len(items), cap))
        img[at] = len(items)
        for k in range(len(items)):
            img[at + 1 + k] = items[k]
    ls = hand.last_street
    img[75] = 255 if ls is None else len(ls)
    if ls is not None:
        if len(ls) > 16:
            raise ValueError("last street holds %d cards" % len(ls))
        for k in range(len(ls)):
            img[76 + k] = ls[k]
    img[92:145] = hand.discards
    img[145] = hand.step.kind
    img[146] = hand.step.want
    return img


def apply_image(hand, img):
    for i in range(len(_SCALARS)):
        setattr(hand, _SCALARS[i], img[i])
    hand.window_closed = bool(img[4])
    hand.first_two = bytearray(img[8:10])
    for i in range(len(_SMALL)):
        setattr(hand, _SMALL[i], img[10 + i])
    hand.reason_num = None if img[15] == 255 else img[15]
    hand.reason = None
    if img[15] != 255:  # the catalogue, read for the reason's text (shoe.hand.procedure)
        from shoe import procedures as P

        hand.reason = P.text(img[15])
    hand.burn_for = bytearray(img[16:24])
    hand.seat_states = bytearray(img[24:35])
    for name, at, cap in _LISTS:
        setattr(hand, name, list(img[at + 1:at + 1 + img[at]]))
    hand.last_street = None if img[75] == 255 else list(img[76:76 + img[75]])
    hand.discards = bytearray(img[92:145])
    hand.step.kind = img[145]
    hand.step.want = img[146]


def diff(old, new):
    """(offset, value) pairs where new differs from old, as bytes."""
    out = bytearray()
    for i in range(IMAGE_SIZE):
        if old[i] != new[i]:
            out.append(i)
            out.append(new[i])
    return out


def patch(img, pairs):
    for i in range(0, len(pairs) - 1, 2):
        img[pairs[i]] = pairs[i + 1]
