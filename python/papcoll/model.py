"""The cost model of a network (SimModel: LogGP-style latency, overheads, gap, bandwidth, the
reduce and copy costs, the eager limit, a shaped link's bucket), the named crossbar presets,
and setting parameters by their `--param` names (with_values, with_parameters).

Model parameters (SI units) and their names in `--param`:
  latency (L, alpha, alpha_p)   wire time of a message, overlapped with everything
  overhead (o, o_s, alpha_r)    the sender's CPU time per message
  receive_overhead (o_r)        the receiver's (default: the same as overhead)
  gap (g)                       least time between two messages leaving one NIC
  seconds_per_byte (G, beta)    NIC time per byte
  reduce_seconds_per_byte (gamma), copy_seconds_per_byte (copy)
  eager_limit_bytes (eager)     larger messages wait for their receive (-1: all eager)
  burst_bytes (burst)           a token bucket per NIC side: a shaped link (0: none)
  burst_seconds_per_byte        what a byte the bucket covers costs (the unshaped path)
The presets are crossbars; papcoll.network adds topologies (geo-2site, geo-3site, files).

A leaf below both the loader (papcoll.network, which reads a model from a preset or a file)
and the simulator (papcoll.sim, which runs one), so that neither imports the other for it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .checks import finite, real_number, whole_number

# An eager limit beyond this is no limit (the C engine takes an int64).
_MAX_EAGER_LIMIT_BYTES = 1 << 62


@dataclass(frozen=True)
class SimModel:
    latency: float = 0.0
    overhead: float = 0.0    # the sender's CPU time per message (o, o_s)
    gap: float = 0.0
    seconds_per_byte: float = 0.0
    reduce_seconds_per_byte: float = 0.0
    copy_seconds_per_byte: float = 0.0
    eager_limit_bytes: int = -1  # messages up to this size go eagerly; -1: all of them
    # the receiver's CPU time per message (o_r); None: the same as overhead (one o at each
    # end, LogP's usual simplification and every preset's)
    receive_overhead: float | None = None
    # a token bucket of this many bytes on each NIC side (a shaped link: the testbed's tbf);
    # 0: none. Crossbar only. Bytes the bucket covers cost burst_seconds_per_byte each.
    burst_bytes: float = 0.0
    burst_seconds_per_byte: float = 0.0

    def __post_init__(self) -> None:
        if self.receive_overhead is None:
            object.__setattr__(self, "receive_overhead", self.overhead)
        for name in ("latency", "overhead", "receive_overhead", "gap", "seconds_per_byte",
                     "reduce_seconds_per_byte", "copy_seconds_per_byte", "burst_bytes",
                     "burst_seconds_per_byte"):
            real_number(getattr(self, name), f"SimModel.{name}", 0.0)
        whole_number(self.eager_limit_bytes, "SimModel.eager_limit_bytes", -1,
                     _MAX_EAGER_LIMIT_BYTES)

    @property
    def overheads(self) -> float:
        """o_s + o_r: what one message costs the two CPUs it touches."""
        return self.overhead + float(self.receive_overhead or 0.0)


# Named networks. hockney: alpha-beta-gamma with alpha 1 us, 10 GB/s, reduce 4 GB/s.
# ethernet-1g: Proficz 2018's testbed class (1 Gb/s, ~50 us latency). infiniband-fdr: 56 Gb/s.
# aries: Ruefenacht et al. 2017, Table 1 (alpha_p = 1.34 us, alpha_r = 0.34 us).
PRESETS: dict[str, SimModel] = {
    "hockney": SimModel(latency=1e-6, seconds_per_byte=1e-10, reduce_seconds_per_byte=2.5e-10),
    "ethernet-1g": SimModel(latency=50e-6, overhead=5e-6, seconds_per_byte=8e-9,
                            reduce_seconds_per_byte=5e-10, copy_seconds_per_byte=1e-10,
                            eager_limit_bytes=65536),
    "infiniband-fdr": SimModel(latency=1e-6, overhead=0.5e-6, seconds_per_byte=1.5e-10,
                               reduce_seconds_per_byte=2.5e-10, copy_seconds_per_byte=1e-10,
                               eager_limit_bytes=12288),
    "aries": SimModel(latency=1.34e-6, overhead=0.34e-6, seconds_per_byte=1e-10,
                      reduce_seconds_per_byte=2.5e-10, copy_seconds_per_byte=1e-10,
                      eager_limit_bytes=8192),
}

_PARAMETER_NAMES = {
    "latency": "latency", "L": "latency", "alpha": "latency", "alpha_p": "latency",
    "overhead": "overhead", "o": "overhead", "o_s": "overhead", "alpha_r": "overhead",
    "receive_overhead": "receive_overhead", "o_r": "receive_overhead",
    "gap": "gap", "g": "gap",
    "seconds_per_byte": "seconds_per_byte", "G": "seconds_per_byte", "beta": "seconds_per_byte",
    "reduce_seconds_per_byte": "reduce_seconds_per_byte", "gamma": "reduce_seconds_per_byte",
    "copy_seconds_per_byte": "copy_seconds_per_byte", "copy": "copy_seconds_per_byte",
    "eager_limit_bytes": "eager_limit_bytes", "eager": "eager_limit_bytes",
    "burst_bytes": "burst_bytes", "burst": "burst_bytes",
    "burst_seconds_per_byte": "burst_seconds_per_byte",
}


def preset(name: str) -> SimModel:
    if name not in PRESETS:
        raise ValueError(f"unknown crossbar preset '{name}' (presets: {', '.join(PRESETS)}; "
                         "topologies: papcoll.network.load_network)")
    return PRESETS[name]


def with_values(model: SimModel, values: dict[str, Any]) -> SimModel:
    """The model with the named parameters replaced; each value must be a real number
    (a string is refused here: a network file's "latency": "1e-6,overhead=5" must not set
    the overhead). Names as in `--param` (latency or L or alpha, ...)."""
    changes: dict[str, float | int] = {}
    for name, value in values.items():
        field_name = _PARAMETER_NAMES.get(str(name).strip())
        if field_name is None:
            raise ValueError(f"unknown model parameter '{name}' "
                             f"(known: {', '.join(sorted(_PARAMETER_NAMES))})")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"model parameter {name} must be a number, not {value!r}")
        if not (finite(value) and value >= 0):
            raise ValueError(f"model parameter {name} must be a finite number >= 0, "
                             f"not {value}")
        if field_name == "eager_limit_bytes":
            if value != int(value) or value > _MAX_EAGER_LIMIT_BYTES:
                raise ValueError(f"model parameter {name} must be a whole number of bytes "
                                 f"from 0 to 2^62, not {value}")
            changes[field_name] = int(value)
        else:
            changes[field_name] = float(value)
    # one o sets both ends unless o_r is given too (files written before o_r existed)
    if "overhead" in changes and "receive_overhead" not in changes:
        changes["receive_overhead"] = changes["overhead"]
    return replace(model, **changes)  # type: ignore[arg-type]


def with_parameters(model: SimModel, text: str) -> SimModel:
    """'alpha=5e-5,beta=8e-9' -> the model with those parameters replaced."""
    values: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, equals, value = item.partition("=")
        if not equals:
            raise ValueError(f"model parameter '{item}' needs a value: NAME=NUMBER")
        try:
            values[name.strip()] = float(value)
        except ValueError:
            raise ValueError(f"model parameter {name.strip()} needs a number, "
                             f"not '{value}'") from None
    return with_values(model, values)
