#!/usr/bin/env bash
# docs/l2-priority-ptx.md, re-checked with the installed ptxas (issue 26):
# which PTX ISA versions and targets accept createpolicy and
# .L2::cache_hint, and what ptxas says where they do not. Skipped without
# ptxas (CUDA toolkit).
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

command -v ptxas >/dev/null 2>&1 || { echo "no ptxas: skipped"; exit 77; }

# ptx VERSION TARGET BODY...: a kernel with a global pointer in %rd3,
# float registers %f1-%f4 and policy registers %pol0-%pol2.
ptx() {
	local version=$1 target=$2
	shift 2
	printf '.version %s\n.target %s\n.address_size 64\n' "$version" "$target"
	printf '.visible .entry k(.param .u64 p)\n{\n\t.reg .b64 %%rd<4>;\n\t.reg .f32 %%f<6>;\n'
	printf '\t.reg .b64 %%pol<3>;\n\tld.param.u64 %%rd1, [p];\n\tcvta.to.global.u64 %%rd3, %%rd1;\n'
	for line in "$@"; do printf '\t%s\n' "$line"; done
	printf '\tret;\n}\n'
}
# accepts VERSION TARGET BODY...
accepts() {
	ptx "$@" >"$TMP/k.ptx"
	if ptxas -arch="$2" "$TMP/k.ptx" -o /dev/null 2>"$TMP/err"; then ok; else
		not_ok "ptxas refused (.version $1, $2): ${*:3}: $(head -c 300 "$TMP/err")"; fi
}
# refuses PATTERN VERSION TARGET BODY...
refuses() {
	local pattern=$1
	shift
	ptx "$@" >"$TMP/k.ptx"
	if ptxas -arch="$2" "$TMP/k.ptx" -o /dev/null 2>"$TMP/err"; then
		not_ok "ptxas accepted (.version $1, $2): ${*:3}"
	else
		expect_grep "$pattern" "$TMP/err"
	fi
}

pol="createpolicy.fractional.L2::evict_last.b64 %pol0, 1.0;"
for p in evict_last evict_first evict_normal evict_unchanged; do
	accepts 7.4 sm_80 "createpolicy.fractional.L2::$p.b64 %pol0, 1.0;" \
		"ld.global.L2::cache_hint.f32 %f1, [%rd3], %pol0;"
done
accepts 8.0 sm_90 "createpolicy.fractional.L2::evict_last.L2::evict_unchanged.b64 %pol0, 0.5;" \
	"ld.global.L2::cache_hint.f32 %f1, [%rd3], %pol0;"
for ld in "ld.global.L1::no_allocate.L2::cache_hint.f32 %f1, [%rd3], %pol0;" \
	  "ld.global.L1::evict_last.L2::cache_hint.f32 %f1, [%rd3], %pol0;" \
	  "ld.global.nc.L2::cache_hint.f32 %f1, [%rd3], %pol0;" \
	  "ld.global.cg.L2::cache_hint.f32 %f1, [%rd3], %pol0;" \
	  "ld.L2::cache_hint.f32 %f1, [%rd3], %pol0;" \
	  "ld.global.L2::cache_hint.v4.f32 {%f1,%f2,%f3,%f4}, [%rd3], %pol0;" \
	  "ld.global.L2::cache_hint.L2::128B.f32 %f1, [%rd3], %pol0;" \
	  "st.global.L2::cache_hint.f32 [%rd3], %f1, %pol0;"; do
	accepts 8.0 sm_90 "$pol" "$ld"
done
refuses "createpolicy.fractional' requires .target sm_80" 7.4 sm_75 "$pol" \
	"ld.global.L2::cache_hint.f32 %f1, [%rd3], %pol0;"
refuses "requires PTX ISA .version 7.4 or later" 7.3 sm_80 "$pol" \
	"ld.global.L2::cache_hint.f32 %f1, [%rd3], %pol0;"
refuses "requires '.v8.b32/.v4.b64' type with '.L2::evict_last'" 8.0 sm_90 \
	"ld.global.L2::evict_last.f32 %f1, [%rd3];"
refuses "Illegal modifier '.L2::cache_hint' for instruction 'ldu'" 8.0 sm_90 "$pol" \
	"ldu.global.L2::cache_hint.f32 %f1, [%rd3], %pol0;"

finish
