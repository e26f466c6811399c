#!/usr/bin/env bash
# One fleet over 1, 2, 4 ... server processes on a machine with cores to spare, the load tester on cores of its own:
# the multi-process figures the two-core machine cannot give (a second process there only shares the same two cores).
#
#   bash bench/cluster-cores.sh                    # defaults below; a line of figures per run, then a table
#   INFRA_CORES_RUNS="1:8000 2:8000 4:8000 4:16000" INFRA_CORES_JOBS=3 bash bench/cluster-cores.sh
#
# Each run starts `infra-server` once with `processes N` and `redis_url` (its members share the api_port, each with
# ZeroMQ ports of its own) pinned to 2·N cores, then `infra-loadtest --server` with the defaults real clients run (one
# connection pair per node, 1 s heartbeat), on the cores left, and keeps its --json line. The nodes are made by the
# first run and reused by the others (--client-key). Redis runs on the last core.
#
# Where `redis-server` and `node` are on PATH and dist/ is built; with INFRA_CORES_BUNDLE=1 it first sources
# .devbundle/unpack.sh (a machine without Node: see the device bundle), and INFRA_CORES_OUT names where the log and
# the JSON lines go. With fewer than 8 cores nothing is pinned (a trial run of the script itself).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
out=${INFRA_CORES_OUT:-$(mktemp -d)}
mkdir -p "$out"
if [ "${INFRA_CORES_BUNDLE:-0}" = 1 ]; then
  cd "$here"
  # shellcheck disable=SC1091
  source .devbundle/unpack.sh
fi
app=$(pwd)
[ -f "$app/dist/src/bin/infra-server.js" ] || { echo "cluster-cores: no dist/ in $app: npm run build first" >&2; exit 1; }

runs=${INFRA_CORES_RUNS:-"1:8000 2:8000 4:8000 4:16000"}
jobs=${INFRA_CORES_JOBS:-3}
cores=$(nproc)
pin() { # pin FIRST LAST CMD...: on cores FIRST..LAST where there are enough cores, else as it is
  local first=$1 last=$2
  shift 2
  if [ "$cores" -ge 8 ]; then taskset -c "$first-$last" "$@"; else "$@"; fi
}

work=$(mktemp -d)
redis_port=16379
pin $((cores - 1)) $((cores - 1)) redis-server --port $redis_port --save '' --appendonly no --daemonize yes \
  --dir "$work" --logfile "$work/redis.log" >/dev/null
trap 'redis-cli -p $redis_port shutdown nosave >/dev/null 2>&1 || true; pkill -f "$work/" || true' EXIT
until redis-cli -p $redis_port ping >/dev/null 2>&1; do sleep 0.1; done
redis_url="redis://127.0.0.1:$redis_port/0"
echo "# $cores cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(node --version)" | tee "$out/log"

for run in $runs; do
  n=${run%%:*}
  nodes=${run##*:}
  server_last=$((2 * n - 1))
  tester_first=$((2 * n))
  tester_last=$((cores - 2))
  workers=$((tester_last - tester_first + 1))
  [ "$cores" -ge 8 ] || workers=2
  conf="$work/push-jobs-server-$n.rb"
  cat >"$conf" <<EOF
api_port 18080
command_port 18081
server_heartbeat_port 18082
server_name "127.0.0.1"
queue_listen_address "tcp://127.0.0.1"
data_dir "$work/data"
redis_url "$redis_url"
processes $n
EOF
  pin 0 "$server_last" node "$app/dist/src/bin/infra-server.js" -c "$conf" >"$work/server-$n-$nodes.log" 2>&1 &
  server=$!
  until curl -sf http://127.0.0.1:18080/_status >/dev/null 2>&1 && [ -f "$work/data/admin.pem" ]; do sleep 0.2; done
  # Every member has joined and the partitions are spread before the fleet arrives.
  for _ in $(seq 1 100); do
    members=$(curl -s http://127.0.0.1:18080/_status | node -e \
      'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{console.log(JSON.parse(s).cluster?.members?.length??1)}catch{console.log(0)}})')
    [ "$members" -ge "$n" ] && break
    sleep 0.2
  done
  echo "## $n process(es), $nodes nodes, $jobs jobs; server on cores 0-$server_last, tester on $tester_first-$tester_last ($workers workers)" | tee -a "$out/log"
  pin "$tester_first" "$tester_last" node "$app/dist/src/bin/infra-loadtest.js" --server http://127.0.0.1:18080 \
    --key "$work/data/admin.pem" --redis "$redis_url" --nodes "$nodes" --jobs "$jobs" --workers "$workers" \
    --client-key "$work/clients.pem" --timeout 240 --json >"$work/run.out" 2>&1 || true
  grep -v '^infra-loadtest: \(provisioned\|available\)' "$work/run.out" | tee -a "$out/log" | tail -n 1 >>"$out/runs.jsonl"
  kill -TERM "$server" 2>/dev/null || true
  # A member stopped with SIGTERM hands its partitions over and leaves: the next run's members wait for none.
  wait "$server" 2>/dev/null || true
done

node -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n");
console.log("\n| processes | nodes | available after | commit to all acked p50 | POST to complete p50 | heartbeats/s processed | CPU per process | Redis a heartbeat | errors |");
console.log("|---:|---:|---:|---:|---:|---:|---|---:|---|");
const runs = process.argv[2].split(" ");
lines.forEach((l, i) => {
  let f; try { f = JSON.parse(l); } catch { f = { errors: [l.slice(0, 80)] }; }
  const [n, nodes] = runs[i].split(":");
  const cpu = (f.processes ?? []).map((p) => p.cpu_pct + "%").join(", ");
  console.log(`| ${n} | ${nodes} | ${f.ready_s ?? "-"} s | ${f.commit_to_all_acked_ms?.p50 ?? "-"} ms | ${f.post_to_complete_ms?.p50 ?? "-"} ms | ${f.processed_hb_per_s ?? "-"} | ${cpu} | ${f.redis_ops_per_heartbeat ?? "-"} | ${(f.errors ?? []).join("; ")} |`);
});' "$out/runs.jsonl" "$runs" | tee -a "$out/log"
