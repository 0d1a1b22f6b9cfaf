# Errors for bad input. Raised before anything changes: a rejected operation changes nothing.
from shoe.compat import const

E_ARG = const(1)     # bad argument (unknown card, impossible seat, bad value)
E_STATE = const(2)   # wrong state for the command


class ShoeError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message
