"""The lab: tools that measure, fit and check papcoll from outside a program (the
benchmark driver, calibration, validation against the simulator, the emulated cluster, the
paper reproductions, the mpiexec launcher, timeline plots and GOAL export).

Kept apart from the library (papcoll itself: the bindings, Communicator, the torch hook,
the network model and the simulator) so that a program importing papcoll never loads the
lab, and the dependencies point one way only: the lab and the command line (papcoll.cli)
use the library, the library uses neither (tests/python/test_layout.py checks it).
"""
