# Shared by the deploy/cluster-*.sh scripts (sourced, not run). A cluster started by cluster-start.sh is recorded in
# its run folder, DATA/run: cluster.env (the settings), NAME.cmd (each silo's command line), NAME.pid, NAME.out (its
# console) and, when the start script started Redis, redis.pid. The other scripts act only on what is recorded there,
# so they never touch a process they did not start.

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
silo_project="$repo_root/deploy/Snapper.Silo"
silo_dll="$silo_project/bin/Release/net10.0/Snapper.Silo.dll"
default_data="$repo_root/data/cluster"

# Server GC's default gen0 budget made each silo collect so often that, under load, the collector paused the process for a
# fifth (plain Orleans calls) to two fifths (PACTs) of the time; a 64 MB budget cut that to a few percent
# (benchmarks/results/gc-budget). Only the environment variable sets it (runtimeconfig.json has no setting for it);
# one the operator exported wins.
export DOTNET_GCgen0size="${DOTNET_GCgen0size:-0x4000000}"

die() { echo "error: $*" >&2; exit 1; }
note() { echo "== $*"; }

# A silo's name from ROLE [INDEX]: master, or worker-K.
silo_name() {
  case "${1:-}" in
    master) [ -z "${2:-}" ] || [ "$2" = 0 ] || die "there is one master (no index, or 0; was '$2')"; echo master ;;
    worker) [[ "${2:-}" =~ ^[0-9]+$ ]] || die "worker needs an index: worker K"; echo "worker-$2" ;;
    *) die "role must be master or worker (was '${1:-}')" ;;
  esac
}

# Reads the run folder's settings into run_dir, cluster_* variables; fails if no cluster was started there.
load_cluster() {
  local data="$1"
  run_dir="$data/run"
  [ -f "$run_dir/cluster.env" ] || die "no cluster recorded under $data (no $run_dir/cluster.env); start one with deploy/cluster-start.sh"
  # shellcheck disable=SC1091
  source "$run_dir/cluster.env"
}

# Whether PID is alive and still a Snapper silo (or redis-server) process, not another one that reused the pid.
alive() {
  local pid="$1" what="${2:-Snapper.Silo}"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  local args
  args="$(ps -o args= -p "$pid" 2>/dev/null || true)"
  [[ "$args" == *"$what"* ]]
}

recorded_pid() { cat "$run_dir/$1.pid" 2>/dev/null || true; }

# Whether process PID exists and has not exited (a zombie has). For a silo just launched: until it has exec'd the silo,
# its command line is still the launching shell's, so alive's check of the command line would call it dead (a loaded
# machine makes that window long), and a pid this script just got cannot have been reused.
running() {
  local state
  state="$(ps -o stat= -p "$1" 2>/dev/null)" || return 1
  [[ -n "$state" && "$state" != Z* ]]
}

# Whether something accepts TCP connections on HOST:PORT (bash's /dev/tcp, bounded by a second).
port_open() { timeout 1 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null; }

# Splits a Redis address host:port (port 6379 if absent; [v6]:port for IPv6) into redis_host and redis_port.
parse_redis() {
  local address="${1%%,*}"
  if [[ "$address" =~ ^\[(.*)\]:([0-9]+)$ ]]; then redis_host="${BASH_REMATCH[1]}"; redis_port="${BASH_REMATCH[2]}"
  elif [[ "$address" =~ ^([^:]+):([0-9]+)$ ]]; then redis_host="${BASH_REMATCH[1]}"; redis_port="${BASH_REMATCH[2]}"
  elif [[ "$address" =~ ^[^:]+$ ]]; then redis_host="$address"; redis_port=6379
  else die "--redis '$1' is not host:port"
  fi
}

redis_is_local() { [[ "$redis_host" == localhost || "$redis_host" == 127.* || "$redis_host" == ::1 ]]; }

# Redis' answer to PING at redis_host:redis_port ("+PONG" when it is up), empty when nothing answers.
redis_ping() {
  timeout 3 bash -c "exec 3<>/dev/tcp/$redis_host/$redis_port && printf 'PING\r\n' >&3 && IFS= read -r -t 2 line <&3 && printf '%s' \"\${line%\$'\r'}\"" 2>/dev/null || true
}

# Starts one recorded silo (NAME.cmd) in its own session, so that a Ctrl+C in the operator's terminal or the end of
# the starting shell does not reach it, and records its pid. The previous console output is kept as NAME.out.prev.
launch_silo() {
  local name="$1" cmd
  [ -f "$run_dir/$name.cmd" ] || die "$name is not part of the cluster recorded in $run_dir"
  cmd="$(cat "$run_dir/$name.cmd")"
  [ -f "$run_dir/$name.out" ] && mv -f "$run_dir/$name.out" "$run_dir/$name.out.prev"
  local -a argv
  eval "argv=($cmd)"
  setsid nohup "${argv[@]}" </dev/null >"$run_dir/$name.out" 2>&1 &
  echo $! >"$run_dir/$name.pid"
}

# Waits until silo NAME has logged that it started and its gateway accepts connections, or fails (its process died,
# or TIMEOUT seconds passed) showing the end of its console and log.
wait_silo() {
  local name="$1" timeout="$2" pid gateway deadline
  pid="$(recorded_pid "$name")"
  gateway="$(silo_field "$name" gateway)"
  deadline=$((SECONDS + timeout))
  while :; do
    if [ -z "$pid" ] || ! running "$pid"; then
      show_failure "$name"
      echo "error: $name (pid $pid) exited during start" >&2
      return 1
    fi
    if grep -q "Snapper silo started" "$run_dir/$name.out" 2>/dev/null && port_open 127.0.0.1 "$gateway"; then
      return 0
    fi
    if [ $SECONDS -ge $deadline ]; then
      show_failure "$name"
      echo "error: $name (pid $pid) did not start within ${timeout}s" >&2
      return 1
    fi
    sleep 0.5
  done
}

show_failure() {
  local name="$1"
  echo "---- $name console ($run_dir/$name.out), last lines:" >&2
  tail -n 15 "$run_dir/$name.out" >&2 2>/dev/null || true
  echo "---- $name log ($(silo_field "$name" log)), last lines:" >&2
  tail -n 15 "$(silo_field "$name" log)" >&2 2>/dev/null || true
}

# A recorded field of silo NAME (silo, gateway, data, log), from NAME.info.
silo_field() {
  local name="$1" field="$2"
  sed -n "s/^$field=//p" "$run_dir/$name.info" 2>/dev/null | head -n 1
}

# Sends SIGTERM to the given silos (names), waits up to TIMEOUT seconds for them to exit (a silo leaves the
# membership table on a graceful stop), then SIGKILLs the rest.
stop_silos() {
  local timeout="$1"; shift
  local name pid deadline left
  local -a pids=()
  for name in "$@"; do
    pid="$(recorded_pid "$name")"
    if alive "$pid"; then
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
      echo "$name: SIGTERM sent to pid $pid"
    fi
  done
  deadline=$((SECONDS + timeout))
  while :; do
    left=()
    for pid in "${pids[@]}"; do alive "$pid" && left+=("$pid"); done
    [ ${#left[@]} -eq 0 ] && break
    if [ $SECONDS -ge $deadline ]; then
      for pid in "${left[@]}"; do
        echo "pid $pid still running after ${timeout}s: SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
      done
      sleep 0.5
      break
    fi
    sleep 0.3
  done
}

# Stops the Redis the start script started (recorded in redis.pid): SIGTERM, SIGKILL after 10 s.
stop_redis() {
  local pid
  pid="$(recorded_pid redis)"
  [ -n "$pid" ] || return 0
  if alive "$pid" redis-server; then
    echo "redis: SIGTERM sent to pid $pid"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do alive "$pid" redis-server || break; sleep 0.2; done
    if alive "$pid" redis-server; then
      echo "redis still running after 10s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$run_dir/redis.pid"
}
