# A fake of MicroPython's machine.I2C for the rp2 port, on tests/fakes/machine.py's board: kept
# out of the fake machine module (every world imports that one, on a tight heap) and put into it
# by the devices that need a bus (tests/fakes/pca9685.py): machine.I2C = I2C.
# machine.I2C as ports/rp2/machine_i2c.c (MicroPython, micropython/micropython) makes it: bus 0
# or 1, else ValueError "I2C(n) doesn't exist"; scl and sda checked as IS_VALID_SCL and
# IS_VALID_SDA do (SCL on an odd GPIO, SDA on an even one, bit 1 of the GPIO the bus's number:
# ValueError "bad SCL pin" / "bad SDA pin"); freq 400 kHz by default. writeto_mem, readfrom_mem
# and readfrom_mem_into are extmod/machine_i2c.c's: the device address, the register address
# byte, then the data, one transaction; a device that does not acknowledge makes the transfer
# fail with -MP_EIO (machine_i2c_transfer_single: any error but a timeout), raised as
# OSError(5). The devices are the test's: board.i2c[(bus, address)] with write(reg, data) and
# read(reg, n). A transfer takes its bits' time on the board's clock (start, address, register,
# data: 9 clocks a byte).

from machine import board

EIO = 5




class I2C:
    def __init__(self, id, freq=400000, *, scl=None, sda=None, timeout=50000):
        if id not in (0, 1):
            raise ValueError("I2C(%d) doesn't exist" % id)
        for pin, odd, what in ((scl, 1, "SCL"), (sda, 0, "SDA")):
            g = getattr(pin, "id", pin)
            if g is not None and (g & 1 != odd or (g & 2) >> 1 != id):
                raise ValueError("bad %s pin" % what)
        self.id = id
        self.freq = freq
        self.scl = getattr(scl, "id", scl)
        self.sda = getattr(sda, "id", sda)
        self.transfers = 0

    def _device(self, addr, n):
        board.advance_us((n + 2) * 9 * 1000000 // self.freq + 1)
        self.transfers += 1
        dev = board.i2c.get((self.id, addr))
        if dev is None or getattr(dev, "dead", False):
            raise OSError(EIO)
        return dev

    def writeto_mem(self, addr, memaddr, buf, *, addrsize=8):
        self._device(addr, len(buf)).write(memaddr, bytes(buf))

    def readfrom_mem(self, addr, memaddr, nbytes, *, addrsize=8):
        return bytes(self._device(addr, nbytes).read(memaddr, nbytes))

    def readfrom_mem_into(self, addr, memaddr, buf, *, addrsize=8):
        data = self.readfrom_mem(addr, memaddr, len(buf))
        for i in range(len(buf)):
            buf[i] = data[i]
