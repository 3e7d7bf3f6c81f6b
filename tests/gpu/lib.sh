# Shared by tests/gpu/t_*.sh (sourced). A GPU test skips (exit 77) where
# there is no usable GPU, checks structure and ranges rather than exact
# timings, and prints "RESULT: <one line>" lines that tests/gpu/run.sh puts
# in its closing table.
set -u
: "${CA_SOURCE_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${CA_BUILD_DIR:=$CA_SOURCE_DIR/build}"
: "${CACHEADVISE:=$CA_BUILD_DIR/bin/cacheadvise}"
SAMPLES="$CA_BUILD_DIR/samples"
if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "no GPU: skipped"
	exit 77
fi
if [ ! -x "$CACHEADVISE" ]; then
	echo "cacheadvise not built at $CACHEADVISE" >&2
	exit 1
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cacheadvise-gpu.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
not_ok() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
result() { echo "RESULT: $*"; }
check() { # check DESCRIPTION PYTHON-EXPRESSION-ON-j (capture.json as j)
	local desc=$1 expr=$2 file=$3
	if python3 - "$file" "$expr" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
def H(kernel, ordinal):
    """hit_i of the load with this ordinal in a capture.json kernel"""
    return [l for l in kernel["loads"] if l["ordinal"] == ordinal][0]["hit"]
ok = eval(sys.argv[2], {"j": j, "H": H, "len": len, "any": any, "all": all, "min": min, "max": max, "sum": sum, "sorted": sorted, "set": set})
sys.exit(0 if ok else 1)
PY
	then ok; else not_ok "$desc"; fi
}
finish() {
	echo "$pass passed, $fail failed"
	[ "$fail" = 0 ]
	exit $?
}
