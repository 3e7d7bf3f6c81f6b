# Golden outputs (git's t4013 style): the text and JSON reports of every
# committed capture (tests/fixtures/capture-*/) against tests/cli/expected/,
# so that a change in wording or numbers shows in review. Volatile fields
# are scrubbed: solver times ("seconds"), the tool version, and the source
# checkout's path where --source-root puts it (paths the capture recorded
# stay as recorded). After a deliberate change, rewrite the expected files with
#   CA_UPDATE_GOLDEN=1 ctest -R cli/t_report_golden
# and read their diff before committing it.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

expected="$CA_SOURCE_DIR/tests/cli/expected"
scrub() {
	sed -e "/\"read_from\"\|\"read_path\"/s|$CA_SOURCE_DIR|@SRC@|g" \
	    -e 's|"seconds": [0-9.e+-]*|"seconds": "@S@"|' \
	    -e 's|"tool_version": "[^"]*"|"tool_version": "@V@"|'
}

for fixture in "$CA_SOURCE_DIR"/tests/fixtures/capture-*/; do
	name=$(basename "$fixture")
	# A copy under a fixed relative name: the reports print the directory as given.
	cp -r "$fixture" "$TMP/$name"
	root=()
	[ -f "$fixture/source-root.txt" ] && root=(--source-root "$CA_SOURCE_DIR/$(cat "$fixture/source-root.txt")")
	for fmt in text json; do
		ext=$([ "$fmt" = text ] && echo txt || echo json)
		(cd "$TMP" && "$CACHEADVISE" report "$name" --format "$fmt" "${root[@]}") > "$TMP/raw" 2>"$TMP/err" ||
			{ not_ok "$name: report --format $fmt failed: $(cat "$TMP/err")"; continue; }
		scrub < "$TMP/raw" > "$TMP/$name.$ext"
		want="$expected/$name.report.$ext"
		if [ -n "${CA_UPDATE_GOLDEN:-}" ]; then
			cp "$TMP/$name.$ext" "$want"
			ok
		elif [ ! -f "$want" ]; then
			not_ok "$name: $want is missing (CA_UPDATE_GOLDEN=1 writes it)"
		elif diff -u "$want" "$TMP/$name.$ext" > "$TMP/diff"; then
			ok
		else
			not_ok "$name: report --format $fmt differs from $want:"
			head -60 "$TMP/diff" >&2
		fi
	done
done
finish
