# The CRC-16 of the house: CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final
# xor; check value crc16(b"123456789") == 0x29B1). One table for every user: the protocol's
# frames (wire.py), the journal's records (firmware/journal.py) and the card reader's lines
# (firmware/hal/rp2mech.py). In protocol/ beside wire.py (the shoe's image has both at its root);
# a module of its own so that the journal and the hardware layer need not
# import the protocol's codec (about 18 KB of a Pico's heap) for one function.
from array import array


def _table():
    t = array("H", bytes(512))
    for i in range(256):
        c = i << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else (c << 1)
        t[i] = c & 0xFFFF
    return t


TABLE = _table()


def crc16_range(buf, start, end, crc=0xFFFF):
    """The CRC of buf[start:end] (no slice made), continuing from crc."""
    t = TABLE
    for i in range(start, end):
        crc = ((crc << 8) & 0xFF00) ^ t[((crc >> 8) ^ buf[i]) & 0xFF]
    return crc


def crc16(data, crc=0xFFFF):
    """The CRC of data (bytes-like), continuing from crc."""
    t = TABLE
    for b in data:
        crc = ((crc << 8) & 0xFF00) ^ t[((crc >> 8) ^ b) & 0xFF]
    return crc
