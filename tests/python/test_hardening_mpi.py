"""Settings that must agree across ranks (issue 35's audit): papcoll_comm_create checks
every papcoll_config field that must (src/mpi/config_agreement.c; tests/mpi/agreement.c
shows each one refused on every rank where it differs). Here: the table that says which
fields must agree names every field the struct declares, so a field added later cannot be
left out of the check."""

from __future__ import annotations

import json

from test_python_api import PROGRAMS, run_python_mpi


def test_every_config_field_is_classified_for_agreement():
    result = run_python_mpi(1, PROGRAMS / "config_fields.py")
    assert result.returncode == 0, result.stderr[-3000:]
    fields = json.loads(result.stdout.strip().splitlines()[-1])
    assert fields["declared"] == list(fields["classified"]), fields
    # the ones the audit found unchecked are among those that must agree
    for name in ("max_message_elements", "arrival_source", "grouping", "progress"):
        assert fields["classified"][name]
    assert not fields["classified"]["group_color"]
