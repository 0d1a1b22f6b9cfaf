# How long a stepper move takes, from the pin map's figures: the trapezoid (or, for a short
# move, the triangle) that the Stepper's ramps never exceed. One formula for the pin map's
# budget (hal/pins.py), the simulator's stops (hal/simstops.py) and the carousel's
# constant-time loading (hal/carousel_rp2.py).


def move_ms(steps, rate, accel):
    """Ms for a move of `steps` from rest to rest, at up to `rate` steps/s, accelerating at
    `accel` steps/s^2."""
    if steps * accel >= rate * rate:  # long enough to reach the rate
        return (steps / rate + rate / accel) * 1000
    return 2000 * (steps / accel) ** 0.5
