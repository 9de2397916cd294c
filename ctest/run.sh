#!/usr/bin/env bash
# ctest/run.sh — the one test command: installs the system packages and the
# Python test oracles, builds atoll (release, and a sanitizer build), and runs
# every test this machine can run with ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)
# Tests run side by side: OpenMP threads that spin at barriers while another
# test holds the other core slow a run down many times over, so they sleep.
export OMP_WAIT_POLICY=passive

bash "$root/launch/setup.sh"

venv="$root/tests/.venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r "$root/tests/requirements.txt"

cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release -DATOLL_TEST_PYTHON="$venv/bin/python"
cmake --build "$root/build" -j "$jobs"
ctest --test-dir "$root/build" --output-on-failure -j "$jobs"

# AddressSanitizer + UBSan over the tests that do not start mpirun (Open MPI's
# own allocations are not ours to check).
cmake -S "$root" -B "$root/build-asan" -DCMAKE_BUILD_TYPE=Debug -DATOLL_SANITIZE=ON \
  -DATOLL_TEST_PYTHON="$venv/bin/python"
cmake --build "$root/build-asan" -j "$jobs"
ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 ctest --test-dir "$root/build-asan" --output-on-failure -j "$jobs" -LE 'mpi|slow'

# libFuzzer + ASan/UBSan over the GGUF and safetensors parsers (a clang build
# of the parsers only), 30 s each.
cmake -S "$root" -B "$root/build-fuzz" -DCMAKE_C_COMPILER=clang -DATOLL_FUZZ=ON \
  -DATOLL_TEST_PYTHON="$venv/bin/python"
cmake --build "$root/build-fuzz" -j "$jobs"
ctest --test-dir "$root/build-fuzz" --output-on-failure -j "$jobs"
