#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# ctest driver for the Scapy layers' tests. Exit 77 (ctest SKIP_RETURN_CODE)
# when /usr/bin/python3 lacks scapy or pytest; pytest's exit 5 ("no tests
# collected") is a failure. Environment: IWK_VECTORS (iwk_vectors binary),
# IWARP_TARGET (iwarp-target binary), IWK_SOURCE_DIR (repository root).
# Extra arguments go to pytest.
PY=${IWK_PYTHON:-/usr/bin/python3}  # override only to test this script
here=$(cd "$(dirname "$0")" && pwd)
root=${IWK_SOURCE_DIR:-$(cd "$here/../.." && pwd)}

if ! "$PY" -c 'import scapy, pytest' 2>/dev/null; then
    echo "SKIP: $PY lacks scapy or pytest (apt-get install python3-scapy python3-pytest)"
    exit 77
fi

cd "$root" || exit 1
# Keep the source tree clean: no .pyc files, no .pytest_cache.
PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" \
    "$PY" -m pytest -q -p no:cacheprovider conformance/scapy/tests "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
    echo "FAIL: pytest collected no tests in conformance/scapy/tests"
    exit 1
fi
exit "$rc"
