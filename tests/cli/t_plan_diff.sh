# bench/plan_diff.py, the stability benchmark's judge (issue 38 item 5): the
# same plan in several profiles exits 0 whatever the module ids; a load
# whose form differs is printed with each plan's form ("-": as built) and
# exits 1; a file that is no plan exits 2 naming it.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

diff_py="$CA_SOURCE_DIR/bench/plan_diff.py"
plan() { # plan FILE MODULE-ID ACTION-OF-LOAD-2
	cat >"$1" <<JSON
{"schema": "cacheadvise.plan/1", "modules": [{"id": "$2", "functions": [
  {"name": "k", "loads": [{"ordinal": 0, "action": "L1::no_allocate"}, {"ordinal": 2, "action": "$3"}]}]}]}
JSON
}
plan "$TMP/a.json" aaaaaaaaaaaaaaaa L2::evict_first
plan "$TMP/b.json" bbbbbbbbbbbbbbbb L2::evict_first
plan "$TMP/c.json" cccccccccccccccc default
expect_status 0 python3 "$diff_py" "$TMP/a.json" "$TMP/b.json"
expect_line "same plan in 2 profiles (2 loads)" "$TMP/out"
expect_status 1 python3 "$diff_py" "$TMP/a.json" "$TMP/b.json" "$TMP/c.json"
expect_line "k load 2: L2::evict_first  |  L2::evict_first  |  default" "$TMP/out"
expect_line "1 of 2 loads differ between the 3 plans" "$TMP/out"
# a load one plan leaves as built
python3 - "$TMP/c.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["modules"][0]["functions"][0]["loads"].pop()
json.dump(j, open(sys.argv[1], "w"))
PY
expect_status 1 python3 "$diff_py" "$TMP/a.json" "$TMP/c.json"
expect_line "k load 2: L2::evict_first  |  -" "$TMP/out"
echo '{"not": "a plan"}' >"$TMP/bad.json"
expect_status 2 python3 "$diff_py" "$TMP/a.json" "$TMP/bad.json"
expect_grep "is not a plan" "$TMP/err"
finish
