"""papcoll: all-reduce for MPI programs whose processes do not arrive at the collective
together. This package binds the MPI-free core (algorithms as schedules, the verifier, the
simulator) and, for mpi4py programs, the MPI library: `papcoll.Communicator`.

`Communicator`, `Config` and `Prediction` are imported on first use, so that `import papcoll`
(the simulator, the verifier, the command line) neither needs mpi4py nor starts MPI.
"""

from typing import TYPE_CHECKING, Any

from .core import (
    AlgorithmInfo,
    Context,
    PapcollError,
    Parameters,
    VerifyReport,
    algorithm,
    algorithms,
    check_parameters,
    schedule_text,
    verify,
    verify_texts,
)

if TYPE_CHECKING:
    from .communicator import Choice as Choice
    from .communicator import Communicator as Communicator
    from .communicator import Config as Config
    from .communicator import PersistentRequest as PersistentRequest
    from .communicator import Prediction as Prediction
    from .communicator import Request as Request
    from .communicator import mpi_advances_requests as mpi_advances_requests

__version__ = "0.1.0"

# Not in __all__: `from papcoll import *` must not start MPI either.
_MPI_NAMES = ("Choice", "Communicator", "Config", "PersistentRequest", "Prediction",
              "Request", "mpi_advances_requests")


def __getattr__(name: str) -> Any:
    if name in _MPI_NAMES:
        from . import communicator

        return getattr(communicator, name)
    raise AttributeError(f"module 'papcoll' has no attribute {name!r}")


__all__ = [
    "AlgorithmInfo",
    "Context",
    "PapcollError",
    "Parameters",
    "VerifyReport",
    "check_parameters",
    "algorithm",
    "algorithms",
    "schedule_text",
    "verify",
    "verify_texts",
]
