# asyncio's waits on the fake board's clock, for the MicroPython scripts whose cases run the
# firmware's main loop (tests/mp_rp2_test.py, tests/mp_pico_port_test.py). A module of its own:
# the carousel's cases run near their 256 KB heap's edge and never import it.
import machine  # the fake (tests/fakes/machine.py)


def asyncio_on_the_board():
    """The shoe's time passes while asyncio waits. Its scheduler waits for the next task in
    its IOQueue's select.poll().ipoll(dt) (extmod/asyncio/core.py, run_until_complete and
    IOQueue.wait_io_event): here a wait of dt ms also advances the board by dt ms (running
    what falls due), then waits as before. Its clock stays the real one: the C TaskQueue of
    extmod/modasyncio.c stamps a task pushed without a key with mp_hal_ticks_ms(). On a Pico
    the idle loop's `await asyncio.sleep_ms(1)` takes 1 ms of the shoe's time; without this it
    took a real millisecond here and only a call's cost (50 us) of the board's, so 5 s of the
    board's time cost over two minutes of the test's."""
    import select
    import asyncio.core as core

    class Poll:
        def __init__(self):
            self.p = select.poll()

        def register(self, s, mask=select.POLLIN | select.POLLOUT):
            self.p.register(s, mask)

        def modify(self, s, mask):
            self.p.modify(s, mask)

        def unregister(self, s):
            self.p.unregister(s)

        def ipoll(self, dt=-1, flags=0):
            if dt > 0:
                machine.board.advance_us(dt * 1000)
            return self.p.ipoll(dt, flags)

    class Select:
        POLLIN = select.POLLIN
        POLLPRI = getattr(select, "POLLPRI", 2)
        POLLOUT = select.POLLOUT
        POLLERR = select.POLLERR
        poll = Poll

    core.select = Select
    core.new_event_loop()  # its IOQueue's poller advances the board now
