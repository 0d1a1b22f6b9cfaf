# Hardware faces of the shoe's mechanism: `simmech` (simulated) now, `rp2` (Pico) later.
