# Boot: pick the hardware face for this board, restore the shoe from flash, serve the host.
# The serial line is the REPL's too (the Pico's USB CDC; the virtual shoe runs `micropython -i`
# on its pty): the maintenance command ends the loop and main.py returns to the REPL, for
# mpremote (facedown deploy / verify). Nothing here prints: the log goes to hal.log.
import sys

import asyncio


def select_hal():
    if sys.platform == "rp2":
        from hal.rp2 import Rp2Hal  # the Pico (hardware issue)

        return Rp2Hal()
    from hal.sim import SimHal

    return SimHal()


def main():
    from device import Device
    from link import Link

    hal = select_hal()
    device = Device(hal)
    port = hal.open_port()
    link = Link(port, device, hal.clock, hal.caps)
    hal.mech.idle = link.idle
    hal.log("facedown %s ready: hand %d, events up to %d" % (
        device_version(), device.hand_no, device.event_next - 1))
    asyncio.run(link.run())
    # only maintenance ends the loop: main.py returns and the REPL takes the serial line
    if hasattr(port, "close"):
        port.close()
    hal.log("maintenance: the REPL has the line")


def device_version():
    from device import FIRMWARE_VERSION

    return FIRMWARE_VERSION


def release():
    """Maintenance: the firmware's modules leave the heap (the device and the link went with
    main()), so that the REPL and mpremote's scripts have the room: copying a file takes a
    few KB in one piece."""
    import gc

    for name in list(sys.modules):
        if name not in ("sys", "asyncio") and not name.startswith("asyncio."):
            del sys.modules[name]
    gc.collect()


try:
    main()
    release()
except Exception as e:  # then the REPL: the line is the REPL's, as after maintenance
    sys.print_exception(e, sys.stderr)  # a Pico's stderr is USB; the virtual shoe's, its log
except BaseException as e:
    if type(e).__name__ == "PowerCut":  # the simulator's power cut: the process dies now
        from hal.sim import power_off   # (-i would hand the line to the REPL instead)

        power_off(e)
    raise
