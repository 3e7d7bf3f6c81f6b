# report.html in a real browser (headless Chromium): for every committed
# capture the DOM has the summary and every kernel's name, and the
# screenshot is not blank. Skipped (77) where Chromium is not installed.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

browser=""
for b in chromium chromium-browser google-chrome; do
	if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
done
[ -n "$browser" ] || { echo "no chromium: skipped"; exit 77; }

run_browser() {
	timeout 120 "$browser" --headless --no-sandbox --disable-gpu --user-data-dir="$(mktemp -d -p "$TMP")" \
		--no-first-run --disable-extensions --disable-background-networking "$@" 2>>"$TMP/browser.log"
}

for fixture in "$CA_SOURCE_DIR"/tests/fixtures/capture-*/; do
	name=$(basename "$fixture")
	root=()
	[ -f "$fixture/source-root.txt" ] && root=(--source-root "$CA_SOURCE_DIR/$(cat "$fixture/source-root.txt")")
	html="$TMP/$name.html"
	expect_status 0 "$CACHEADVISE" report "$fixture" --format html -o "$html" "${root[@]}"
	expect_status 0 "$CACHEADVISE" report "$fixture" --format json -o "$TMP/$name.json" "${root[@]}"

	run_browser --dump-dom "file://$html" > "$TMP/$name.dom"
	if python3 - "$TMP/$name.dom" "$TMP/$name.json" <<'EOF'
import html, json, re, sys
dom = open(sys.argv[1]).read(); r = json.load(open(sys.argv[2]))
assert re.search(r'<section class="summary" id="summary"><h2>Summary</h2>', dom), "no summary"
assert dom.index('id="summary"') < dom.find('class="kernel"') or 'class="kernel"' not in dom
for k in r["kernels"]:
    label = k["label"]
    assert re.search(r'Kernel <code title="[^"]*">%s</code>' % re.escape(html.escape(label)), dom), label
    assert html.escape(k["name"]) in dom, k["name"]
# The graphs became SVG elements in the DOM.
n = sum(1 for k in r["kernels"] if k["graph"] and k["graph"]["nodes"])
assert dom.count("<svg") >= n, (dom.count("<svg"), n)
EOF
	then ok; else not_ok "$name: the DOM lacks the summary, a kernel or a graph"; fi

	run_browser --screenshot="$TMP/$name.png" --window-size=1280,2000 "file://$html" >/dev/null
	if [ -s "$TMP/$name.png" ]; then ok; else not_ok "$name: no screenshot ($(tail -3 "$TMP/browser.log"))"; continue; fi
	# Decode the PNG (zlib, no PIL): many colours and a fair share of ink.
	if python3 - "$TMP/$name.png" "$TMP/$name.json" <<'EOF'
import json, struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat = 8, b""
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
assert depth == 8 and ctype in (2, 6), (depth, ctype)
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
prev, colours, ink, i = bytearray(stride), set(), 0, 0
for y in range(h):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    if f == 1:
        for x in range(bpp, stride):
            line[x] = (line[x] + line[x - bpp]) & 255
    elif f == 2:
        line = bytearray((a + b) & 255 for a, b in zip(line, prev))
    elif f == 3:
        for x in range(stride):
            left = line[x - bpp] if x >= bpp else 0
            line[x] = (line[x] + ((left + prev[x]) >> 1)) & 255
    elif f == 4:
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    prev = line
    if y % 4 == 0:
        for x in range(0, stride, bpp * 2):
            px = bytes(line[x:x + 3])
            colours.add(px)
            if px != b"\xff\xff\xff":
                ink += 1
samples = (h // 4 + 1) * (w // 2)
print("%dx%d, %d colours, %.1f%% ink" % (w, h, len(colours), 100.0 * ink / samples))
assert len(colours) >= 16, "too few colours: blank page?"
assert ink > samples * 0.02, "almost no ink: blank page?"
# A bypass in the summary's "What to change" table is drawn in its orange.
r = json.load(open(sys.argv[2]))
if any(l["changes"] and l["decision"] == "bypass" for k in r["kernels"] for l in k["loads"]):
    assert any(abs(c[0] - 0xe6) < 24 and abs(c[1] - 0x51) < 24 and c[2] < 40 for c in colours), "no orange"
EOF
	then ok; else not_ok "$name: the screenshot looks blank"; fi
done
finish
