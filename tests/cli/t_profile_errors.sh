#!/usr/bin/env bash
# `profile` and `run` answer what a user can get wrong with the documented
# exit status and a message naming the subject, before any GPU work, and
# leave no capture behind. Without a GPU (CI), profile and run exit 4.
. "$(dirname "$0")/lib.sh"

ca=$CACHEADVISE

# --gpus (issue 29): distinct GPU numbers and ranges, a single-process program
for bad in "" a all 1,1 0-2000 "0," 3-1 0-16 -1; do
	expect_status 1 "$ca" profile --gpus "$bad" ./app
	expect_grep "^cacheadvise profile: --gpus takes distinct GPU numbers 0 to 1023 and ranges" "$TMP/err"
done
expect_status 1 "$ca" profile --gpus 0,1 -- mpirun -np 2 ./app
expect_grep "in an MPI or Slurm job each rank uses its own GPU: leave --gpus out" "$TMP/err"
expect_status 1 "$ca" profile --gpus 0-1 srun -n 2 ./app
expect_grep "leave --gpus out" "$TMP/err"
expect_status 1 "$ca" profile
expect_grep "no program given" "$TMP/err"
expect_status 1 "$ca" profile --top 0 ./app
expect_grep "--top must be at least 1" "$TMP/err"
expect_status 1 "$ca" profile --build make --no-verify ./app
expect_grep "--build rebuilds the program after verifying the advice: leave --no-verify out" "$TMP/err"
expect_status 1 "$ca" profile --build '' ./app
expect_grep "--build needs a command" "$TMP/err"
expect_status 1 "$ca" profile --min-share 150 ./app
expect_grep "--min-share is a percentage from 0 to 100, not '150'" "$TMP/err"
expect_status 1 "$ca" profile --min-share 1x ./app
expect_status 1 "$ca" profile --kernels '(' ./app
expect_grep "not a valid regular expression" "$TMP/err"
expect_status 1 "$ca" profile --model fancy ./app
expect_grep "'sector' or 'classic'" "$TMP/err"
expect_status 1 "$ca" profile --repeat 1000 ./app
expect_status 1 "$ca" profile --timeout -3 ./app
expect_status 1 "$ca" profile --oracle 40 ./app
expect_grep "use 16 or fewer" "$TMP/err"
expect_status 0 "$ca" profile --help
expect_grep "^EXAMPLES" "$TMP/out"
# --strict-output is an option (not the program), --output-ignore takes a
# line-anchored regular expression
expect_status 1 "$ca" profile --strict-output --output-ignore '^Kernel.*[0-9]$'
expect_grep "no program given" "$TMP/err"
# the L2 priority pass is on by default (issue 39): --no-l2-priority and
# --l2-priority are options, not the program
expect_status 1 "$ca" profile --no-l2-priority --l2-priority
expect_grep "no program given" "$TMP/err"

# a program that does not exist, is a directory or cannot run: exit 2
# (invalid input, as check --static says), named
expect_status 2 "$ca" profile --out "$TMP/o1" "$TMP/no-such-app"
expect_grep "no-such-app.*not found" "$TMP/err"
printf 'not a program\n' >"$TMP/notexec"
expect_status 2 "$ca" profile --out "$TMP/o2" "$TMP/notexec"
expect_grep "not executable" "$TMP/err"
mkdir -p "$TMP/adir"
expect_status 2 "$ca" profile --out "$TMP/o3" "$TMP/adir"
expect_grep "is a directory, not a program" "$TMP/err"
expect_status 2 "$ca" run --plan "$CA_SOURCE_DIR/tests/fixtures/capture-real/plan.json" -- "$TMP/no-such-app"
expect_grep "no-such-app.*not found" "$TMP/err"
# --timeout is a finite positive number
for t in nan inf 1e999 -1 0; do
	expect_status 1 "$ca" profile --timeout "$t" /bin/true
	expect_grep "timeout" "$TMP/err"
done
[ ! -e "$TMP/o1" ] && [ ! -e "$TMP/o2" ] && [ ! -e "$TMP/o3" ] && ok || not_ok "a capture directory was left behind"

# run: plan problems are input errors (2) with the JSON path
printf '{"schema": "cacheadvise.plan/1", "modules": [{"functions": [{"name": "k", "loads": [{"ordinal": 0, "action": "warp"}]}]}]}\n' >"$TMP/bad-plan.json"
expect_status 2 "$ca" run --plan "$TMP/bad-plan.json" -- /bin/true
expect_grep "loads\[0\]\.action" "$TMP/err"
expect_status 2 "$ca" run --plan "$TMP/missing.json" -- /bin/true
expect_grep "missing.json" "$TMP/err"
expect_status 1 "$ca" run /bin/true
expect_grep "--plan PLAN.json is required" "$TMP/err"

# without a GPU: exit 4 and the reason; with one this part is the GPU tests' job
if ! nvidia-smi -L >/dev/null 2>&1; then
	expect_status 4 "$ca" profile --out "$TMP/o3" /bin/true
	expect_grep "no usable GPU" "$TMP/err"
	expect_status 4 "$ca" profile --strict-output --out "$TMP/o4" /bin/true
	expect_grep "no usable GPU" "$TMP/err"
	[ ! -e "$TMP/o3" ] && ok || not_ok "profile without a GPU left '$TMP/o3' behind"
	printf '{"schema": "cacheadvise.plan/1", "modules": []}\n' >"$TMP/plan.json"
	expect_status 4 "$ca" run --plan "$TMP/plan.json" -- /bin/true
	expect_grep "no usable GPU" "$TMP/err"
fi
finish
