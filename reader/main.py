# The reader board's script (OpenMV Cam H7 R2): wired at power-up, says its status to the Pico,
# then answers the Pico's lines for ever (reader/README.md: what goes on its flash).
import image
import machine
import sensor
import time

from wiring import wire

board = wire(sensor, image, machine, time)
board.hello()
while True:
    board.poll()
    time.sleep_ms(1)
