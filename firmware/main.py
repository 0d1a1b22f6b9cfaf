# Boot: pick the hardware face for this board, restore the shoe from flash, serve the host.
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
    link = Link(hal.open_port(), device, hal.clock, hal.caps)
    hal.mech.idle = link.idle
    hal.log("facedown %s ready: hand %d, events up to %d" % (
        device_version(), device.hand_no, device.event_next - 1))
    asyncio.run(link.run())


def device_version():
    from device import FIRMWARE_VERSION

    return FIRMWARE_VERSION


main()
