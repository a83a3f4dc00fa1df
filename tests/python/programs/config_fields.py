"""Prints every papcoll_config field cffi sees and the fields papcoll_config_field names
(src/mpi/config_agreement.c), as JSON, for test_hardening_mpi.py."""

import json

from mpi4py import MPI  # noqa: F401  (libpapcoll needs the MPI loaded first)
from papcoll._core import ffi, load_mpi_library

library = load_mpi_library()
declared = [name for name, _ in ffi.typeof("papcoll_config").fields]
classified = {}
name = ffi.new("const char **")
must_agree = ffi.new("int32_t *")
index = 0
while library.papcoll_config_field(index, name, must_agree) == 0:
    classified[ffi.string(name[0]).decode()] = bool(must_agree[0])
    index += 1
print(json.dumps({"declared": declared, "classified": classified}))
