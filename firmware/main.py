# No Ctrl-C while the shoe boots. pyexec turns the interrupt character on just before main.py's
# code runs (shared/runtime/pyexec.c, parse_compile_execute), and on a Pico a 0x03 from the USB
# line then raises KeyboardInterrupt wherever the code is (shared/tinyusb/mp_usbd_cdc.c,
# tud_cdc_rx_cb): any host's probe can send one, and it must not break into the REPL. The
# protocol's port keeps it off (hal: open_port); at the REPL, pyexec manages it again.
import micropython

micropython.kbd_intr(-1)

# Boot: pick the hardware face for this board, restore the shoe from flash, serve the host.
# The serial line is the REPL's too (the Pico's USB CDC; the virtual shoe runs `micropython -i`
# on its pty): the maintenance command ends the loop and main.py returns to the REPL, for
# mpremote (facedown deploy / verify). Nothing here prints: the log goes to hal.log. Every way
# out of main() closes the port and stops the watchdog (close()); on a shoe in production any
# failure, whatever it raises, ends in halt(), never at the REPL.
import sys

import asyncio


def select_hal():
    # each branch imports what its target's image ships (firmware/targets/pico.py, sim.py)
    if sys.platform == "rp2":
        from hal.reserve import move_old_folder

        move_old_folder()  # before anything imports journal (hal/reserve.py, DIR)
        from hal.rp2 import Rp2Hal  # the Pico

        return Rp2Hal()
    else:
        from hal.sim import SimHal  # the virtual shoe

        return SimHal()


HAL = []  # the hardware face, once built (the failure path asks it about the key switch)
PORT = []  # the protocol's port, while it is open


# A collection every GC_EVERY bytes allocated, from power-up on (MicroPython collects only when
# the heap is full): between two collections the garbage holds the low heap, so the objects
# that live for good (the hardware layer's, the device's, a hand's) were placed ever higher and
# the free space ended in small holes between them. Measured on the rp2 port in rp2040js: the
# largest free block before the main loop 26.6 KB without it, 66.1 KB with it (67.1 KB at 4 KB:
# the figure hardly depends on the size); after maintenance's release() 54.1 -> 81.3 KB.
GC_EVERY = 16384


def main():
    import gc

    if sys.platform == "rp2":  # (the virtual shoe's heap is the host's: no need to pay for it)
        gc.threshold(GC_EVERY)
    hal = select_hal()
    HAL.append(hal)
    from integrity import boot  # first, while the heap is nearly empty

    checked = boot(hal.store)
    # the function holds its module's globals: both go, or ~28 KB stay live for good (the
    # after-boot heap measured on the rp2 port in rp2040js)
    del boot
    del sys.modules["integrity"]
    gc.collect()
    from device import Device
    from link import Link

    device = Device(hal, checked)
    port = hal.open_port()
    PORT.append(port)
    link = Link(port, device, hal.clock, hal.caps)
    hal.mech.idle = link.idle
    hal.log("facedown %s ready: hand %d, events up to %d%s" % (
        device_version(), device.hand_no, device.event_next - 1,
        " (modules in the ROMFS)" if getattr(sys.modules["device"], "__file__", "").startswith(
            "/rom/") else ""))
    asyncio.run(link.run())
    # only maintenance ends the loop: main.py returns and the REPL takes the serial line
    hal.log("maintenance: the REPL has the line")


def close():
    """The protocol's port closed and the watchdog stopped (nobody feeds it at the REPL, nor
    in halt()): on every way out of main()."""
    while PORT:
        try:
            PORT.pop().close()
        except Exception:
            pass
    try:
        HAL[0].stop_watchdog()
    except Exception:  # no HAL, or one without a watchdog
        pass


def device_version():
    from device import FIRMWARE_VERSION

    return FIRMWARE_VERSION


def production():
    """A shoe with its key is in production: no REPL on the line unless the maintenance key
    switch is turned (the technician's physical presence)."""
    try:
        if HAL[0].store.read("device.key") is None:
            return False  # installation: the REPL is how the key and the firmware get there
    except Exception:  # no HAL yet: its working folder
        import os

        try:
            os.stat("device.key")
        except OSError:
            return False
    try:
        return not HAL[0].maintenance_switch()
    except Exception:  # no HAL to ask: the switch counts as off
        return True


def halt():
    """The firmware failed on a shoe in production: never the REPL (a crash must not open the
    device to whoever is on the cable). Motors are off (pins reset); nothing is dealt; a
    technician turns the maintenance key and power-cycles to repair it (facedown deploy)."""
    micropython.kbd_intr(-1)  # Ctrl-C on the line must not break out to the REPL
    close()  # (and the watchdog stopped: no reboot loop writing the flash over and over)
    if sys.platform != "rp2":
        from hal.sim import power_off  # the simulator: the process stops, nothing answers

        power_off()
    import time

    while True:
        try:
            time.sleep(1)
        except BaseException:
            pass


def release():
    """Maintenance: the firmware leaves the heap, so that the REPL and mpremote's scripts have
    the room (copying a file takes a few KB in one piece). The device and the link went with
    main(); the HAL (whose mechanism held the link) and the port go here, every firmware
    module, and asyncio's queues (a finished loop's queue still held its last task)."""
    import gc

    del HAL[:]
    del PORT[:]
    for name in list(sys.modules):
        if name not in ("sys", "asyncio", "vfs") and not name.startswith("asyncio."):
            del sys.modules[name]  # (vfs: built in; the virtual shoe's ROMFS stands in for it)
    asyncio.new_event_loop()
    gc.collect()


try:
    main()
except BaseException as e:  # whatever it is: KeyboardInterrupt, SystemExit, MemoryError ...
    if sys.platform != "rp2" and type(e).__name__ == "PowerCut":
        from hal.sim import power_off  # the simulator's power cut: the process dies now (-i
        #                                would hand the line to the REPL instead)

        power_off(e)
    close()
    sys.print_exception(e, sys.stderr)  # a Pico's stderr is USB; the virtual shoe's, its log
    if production():
        halt()
    # otherwise the REPL takes the line, as after maintenance (installation, or the key turned)
else:
    close()
    release()
