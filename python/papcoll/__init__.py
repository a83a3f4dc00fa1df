"""papcoll: all-reduce for MPI programs whose processes do not arrive at the collective
together. This package binds the MPI-free core (algorithms as schedules, the verifier)."""

from .core import (
    AlgorithmInfo,
    Context,
    PapcollError,
    VerifyReport,
    algorithm,
    algorithms,
    schedule_text,
    verify,
    verify_texts,
)

__version__ = "0.1.0"

__all__ = [
    "AlgorithmInfo",
    "Context",
    "PapcollError",
    "VerifyReport",
    "algorithm",
    "algorithms",
    "schedule_text",
    "verify",
    "verify_texts",
]
