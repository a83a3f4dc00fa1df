"""What papcoll's auto decided and what a PAP-aware call ran on, as Python reads them from
the C library (papcoll_last_choice, papcoll_persistent_last_choice, papcoll_last_prediction):
Choice and Prediction, shared by the Communicator (communicator.py) and its persistent
requests (nonblocking.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._core import ffi


@dataclass(frozen=True)
class Prediction:
    """What the last call of auto or a PAP-aware algorithm (slt, prr, straggler) ran on
    (C: papcoll_last_prediction)."""

    predicted: bool          # False: no usable prediction: the plain ring (auto: native) ran
    arrivals: list[float]    # seconds after the earliest predicted arrival, per rank
    tau: float               # seconds to move and reduce one segment, as used


@dataclass(frozen=True)
class Choice:
    """What the last "auto" call ran, and why (C: papcoll_last_choice)."""

    algorithm: str             # a registered name, "native" (MPI_Allreduce itself) or
    #                            "native:NAME" (one of the MPI library's own algorithms)
    from_arrivals: bool        # the cost model compared algorithms on predicted arrivals
    from_groups: bool          # the groups formed a hierarchy: hierarchical ones weighed too
    predicted_seconds: float   # the model's e-bar for its choice (model_algorithm)
    native_seconds: float      # the model's e-bar for MPI_Allreduce
    # auto's closed loop (docs/mpi.md): the model's time after the last arrival is
    # its e-bar less wait_seconds; the measured one is from the last arrival to completion
    wait_seconds: float = 0.0          # the model's mean wait for the last arrival
    model_algorithm: str = ""          # the model's choice (algorithm may be the alternative)
    alternative: str = ""              # what the loop measures it against ("": nothing)
    alternative_seconds: float = 0.0   # the model's e-bar for the alternative
    observed_seconds: float = 0.0      # measured median, last arrival to completion: model's
    alternative_observed_seconds: float = 0.0  # ... and the alternative's
    observed_calls: int = 0            # calls each median counts (<= 5; 0: an old variant's)
    alternative_observed_calls: int = 0
    probe: bool = False                # this call ran the alternative to measure it
    overruled: bool = False            # measurements overruled the model
    path_seconds: float = 0.0          # this rank's time in auto's own path this call
    decided_by: int = -1               # the rank that simulated this decision and sent it
                                       # to the others (-1: kept from an earlier call)
    decision_seconds: float = 0.0      # this rank's time on the decision: simulating,
                                       # waiting for the decider, or a lookup
    rule: str = ""                     # "FILE:LINE" of the rules file's rule that decided
                                       # ("": the model did; docs/rules.md)

    @property
    def predicted_gain(self) -> float:
        """native_seconds / predicted_seconds (1.0 when nothing was simulated)."""
        if self.predicted_seconds <= 0:
            return 1.0
        return self.native_seconds / self.predicted_seconds

    @classmethod
    def from_c(cls, raw: Any) -> Choice:
        """From a papcoll_choice (cffi)."""
        return cls(ffi.string(raw.algorithm).decode(), bool(raw.from_arrivals),
                   bool(raw.from_groups), float(raw.predicted_seconds),
                   float(raw.native_seconds), float(raw.wait_seconds),
                   ffi.string(raw.model_algorithm).decode(),
                   ffi.string(raw.alternative).decode(), float(raw.alternative_seconds),
                   float(raw.observed_seconds), float(raw.alternative_observed_seconds),
                   int(raw.observed_calls), int(raw.alternative_observed_calls),
                   bool(raw.probe), bool(raw.overruled), float(raw.path_seconds),
                   int(raw.decided_by), float(raw.decision_seconds),
                   ffi.string(raw.rule).decode())
