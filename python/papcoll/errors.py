"""How the C core's failures reach Python: PapcollError and the error buffer every call that
can fail fills; and the one conversion of Python text to a C string, which refuses what C
would misread. A leaf (it imports only the bindings), so that the library's modules that
call C, the core, the network topology and the simulator alike, raise the same error without
importing one another for it."""

from __future__ import annotations

from typing import Any

from ._core import ffi, lib

_ERROR_SIZE = 512


class PapcollError(Exception):
    """A call into the C core failed; `status` is the papcoll_status code."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _text(pointer: Any) -> str:
    # errors="replace": a message may quote the user's bytes (a non-ASCII schedule string)
    return ffi.string(pointer).decode(errors="replace") if pointer != ffi.NULL else ""


def _raise(status: int, error: Any) -> None:
    if status != lib.PAPCOLL_OK:
        raise PapcollError(status, _text(error) or _text(lib.papcoll_status_name(status)))


def c_string(text: str, what: str) -> bytes:
    """`text` as the UTF-8 bytes of a C string. Refuses (PapcollError, PAPCOLL_ERR_ARGUMENT)
    a NUL character, where C would read only the text before it ("ring\\0x" as "ring"), and
    text UTF-8 cannot hold (a lone surrogate such as '\\ud800'), and TypeError for no text."""
    if not isinstance(text, str):
        raise TypeError(f"{what} must be text (str), not {type(text).__name__}")
    if "\0" in text:
        raise PapcollError(lib.PAPCOLL_ERR_ARGUMENT,
                           f"{what} holds a NUL character at {text.index(chr(0))}")
    try:
        return text.encode()
    except UnicodeEncodeError as error:
        raise PapcollError(lib.PAPCOLL_ERR_ARGUMENT,
                           f"{what} is not UTF-8 text ({error.reason} at {error.start})") from None
