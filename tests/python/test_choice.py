"""papcoll.Choice reads every field of the C papcoll_choice, each into its own name: auto's
closed loop added eleven, read by position in Choice.from_c."""

from __future__ import annotations

import dataclasses

from papcoll._core import ffi
from papcoll.communicator import Choice


def test_choice_has_every_field_of_papcoll_choice():
    c_fields = {name for name, _ in ffi.typeof("papcoll_choice").fields}
    assert c_fields == {field.name for field in dataclasses.fields(Choice)}


def test_choice_from_c_puts_each_value_under_its_name():
    raw = ffi.new("papcoll_choice *")
    expected: dict[str, object] = {}
    for number, (name, field) in enumerate(ffi.typeof("papcoll_choice").fields, start=1):
        kind = field.type.kind
        if kind == "array":  # a name: a text that tells the field apart
            text = f"name{number}"
            setattr(raw, name, text.encode())
            expected[name] = text
        elif field.type.cname == "double":
            setattr(raw, name, number + 0.5)
            expected[name] = number + 0.5
        else:  # int32_t: flags become bools, counts stay ints
            setattr(raw, name, number)
            expected[name] = number
    choice = Choice.from_c(raw)
    for name, value in expected.items():
        got = getattr(choice, name)
        if isinstance(got, bool):
            assert got is True, name
        else:
            assert got == value, name
