#!/usr/bin/env bash
# An MPI-free job under a real Slurm (issue 29): munged, slurmctld and slurmd
# from Debian's slurm-wlm and munge, started here on this machine with a
# configuration of their own (ports and folders under $TMP) and stopped at
# the end. A 2-task `srun` job of tests/unit/test_launcher in its recording
# mode, started through run_request_run as `profile` starts a job, with
# --ranks 1: every task receives cacheadvise's variables (Slurm exports
# the environment), knows its rank from SLURM_PROCID, and only rank 1
# counts itself measured. Skipped (77) without Slurm and munge.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

for t in /usr/sbin/munged /usr/sbin/slurmctld /usr/sbin/slurmd; do
	[ -x "$t" ] || { echo "no $t: skipped"; exit 77; }
done
command -v srun >/dev/null || { echo "no srun: skipped"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "Slurm daemons need root here: skipped"; exit 77; }
launcher="$CA_BUILD_DIR/tests/test_launcher"
[ -x "$launcher" ] || { not_ok "no $launcher"; finish; }

s="$TMP/slurm"
mkdir -p "$s/munge" "$s/spool" "$s/state" "$s/log"
host=$(hostname -s)
port=$((20000 + $$ % 20000))
stop() {
	for p in "$s/slurmd.pid" "$s/slurmctld.pid" "$s/munge/munged.pid"; do
		[ -s "$p" ] && kill "$(cat "$p")" 2>/dev/null
	done
	sleep 1
}
trap 'stop; rm -rf "$TMP"' EXIT
head -c 1024 /dev/urandom >"$s/munge.key"
chmod 400 "$s/munge.key"
/usr/sbin/munged -f --key-file="$s/munge.key" --socket="$s/munge/munge.socket" \
	--pid-file="$s/munge/munged.pid" --log-file="$s/log/munged.log" --seed-file="$s/munge/seed" ||
	{ not_ok "munged did not start: $(tail -3 "$s/log/munged.log")"; finish; }
cat >"$s/slurm.conf" <<CONF
ClusterName=cacheadvise
SlurmctldHost=$host
AuthType=auth/munge
AuthInfo=socket=$s/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$s/state
SlurmdSpoolDir=$s/spool
SlurmctldPidFile=$s/slurmctld.pid
SlurmdPidFile=$s/slurmd.pid
SlurmctldLogFile=$s/log/slurmctld.log
SlurmdLogFile=$s/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/linear
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF="$s/slurm.conf"
/usr/sbin/slurmctld -f "$SLURM_CONF" || { not_ok "slurmctld: $(tail -3 "$s/log/slurmctld.log")"; finish; }
/usr/sbin/slurmd -f "$SLURM_CONF" || { not_ok "slurmd: $(tail -3 "$s/log/slurmd.log")"; finish; }
# the node comes up within seconds on an idle machine; a busy one may take longer
for i in $(seq 1 60); do
	sinfo -h -o %t 2>/dev/null | grep -q idle && break
	sleep 1
done
sinfo -h -o %t 2>/dev/null | grep -q idle && ok ||
	{ not_ok "the Slurm node is not idle: $(sinfo 2>&1 | tail -2); $(tail -3 "$s/log/slurmd.log")"; finish; }

out="$TMP/job"
mkdir -p "$out"
if "$launcher" --run-job "$out" 1 -- srun -n 2 "$launcher" --record "$out" \
	>"$TMP/run.log" 2>&1; then ok; else
	not_ok "the srun job failed: $(cat "$TMP/run.log") $(cat "$out/job.log" 2>/dev/null)"; finish; fi
for r in 0 1; do
	f="$out/rank-$r.txt"
	[ -s "$f" ] || { not_ok "rank $r wrote nothing"; continue; }
	expect_line "rank=$r" "$f"
	expect_line "measured=$([ $r = 1 ] && echo 1 || echo 0)" "$f"
	expect_line "injection=/opt/cacheadvise-test/libcacheadvise_inject.so" "$f"
	expect_line "out=$out" "$f"
	expect_line "ranks=1" "$f"
done
finish
