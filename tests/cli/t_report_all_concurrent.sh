#!/usr/bin/env bash
# Issue 36, item 15: two `report --all` on one capture at once, one made
# from source root A (a source patch) and one from root B (the sources
# changed since profiling: no patch). source.patch and sources.json are a
# pair: sources.json names the root ("read_from") that source.patch was
# made from. Without a lock, the renames of the two runs could interleave
# and leave the patch of one beside the sources.json of the other. With the
# capture locked for the whole of --all, every round ends with a pair from
# one run, whichever ran last, however fast the machine is.
# CA_ROUNDS sets the number of rounds (default 20).
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

fixture="$CA_SOURCE_DIR/tests/fixtures/capture-real"
[ -d "$fixture" ] || { echo "no real capture"; exit 77; }
rounds=${CA_ROUNDS:-20}
c="$TMP/c"
cp -r "$fixture" "$c"
cp -r "$CA_SOURCE_DIR/$(cat "$fixture/source-root.txt")" "$TMP/A"
cp -r "$TMP/A" "$TMP/B"
sed -i '1i // changed since profiling' "$TMP/B/stream_table.cu"

# pair: "A" or "B" when source.patch and sources.json come from one run
pair() {
	local from patch
	from=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["read_from"])' \
		"$c/sources.json" 2>/dev/null)
	if grep -q '^+++ b/stream_table.cu' "$c/source.patch"; then patch=A
	elif [ ! -s "$c/source.patch" ]; then patch=B
	else patch=?; fi
	case "$from" in "$TMP/A") from=A ;; "$TMP/B") from=B ;; *) from="?($from)" ;; esac
	[ "$from" = "$patch" ] && echo "$from" || echo "mixed: source.patch from $patch, sources.json from $from"
}

mixed=0 as=0 bs=0
for ((i = 0; i < rounds; i++)); do
	"$CACHEADVISE" report "$c" --all --source-root "$TMP/A" >/dev/null 2>"$TMP/err.A" &
	a=$!
	"$CACHEADVISE" report "$c" --all --source-root "$TMP/B" >/dev/null 2>"$TMP/err.B" &
	b=$!
	wait $a; sa=$?
	wait $b; sb=$?
	[ $sa = 0 ] && [ $sb = 0 ] && ok ||
		not_ok "round $i: exit $sa and $sb: $(cat "$TMP/err.A" "$TMP/err.B" | head -c 400)"
	p=$(pair)
	case $p in
	A) as=$((as + 1)); ok ;;
	B) bs=$((bs + 1)); ok ;;
	*) mixed=$((mixed + 1)); not_ok "round $i: $p" ;;
	esac
done
echo "$rounds rounds: $as ended with A's pair, $bs with B's, $mixed mixed"
if find "$c" -name '*.tmp.*' | grep -q .; then not_ok "temporary files left: $(find "$c" -name '*.tmp.*')"; else ok; fi
finish
