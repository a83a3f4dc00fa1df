# cmake/smpi.cmake - papcoll built for SimGrid's SMPI (docs/smpi.md), which runs an MPI
# program's real code for every rank and simulates the network and the clock: papcoll at
# P = 16 ... 1024 on one machine, in time that is the same from run to run.
#
#   cmake -S . -B build/smpi -DPAPCOLL_SMPI=ON -DCMAKE_C_COMPILER=smpicc   (`make smpi`)
#
# What differs from the MPI build, and why:
#   - libpapcoll is static and linked into each program: smpirun runs every rank in one
#     process and gives each its own copy of what the program links (privatization); a
#     shared library's globals would be shared by all ranks unless SMPI is told otherwise.
#   - no drop-in (libpapcoll_pmpi.so): SMPI loads the program itself, there is no LD_PRELOAD
#     of an MPI to stand in front of.
#   - no MPI_T (SMPI 3.32 has none): PAPCOLL_SMPI tells src/mpi/mpi_features.h, and auto
#     runs SMPI's all-reduce as native; SMPI's own algorithms are chosen per job
#     (--cfg=smpi/allreduce:NAME), so papcoll-bench's native:NAME is refused here
#     (bench/native_algorithms_smpi.c).
#   - no connection warm-up at the monitor's calibration (src/mpi/monitor_tau.c): SMPI opens
#     no connections, and the warm-up's P x (P - 1) messages at once cost SimGrid wall time
#     for nothing (PAPCOLL_CONNECTIONS_OPEN_LAZILY, src/mpi/mpi_features.h).
#   - programs: papcoll-bench (`papcoll bench --smpi`), papcoll-pattern-change
#     (bench/auto_learning.py --smpi) and the differential test.
# Included from CMakeLists.txt, which stops after it.
get_filename_component(PAPCOLL_SMPI_COMPILER "${CMAKE_C_COMPILER}" NAME)
if(NOT PAPCOLL_SMPI_COMPILER MATCHES "^smpicc")
  message(FATAL_ERROR
    "PAPCOLL_SMPI=ON builds papcoll for SimGrid's SMPI and needs its compiler: "
    "-DCMAKE_C_COMPILER=smpicc (Debian: apt-get install libsimgrid-dev), not "
    "${CMAKE_C_COMPILER}")
endif()
add_compile_definitions(PAPCOLL_SMPI)
# smpicc force-includes SimGrid's smpi_helpers.h into every file, and from SimGrid 3.35 on it
# declares `pid_t smpi_getpid();`, which -Wstrict-prototypes turns into an error in every
# file. The MPI build keeps the warning, so papcoll's own code stays checked there.
list(REMOVE_ITEM PAPCOLL_WARNINGS -Wstrict-prototypes)

file(GLOB PAPCOLL_SMPI_SOURCES CONFIGURE_DEPENDS
     ${CMAKE_SOURCE_DIR}/src/core/*.c ${CMAKE_SOURCE_DIR}/src/core/algorithms/*.c
     ${CMAKE_SOURCE_DIR}/src/core/algorithms/parts/*.c ${CMAKE_SOURCE_DIR}/src/core/sim/*.c
     ${CMAKE_SOURCE_DIR}/src/mpi/*.c)
add_library(papcoll_smpi STATIC ${PAPCOLL_SMPI_SOURCES})
target_include_directories(papcoll_smpi PUBLIC ${CMAKE_SOURCE_DIR}/include
                                        ${CMAKE_SOURCE_DIR}/src/mpi
                                        PRIVATE ${CMAKE_SOURCE_DIR}/src/core)
target_compile_options(papcoll_smpi PRIVATE ${PAPCOLL_WARNINGS})
find_package(Threads REQUIRED)
target_link_libraries(papcoll_smpi PUBLIC Threads::Threads m ${CMAKE_DL_LIBS})

file(GLOB PAPCOLL_SMPI_PROGRAM_COMMON CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/bench/common/*.c)
add_executable(papcoll-bench bench/papcoll_bench.c bench/bench_options.c bench/bench_data.c
  bench/bench_timing.c bench/bench_output.c bench/native_algorithms_smpi.c
  bench/element_types.c ${PAPCOLL_SMPI_PROGRAM_COMMON})
target_include_directories(papcoll-bench PRIVATE ${CMAKE_SOURCE_DIR}/bench)
target_link_libraries(papcoll-bench PRIVATE papcoll_smpi)
target_compile_options(papcoll-bench PRIVATE ${PAPCOLL_WARNINGS})

# auto's learning experiment (bench/auto_learning.py --smpi): the arrival pattern changes
# mid-run, every call recorded.
add_executable(papcoll-pattern-change bench/pattern_change.c bench/bench_data.c
  bench/bench_timing.c bench/element_types.c ${PAPCOLL_SMPI_PROGRAM_COMMON})
target_include_directories(papcoll-pattern-change PRIVATE ${CMAKE_SOURCE_DIR}/bench)
target_link_libraries(papcoll-pattern-change PRIVATE papcoll_smpi)
target_compile_options(papcoll-pattern-change PRIVATE ${PAPCOLL_WARNINGS})

# The differential test (tests/mpi/differential.c: every algorithm x datatype x op against
# MPI_Allreduce, blocking, non-blocking and persistent), for tests/python/test_smpi.py.
if(BUILD_TESTING)
  add_executable(mpi_differential tests/mpi/differential.c ${PAPCOLL_SMPI_PROGRAM_COMMON})
  target_include_directories(mpi_differential PRIVATE ${CMAKE_SOURCE_DIR}/bench
                                                      ${CMAKE_SOURCE_DIR}/tests/mpi)
  target_link_libraries(mpi_differential PRIVATE papcoll_smpi)
  target_compile_options(mpi_differential PRIVATE ${PAPCOLL_WARNINGS})
endif()
