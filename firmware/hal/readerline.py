# The line between the Pico and the reader board (the OpenMV Cam on UART0; hardware/pinmap.json
# reader.frame): its frame and every message, declared once. The Pico's side imports it
# (hal/rp2mech.py's Reader, hal/decks_rp2.py, hal/loader_board.py), and so does the reader
# board's script (reader/answer.py), whose image carries this file as hal/readerline.py beside
# crc.py (reader/README.md). A frame is ASCII: '$' body '*' CRC-16 (crc.py) of the body in four
# upper-case hex digits, then '\n'; the body is the message's name and its fields, comma
# separated. Every request is answered by the message named in REPLY:
#   $RD,<seq>         -> $CD,<seq>,<card>,<face_up>,<confidence>[,<back>]   read the held card
#   $ST               -> $ST,<code>          the reader's status (also sent after its power-up)
#   $MG,<A|B>         -> $MG,<A|B>,<1|0>     the clutches: the next pick from the dealing
#                        magazine (A) or the gather tray (B); the gather tray's beam (revision C)
#   $PK,<S|E>         -> $PK,<S|E>,<n>       the pocket sensor's count: S zeroes it and counts
#                        from now (answered 0), E stops and gives the cards it saw (revision D)
#   $EB,<0|1>         -> $EB,<0|1>,<1|0|?>   that escrow's beam: 1 a card, 0 clear, ? cannot
#                        tell (revision D)
# A line the board cannot take is answered $ER,<reason> (REASONS), and nothing moves; the Pico
# never waits for $ER (it repeats a request that gets no answer), so it is only a report.
from crc import crc16

MAX_LEN = 40        # the longest frame, newline excluded (pinmap.json reader.frame.max_len)

RD = "RD"
CD = "CD"
ST = "ST"
MG = "MG"
PK = "PK"
EB = "EB"
ER = "ER"

# request -> (its field count, the name included; the reply's name; the reply's field counts)
REPLY = {
    RD: (2, CD, (5, 6)),
    ST: (1, ST, (2,)),
    MG: (2, MG, (3,)),
    PK: (2, PK, (3,)),
    EB: (2, EB, (3,)),
}

# the status codes of $ST
READY = "READY"
CAMERA = "CAMERA"   # no image from the camera
LIGHT = "LIGHT"     # the illumination: the empty window's white reference out of range

# the magazines of $MG, the pocket count's steps of $PK
DEAL = "A"
GATHER = "B"
START = "S"
END = "E"
UNKNOWN = "?"       # a beam or a back the board cannot tell

# $ER's reasons: not a frame or a bad CRC; longer than MAX_LEN; no such message; a field wrong
BAD_FRAME = "FRAME"
TOO_LONG = "LONG"
NO_SUCH = "UNKNOWN"
BAD_FIELD = "FIELD"


def frame(body):
    """'RD,07' -> b'$RD,07*XXXX\\n' (CRC-16/CCITT-FALSE of the body, 4 upper-case hex)."""
    b = body.encode()
    return b"$" + b + b"*" + (b"%04X" % crc16(b)) + b"\n"


def parse_frame(line, max_len=MAX_LEN):
    """A received line (without its newline) -> its fields (list of str), or None when it is
    not a well-formed frame with a good CRC."""
    if len(line) > max_len or len(line) < 7 or line[0] != 0x24:  # '$'
        return None
    star = len(line) - 5
    if line[star] != 0x2A:  # '*'
        return None
    body = line[1:star]
    try:
        crc = int(bytes(line[star + 1:]).decode(), 16)
        text = bytes(body).decode()
    except (ValueError, UnicodeError):
        return None
    if crc != crc16(body):
        return None
    return text.split(",")
