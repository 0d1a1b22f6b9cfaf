# The flash journal read back (journal.py's format): the boot's scan (the head found, the
# checkpoint restored, the open hand replayed, a torn or damaged record stepped over) and the
# walk of the whole ring that history, resume and verify make. Imported for the call by
# journal.py and let go after it (journal._reading): on a Pico a module's bytecode sits in the
# heap for as long as it is imported, and a shoe reads its journal back at power-up and on a
# technician's request only. Each function takes the Journal (j) it reads into.
from crc import crc16
from journalrec import (BLOCK, MAGIC, NONE32, R_BLOCK, R_CONFIG, R_HAND, R_COMMIT, R_CLOSE,
                        F_FEED, F_REPLY, F_ACMD, OpenHand, _u16, _u32, hand_hash)


def _seq(j, block):
    """The block's sequence number if its header is valid, else -1 (read into a buffer kept
    for it: boot reads every header and must not litter the heap)."""
    buf = j.rbuf
    view = memoryview(buf)
    j.dev.readblocks(block, view[:2], 0)
    n = buf[1]
    if buf[0] != R_BLOCK or n < 56:
        return -1
    j.dev.readblocks(block, view[:n + 4], 0)
    if crc16(view[:2 + n]) != _u16(buf, 2 + n) or view[2:6] != MAGIC:
        return -1
    return _u32(buf, 6)


def _read_seqs(j):
    """Fill j.seqs from the blocks' headers (seq + 1; 0 for a block that is not valid).
    Returns the newest block (-1: none)."""
    seqs = j.seqs
    head = -1
    for b in range(j.nblocks):
        seqs[b] = _seq(j, b) + 1  # 0: not a valid block
        if seqs[b] and (head < 0 or seqs[b] > seqs[head]):
            head = b
    return head


def _ordered(j):
    """Valid blocks as (seq, block), oldest first. The ring is written in order, so the
    oldest follows the newest."""
    seqs = j.seqs
    head = _read_seqs(j)
    out = []
    if head < 0:
        return out
    for i in range(1, j.nblocks + 1):
        b = (head + i) % j.nblocks
        if seqs[b]:
            out.append((seqs[b] - 1, b))
    return out


def boot(j):
    """Find the head, restore the checkpoint, replay the open hand. Never raises on a bad
    journal: what is wrong goes to j.problems."""
    blocks = _ordered(j)
    if not blocks:
        j._new_block(0, 1)
        return
    j.seq, j.block = blocks[-1]
    p, _ = j._header(j.block)
    _checkpoint(j, p)
    start_seq, start_off = _u32(p, 46), _u16(p, 50)
    chain = blocks
    if start_seq != NONE32:
        chain = [x for x in blocks if x[0] >= start_seq]
        if not chain or chain[0][0] != start_seq:
            j.problems.append(("the open hand's first block is missing", j.hand_no))
            start_off = 0
    else:
        chain = [blocks[-1]]
        start_off = 0
    end = None
    for i in range(len(chain)):
        seq, b = chain[i]
        off = start_off if (i == 0 and start_seq != NONE32) else j._header(b)[1]
        torn = _u16(j._header(chain[i + 1][1])[0], 52) if i + 1 < len(chain) else 0xFFFF
        end = _scan(j, b, seq, off, seq == j.seq, torn)
    j.off = end
    if end is None or end >= BLOCK - 16:
        j._new_block((j.block + 1) % j.nblocks, j.seq + 1)
    else:
        j._load_page()


def _checkpoint(j, p):
    j.hand_no = _u16(p, 8)
    j.event_next = _u32(p, 10)
    j.chain = bytes(p[14:46])
    n = _u16(p, 54)
    j.config = p[56:56 + n].decode() if n else None


def _scan(j, block, seq, off, head, torn=0xFFFF):
    """Apply records from off on. Returns the append offset (None: the block must not be
    appended to, e.g. after a torn record or one that is damaged). A damaged record is
    stepped over (the records after it that verify are applied) and marked on the open
    hand (OpenHand.damaged): the device latches until the floor ends that hand."""
    stepped = False
    while True:
        t, p, nxt = j._record(block, off)
        if t == 0:
            if head and not j._erased(block, off):
                j.problems.append(("damaged bytes after the end of block %d" % block,
                                      j.hand_no))
                return None
            return None if stepped else off
        if t < 0:
            n = j._read(block, off + 1, 1)[0] if off + 1 < BLOCK else 0
            if off == torn or (head and j._erased(block, min(BLOCK, off + 4 + n))):
                # the last record was torn by a power cut: never taken; start a new block
                if head:
                    j.torn = off
                return None
            j.problems.append(("damaged record in block %d at %d" % (block, off),
                                  j.hand.number if j.hand else j.hand_no))
            if j.hand is not None and j.hand.damaged is None:
                j.hand.damaged = (block, off)
            stepped = True
            off = _resync(j, block, off)
            if off >= BLOCK - 4:
                return None
            continue
        if t == R_HAND:
            j.hand_loc = (seq, off)
        _apply(j, t, p)
        off = nxt


def _valid_at(j, block, off):
    """Does a whole record with a good CRC start at off? (read into the buffer kept for
    it: a resync tries many offsets)"""
    if off + 4 > BLOCK:
        return False
    buf = j.rbuf
    j.dev.readblocks(block, j.rhead, off)
    n = buf[1]
    if not (R_BLOCK <= buf[0] <= R_CLOSE) or off + 4 + n > BLOCK:
        return False
    view = memoryview(buf)
    j.dev.readblocks(block, view[:n + 4], off)
    return crc16(view[:2 + n]) == _u16(buf, 2 + n)


def _resync(j, block, off):
    """The offset of the first good record after the damaged one at off (its length byte
    first, if it leads to one; else byte by byte), the end of the log (erased), or BLOCK."""
    n = j._read(block, off + 1, 1)[0] if off + 1 < BLOCK else 0
    skip = off + 4 + n
    if skip <= BLOCK - 4 and (_valid_at(j, block, skip) or j._erased(block, skip)):
        return skip
    buf = j.rbuf
    for p in range(off + 1, BLOCK - 3):
        j.dev.readblocks(block, j.rhead, p)
        if buf[0] == 0xFF:
            if j._erased(block, p):
                return p
        elif _valid_at(j, block, p):
            return p
    return BLOCK


def _apply(j, t, p):
    if t == R_CONFIG:
        j.config = p.decode()
        j.dealt = False
    elif t == R_HAND:
        j.dealt = True
        j.hand_no = _u16(p, 0)
        first = _u32(p, 2)
        j.hand = OpenHand(j.hand_no, first, p[6:].decode(), p)
        j.event_next = first
    elif t == R_COMMIT:
        h = j.hand
        if h is None:
            j.problems.append(("a commit outside any hand", j.hand_no))
            return
        n = p[0]
        h.entries.extend(p[1:1 + 4 * n])
        j.event_next += n
        i = 1 + 4 * n
        flags = p[i]
        m = p[i + 1]
        pairs = p[i + 2:i + 2 + 2 * m]
        i += 2 + 2 * m
        if h.image is None:
            h.image = bytearray(147)
        for k in range(0, len(pairs), 2):
            h.image[pairs[k]] = pairs[k + 1]
        h.feeding = p[i] if flags & F_FEED else -1
        if flags & F_FEED:
            i += 1
        if flags & F_REPLY:
            h.reply = (_u16(p, i), p[i + 2:], bool(flags & F_ACMD))
    elif t == R_CLOSE:
        if j.hand is not None:
            j.chain = p[2:34]
            j.last = j.hand
            j.hand = None


def walk(j, want, on_hand):
    """Read the whole journal, one hand at a time: on_hand(hand) for each hand as its
    records end; entries are gathered only for hands with want(number) true. Returns the
    problems found. The blocks are taken in order from j.seqs (no list of them: a
    history request comes when the heap is at its most cut up)."""
    problems = []
    cur = None
    prev = None
    head = _read_seqs(j)
    seqs = j.seqs
    nb = j.nblocks
    for b in range(nb):
        if not seqs[b] and not j._erased(b, 0):
            problems.append(("block %d has a damaged header" % b, None))
    i = 1
    while head >= 0 and i <= nb:
        b = (head + i) % nb
        i += 1
        if not seqs[b]:
            continue
        k = i  # the next valid block: its header says where a power cut tore this one
        while k <= nb and not seqs[(head + k) % nb]:
            k += 1
        p, off = j._header(b)
        torn = _u16(j._header((head + k) % nb)[0], 52) if k <= nb else 0xFFFF
        if prev is None:
            prev = bytes(p[14:46])
        while True:
            t, pl, nxt = j._record(b, off)
            if t == 0:
                if not j._erased(b, off):
                    problems.append(("damaged bytes after the end of block %d" % b,
                                     cur["hand"] if cur else None))
                break
            if t < 0:
                if off == torn:  # a record a power cut tore was never taken: not damage,
                    break        # and nothing follows it in its block
                if cur is not None:
                    cur["damaged"] = True
                problems.append(("damaged record in block %d at %d" % (b, off),
                                 cur["hand"] if cur else None))
                nxt = _resync(j, b, off)  # the records after it are still good
                if nxt >= BLOCK:
                    break
            if t == R_HAND:
                if cur is not None:
                    on_hand(cur)  # a hand that never closed
                n = _u16(pl, 0)
                cur = {"hand": n, "first_event": _u32(pl, 2), "config": pl[6:].decode(),
                       "head": pl, "entries": bytearray() if want(n) else None,
                       "hash": None, "damaged": False, "prev": prev}
            elif t == R_COMMIT and cur is not None and cur["entries"] is not None:
                cur["entries"].extend(pl[1:1 + 4 * pl[0]])
            elif t == R_CLOSE:
                if cur is not None:
                    cur["hash"] = bytes(pl[2:34])
                    if cur["entries"] is not None and (
                            cur["damaged"] or
                            hand_hash(prev, cur["head"], cur["entries"]) != cur["hash"]):
                        cur["damaged"] = True
                        problems.append(("hand %d does not match its chain hash" %
                                         cur["hand"], cur["hand"]))
                    on_hand(cur)
                    cur = None
                prev = bytes(pl[2:34])  # (its start may have fallen off the ring: go on)
            off = nxt
    if cur is not None:
        on_hand(cur)
    return problems
