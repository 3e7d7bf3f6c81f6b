#!/usr/bin/env bash
# cacheadvise solve on the seed's Figure 4 graph and on generated graphs:
# every method agrees on the optimum, the JSON has the documented fields,
# the text summary lists the loads, a time limit is honoured.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"
G=$CA_SOURCE_DIR/tests/fixtures/graphs

# ILP (default method), JSON
expect_status 0 "$CACHEADVISE" solve --json "$G/figure4.json"
python3 - "$TMP/out" <<'PY' && ok || not_ok "solve --json figure4: unexpected result"
import json, sys
r = json.load(open(sys.argv[1]))
assert set(r) >= {"method", "cached", "bypassed", "objective", "optimal", "seconds"}, r
assert r["method"] == "ilp" and r["optimal"] is True, r
assert sorted(r["cached"]) == ["V1", "V2", "V4"] and r["bypassed"] == ["V3"], r
assert r["objective"] == 12, r
PY

# all methods: a list, in table order, all at the optimum
expect_status 0 "$CACHEADVISE" solve --method all --json "$G/figure4.json"
python3 - "$TMP/out" <<'PY' && ok || not_ok "solve --method all --json: unexpected result"
import json, sys
r = json.load(open(sys.argv[1]))
assert [x["method"] for x in r] == ["ilp", "bnb", "heuristic", "exhaustive"], r
assert all(x["objective"] == 12 for x in r), r
assert [x["optimal"] for x in r] == [True, True, False, True], r
PY

# bnb alone, text summary
expect_status 0 "$CACHEADVISE" solve --method bnb "$G/figure4.json"
expect_grep '^bnb +12  yes ' "$TMP/out"
expect_grep 'cache  \(3\): V1 V2 V4' "$TMP/out"

# options after the file work too; text summary
expect_status 0 "$CACHEADVISE" solve "$G/figure4.json" --method heuristic
expect_grep '^heuristic +12 ' "$TMP/out"
expect_grep 'cache  \(3\): V1 V2 V4' "$TMP/out"
expect_grep 'bypass \(1\): V3' "$TMP/out"
expect_grep '4 loads, 6 nonzero edges' "$TMP/out"

# --help: usage on stdout ending with EXAMPLES, exit 0
expect_status 0 "$CACHEADVISE" solve --help
expect_grep '^EXAMPLES' "$TMP/out"
expect_grep 'cacheadvise solve ' "$TMP/out"

# generated graphs: ILP, bnb and exhaustive agree, the heuristic never beats them
for seed in 1 2 3 4 5 6; do
	python3 - "$TMP/g$seed.json" "$seed" <<'PY'
import json, random, sys
rnd = random.Random(int(sys.argv[2]))
n = rnd.randint(6, 14)
nodes = [{"id": "ld%d" % i, "weight": rnd.randint(-100, 100)} for i in range(n)]
edges = [{"u": "ld%d" % i, "v": "ld%d" % j, "weight": rnd.randint(-100, 100)}
         for i in range(n) for j in range(i + 1, n) if rnd.random() < 0.6]
json.dump({"nodes": nodes, "edges": edges}, open(sys.argv[1], "w"))
PY
	expect_status 0 "$CACHEADVISE" solve --method all --json "$TMP/g$seed.json"
	python3 - "$TMP/out" "$TMP/g$seed.json" <<'PY' && ok || not_ok "random graph $seed: solvers disagree"
import json, sys
r = {x["method"]: x for x in json.load(open(sys.argv[1]))}
g = json.load(open(sys.argv[2]))
w = {n["id"]: n["weight"] for n in g["nodes"]}
def objective(cached):
    s = set(cached)
    return sum(w[i] for i in s) + sum(e["weight"] for e in g["edges"] if e["u"] in s and e["v"] in s)
for m, x in r.items():
    assert abs(objective(x["cached"]) - x["objective"]) < 1e-6, (m, x)
    assert sorted(x["cached"] + x["bypassed"]) == sorted(w), (m, x)
assert abs(r["ilp"]["objective"] - r["exhaustive"]["objective"]) < 1e-6, r
assert abs(r["bnb"]["objective"] - r["exhaustive"]["objective"]) < 1e-6, r
assert r["bnb"]["optimal"] is True, r
assert r["heuristic"]["objective"] <= r["ilp"]["objective"] + 1e-6, r
PY
done

# a dense 90-load graph under a short time limit: an answer within the
# limit (plus start-up), and when not proven, the gap and bound are given
python3 - "$TMP/big.json" <<'PY'
import json, random, sys
rnd = random.Random(7)
n = 90
json.dump({"nodes": [{"id": "ld%d" % i, "weight": rnd.randint(-100, 100)} for i in range(n)],
           "edges": [{"u": "ld%d" % i, "v": "ld%d" % j, "weight": rnd.randint(-100, 100)}
                     for i in range(n) for j in range(i + 1, n)]}, open(sys.argv[1], "w"))
PY
start=$(date +%s.%N)
expect_status 0 "$CACHEADVISE" solve --json --time-limit 0.5 "$TMP/big.json"
end=$(date +%s.%N)
python3 - "$TMP/out" "$start" "$end" <<'PY' && ok || not_ok "time limit not honoured or result incomplete"
import json, sys
r = json.load(open(sys.argv[1]))
assert float(sys.argv[3]) - float(sys.argv[2]) < 5, "took too long"
assert len(r["cached"]) + len(r["bypassed"]) == 90
if not r["optimal"]:
    assert r["gap"] >= 0 and r["bound"] >= r["objective"], r
PY
# the same for bnb: proven on a graph of this size, or stopped with a bound
start=$(date +%s.%N)
expect_status 0 "$CACHEADVISE" solve --json --method bnb --time-limit 0.5 "$TMP/big.json"
end=$(date +%s.%N)
python3 - "$TMP/out" "$start" "$end" <<'PY' && ok || not_ok "bnb: time limit not honoured or result incomplete"
import json, sys
r = json.load(open(sys.argv[1]))
assert float(sys.argv[3]) - float(sys.argv[2]) < 5, "took too long"
assert r["method"] == "bnb" and len(r["cached"]) + len(r["bypassed"]) == 90
if not r["optimal"]:
    assert r["gap"] >= 0 and r["bound"] >= r["objective"], r
else:
    assert "gap" not in r, r
PY
# --method all skips exhaustive above its limit, with a warning
expect_status 0 "$CACHEADVISE" solve --method all --json --time-limit 0.2 "$TMP/big.json"
expect_grep 'exhaustive search .* skipped' "$TMP/err"
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert [x['method'] for x in r]==['ilp','bnb','heuristic']" "$TMP/out" && ok || not_ok "--method all on a big graph"

finish
