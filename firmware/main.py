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


HAL = []  # the hardware face, once built (the failure path asks it about the key switch)


def main():
    import gc

    hal = select_hal()
    HAL.append(hal)
    from integrity import boot  # first, while the heap is nearly empty

    checked = boot(hal.store)
    del sys.modules["integrity"]
    gc.collect()
    from device import Device
    from link import Link

    device = Device(hal, checked)
    port = hal.open_port()
    link = Link(port, device, hal.clock, hal.caps)
    hal.mech.idle = link.idle
    hal.log("facedown %s ready: hand %d, events up to %d%s" % (
        device_version(), device.hand_no, device.event_next - 1,
        " (modules in the ROMFS)" if getattr(sys.modules["device"], "__file__", "").startswith(
            "/rom/") else ""))
    asyncio.run(link.run())
    # only maintenance ends the loop: main.py returns and the REPL takes the serial line
    if hasattr(port, "close"):
        port.close()
    hal.log("maintenance: the REPL has the line")


def device_version():
    from device import FIRMWARE_VERSION

    return FIRMWARE_VERSION


def production():
    """A shoe with its key is in production: no REPL on the line unless the maintenance key
    switch is turned (the technician's physical presence)."""
    import os

    try:
        os.stat("device.key")
    except OSError:
        return False  # installation: the REPL is how the key and the firmware get there
    try:
        return not HAL[0].maintenance_switch()
    except Exception:  # no HAL to ask: the switch counts as off
        return True


def halt():
    """The firmware failed on a shoe in production: never the REPL (a crash must not open the
    device to whoever is on the cable). Motors are off (pins reset); nothing is dealt; a
    technician turns the maintenance key and power-cycles to repair it (facedown deploy)."""
    import micropython

    micropython.kbd_intr(-1)  # Ctrl-C on the line must not break out to the REPL
    if sys.platform != "rp2":
        from hal.sim import power_off  # the simulator: the process stops, nothing answers

        power_off()
    try:
        HAL[0].stop_watchdog()  # no reboot loop writing the flash over and over
    except Exception:
        pass
    import time

    while True:
        try:
            time.sleep(1)
        except BaseException:
            pass
def release():
    """Maintenance: the firmware's modules leave the heap (the device and the link went with
    main()), so that the REPL and mpremote's scripts have the room: copying a file takes a
    few KB in one piece."""
    import gc

    for name in list(sys.modules):
        if name not in ("sys", "asyncio", "vfs") and not name.startswith("asyncio."):
            del sys.modules[name]  # (vfs: built in; the virtual shoe's ROMFS stands in for it)
    gc.collect()


try:
    main()
    release()
except Exception as e:  # a Pico's stderr is USB; the virtual shoe's, its log
    sys.print_exception(e, sys.stderr)
    if production():
        halt()
    # otherwise the REPL takes the line, as after maintenance (installation, or the key turned)
except BaseException as e:
    if type(e).__name__ == "PowerCut":  # the simulator's power cut: the process dies now
        from hal.sim import power_off   # (-i would hand the line to the REPL instead)

        power_off(e)
    raise
