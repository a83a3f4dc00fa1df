"""The buffers papcoll's Python all-reduce takes, checked before any C call: numpy arrays,
buffer-protocol objects and CPU DLPack tensors (torch), viewed without a copy, with the
predefined MPI datatype of their dtype; mpi4py's buffer specifications for the upper-case
methods (`[buffer, datatype]`, `[buffer, count, datatype]`); and the op."""

from __future__ import annotations

from typing import Any

import numpy as np
from mpi4py import MPI
from mpi4py.util.dtlib import to_numpy_dtype

from ._core import ffi
from .mpi_binding import library

# DLPack device types in host memory: CPU, CUDA host-pinned, ROCm host-pinned.
_DLPACK_HOST_DEVICES = (1, 3, 11)


def as_array(buffer: Any, name: str, writable: bool) -> np.ndarray:
    """A numpy view of `buffer` (no copy): an ndarray, a DLPack tensor, or a buffer."""
    if isinstance(buffer, np.ndarray):
        array = buffer
    elif hasattr(buffer, "__dlpack__"):
        device = buffer.__dlpack_device__() if hasattr(buffer, "__dlpack_device__") else None
        if device is not None and int(device[0]) not in _DLPACK_HOST_DEVICES:
            raise TypeError(f"{name} is in device memory (DLPack device {tuple(device)}); "
                            "papcoll reduces host memory: move the tensor to the CPU first")
        try:
            array = np.from_dlpack(buffer)
        except (BufferError, TypeError, RuntimeError, ValueError) as error:
            raise TypeError(f"{name}: numpy cannot view this DLPack object ({error})"
                            ) from error
    else:
        try:
            array = np.asarray(memoryview(buffer))
        except TypeError:
            raise TypeError(
                f"{name} must be a numpy array, an object with the buffer protocol or a "
                f"CPU DLPack tensor, not {type(buffer).__name__}"
            ) from None
    if not array.flags.c_contiguous:
        raise ValueError(f"{name} is not contiguous: pass numpy.ascontiguousarray({name}) "
                         "(or .contiguous() for a tensor)")
    if writable and not array.flags.writeable:
        raise ValueError(f"{name} is read-only: the result is written into it")
    return array


def mpi_datatype(dtype: np.dtype, name: str) -> MPI.Datatype:
    """The predefined MPI datatype of a numpy dtype (mpi4py's own table)."""
    if dtype.kind not in "biufc" or dtype.fields is not None:
        raise TypeError(f"{name} has dtype {dtype}, which no predefined MPI datatype "
                        "describes: use booleans, integers, floats or complex numbers")
    if not dtype.isnative:
        raise TypeError(f"{name} has dtype {dtype}, not in native byte order: convert it "
                        "with .astype(dtype.newbyteorder('='))")
    datatype = MPI._typedict.get(dtype.char)
    if datatype is None:
        raise TypeError(f"{name} has dtype {dtype}, for which this MPI has no predefined "
                        "datatype")
    return datatype


def allreduce_buffers(sendbuf: Any, recvbuf: Any) -> tuple[Any, np.ndarray, MPI.Datatype]:
    """The send pointer (or MPI_IN_PLACE), the receive array (new where recvbuf is None)
    and their MPI datatype, checked as allreduce() documents."""
    if sendbuf is MPI.IN_PLACE:
        if recvbuf is None:
            raise ValueError("with MPI.IN_PLACE as sendbuf, recvbuf holds the input and "
                             "receives the result: pass it")
        receive = as_array(recvbuf, "recvbuf", writable=True)
        send_pointer = library.papcoll_in_place()
    else:
        send = as_array(sendbuf, "sendbuf", writable=False)
        if recvbuf is None:
            receive = np.empty_like(send, order="C")
        else:
            receive = as_array(recvbuf, "recvbuf", writable=True)
            if receive.dtype != send.dtype or receive.size != send.size:
                raise ValueError(
                    f"recvbuf ({receive.size} x {receive.dtype}) does not match sendbuf "
                    f"({send.size} x {send.dtype})")
            # Both are contiguous, so overlapping bounds mean shared elements.
            if send.size and np.may_share_memory(send, receive):
                raise ValueError("sendbuf and recvbuf overlap: pass MPI.IN_PLACE as "
                                 "sendbuf to reduce in place")
        send_pointer = ffi.cast("const void *", send.ctypes.data)
    datatype = mpi_datatype(receive.dtype, "recvbuf" if recvbuf is not None else "sendbuf")
    return send_pointer, receive, datatype


def specified_buffer(specification: Any, name: str, writable: bool) -> Any:
    """A buffer as mpi4py's upper-case methods take it (Comm.Allreduce): the buffer itself,
    MPI.IN_PLACE, `[buffer, datatype]` or `[buffer, count, datatype]`; the last two view the
    buffer's bytes as elements of `datatype` (a predefined one), the first `count` of them.
    Returns what allreduce_buffers takes: an array view (no copy), or MPI.IN_PLACE. The
    forms with displacements, and derived datatypes, are refused by name."""
    if specification is MPI.IN_PLACE or not isinstance(specification, (list, tuple)):
        return specification
    if len(specification) == 2:
        data, count, datatype = specification[0], None, specification[1]
    elif len(specification) == 3 and not isinstance(specification[1], (list, tuple)):
        data, count, datatype = specification
    else:
        raise ValueError(f"{name}: papcoll takes a buffer, [buffer, datatype] or [buffer, "
                         "count, datatype]; not displacements or other forms (got "
                         f"{len(specification)} items)")
    if not isinstance(datatype, MPI.Datatype) or datatype == MPI.DATATYPE_NULL:
        raise TypeError(f"{name}: the datatype must be an mpi4py MPI.Datatype such as "
                        f"MPI.DOUBLE, not {datatype!r}")
    if datatype.Get_envelope()[-1] != MPI.COMBINER_NAMED:
        raise TypeError(f"{name}: a derived datatype; papcoll takes the predefined ones "
                        "(MPI.DOUBLE, MPI.INT, ...) only")
    try:
        dtype = to_numpy_dtype(datatype)
    except (ValueError, KeyError, TypeError):
        raise TypeError(f"{name}: {datatype.Get_name() or 'this datatype'} is not a "
                        "predefined datatype with a numpy dtype; papcoll takes those "
                        "only") from None
    raw = as_array(data, name, writable).reshape(-1).view(np.uint8)
    if dtype.fields is not None or raw.size % dtype.itemsize != 0:
        raise ValueError(f"{name}: {raw.size} bytes are not a whole number of "
                         f"{datatype.Get_name()} elements ({dtype.itemsize} bytes each)")
    elements = raw.view(dtype)
    if count is None:
        return elements
    if isinstance(count, bool) or not isinstance(count, int) or \
            not 0 <= count <= elements.size:
        raise ValueError(f"{name}: count {count!r} must be a whole number from 0 to the "
                         f"buffer's {elements.size} elements")
    return elements[:count]


def checked_op(op: Any) -> MPI.Op:
    if not isinstance(op, MPI.Op) or op == MPI.OP_NULL:
        raise TypeError(f"op must be an mpi4py MPI.Op such as MPI.SUM, not {op!r}")
    return op
