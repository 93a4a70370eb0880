#!/usr/bin/env bash
# The live-view test: an embedded deploy silo (deploy/Snapper.Silo) with Orleans' dashboard and the Prometheus
# endpoint, a runner load of ACTs, PACTs and the hybrid mix through its gateway, then the dashboard's counters page of
# that silo loaded in headless Chromium. Passes when the rendered page (after its scripts ran) lists Snapper's figures
# with the load's commits on them, and /metrics serves the Snapper meter; writes a screenshot of the page. The silo is
# stopped however the test ends. Exits 0 on a pass, 1 on a failure, 2 on bad arguments.
#
#   test/dashboard-test.sh [--data DIR] [--silo-port P] [--gateway-port G] [--web-port W] [--screenshot FILE] [--trx FILE]
#
#   --data DIR         test folder: the silo's data and log, the runner's results, the page as rendered (default
#                      data/dashboard-test, emptied first)
#   --silo-port P, --gateway-port G, --web-port W
#                      the silo's ports (default 11250, 30250, 8250)
#   --screenshot FILE  where the screenshot goes (default DIR/dashboard.png)
#   --trx FILE         also write the result as a one-test .trx file (CI counts it)
#
# The page is tall enough (3,600 px) that the screenshot shows every counter, Orleans' and then Snapper's.
# Needs a Chromium (chromium, chromium-browser or google-chrome on PATH; on Debian `apt-get install -y chromium`).
# Nothing waits on a clock for the check: the load has ended and its commits are counted before the page is loaded,
# and the counters shown are totals, which stay.
set -uo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
# shellcheck source=trx.sh
source "$repo/test/trx.sh"

data="$repo/data/dashboard-test" silo_port=11250 gateway_port=30250 web_port=8250 screenshot="" trx=""
while [ $# -gt 0 ]; do
  case "$1" in
    --data) data="${2:?--data needs a folder}"; shift 2 ;;
    --silo-port) silo_port="${2:?}"; shift 2 ;;
    --gateway-port) gateway_port="${2:?}"; shift 2 ;;
    --web-port) web_port="${2:?}"; shift 2 ;;
    --screenshot) screenshot="${2:?--screenshot needs a file}"; shift 2 ;;
    --trx) trx="${2:?--trx needs a file}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for n in "$silo_port" "$gateway_port" "$web_port"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "error: '$n' is not a port" >&2; exit 2; }
done
rm -rf "$data" && mkdir -p "$data"
data="$(cd "$data" && pwd)"
[ -n "$screenshot" ] || screenshot="$data/dashboard.png"
mkdir -p "$(dirname "$screenshot")"
started=$SECONDS
failures=()
silo_pid=""

note() { echo "== [$((SECONDS - started))s] $*"; }
fail() { echo "FAILURE: $*"; failures+=("$*"); }

write_trx() {
  [ -n "$trx" ] || return 0
  write_one_test_trx "$trx" dashboard-test "dashboard-test" "$((SECONDS - started))" "${failures[@]}"
}

finish() {
  if [ -n "$silo_pid" ] && kill -0 "$silo_pid" 2>/dev/null; then
    kill -TERM "$silo_pid" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$silo_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$silo_pid" 2>/dev/null
  fi
  write_trx
  if [ ${#failures[@]} -eq 0 ]; then
    echo "dashboard test: PASSED in $((SECONDS - started)) s (screenshot: $screenshot)"
    exit 0
  fi
  echo "dashboard test: FAILED (${#failures[@]} failure(s); silo log and rendered page: $data)"
  exit 1
}
trap finish EXIT
trap 'fail "interrupted"; exit 1' INT TERM

browser=""
for candidate in chromium chromium-browser google-chrome; do
  command -v "$candidate" >/dev/null && { browser="$candidate"; break; }
done
[ -n "$browser" ] || { fail "no Chromium on PATH (apt-get install -y chromium)"; exit 1; }

note "building deploy/Snapper.Silo and the runner (Release)"
if ! dotnet build -c Release deploy/Snapper.Silo -nologo -v quiet >"$data/build.log" 2>&1 \
  || ! dotnet build -c Release benchmarks/Snapper.Runner -nologo -v quiet >>"$data/build.log" 2>&1; then
  fail "build failed (log: $data/build.log)"; exit 1
fi

note "starting an embedded silo: gateway $gateway_port, live view http://localhost:$web_port/"
dotnet deploy/Snapper.Silo/bin/Release/net10.0/Snapper.Silo.dll --data "$data/silo" --silo-port "$silo_port" \
  --gateway-port "$gateway_port" --web-port "$web_port" >"$data/silo.out" 2>&1 &
silo_pid=$!
for _ in $(seq 1 600); do
  grep -q "Snapper silo started" "$data/silo.out" 2>/dev/null && break
  kill -0 "$silo_pid" 2>/dev/null || break
  sleep 0.2
done
grep -q "Snapper silo started" "$data/silo.out" || { fail "the silo did not start within 120 s (output: $data/silo.out)"; exit 1; }

note "load: ACTs, PACTs and the hybrid mix through the gateway"
if ! timeout 300 dotnet benchmarks/Snapper.Runner/bin/Release/net10.0/Snapper.Runner.dll --cluster "$gateway_port" --quick \
    --modes ACT,PACT,Hybrid --data "$data/runner" >"$data/runner.out" 2>&1; then
  fail "the runner's load failed (output: $data/runner.out)"; exit 1
fi

# The silo reports its counters to the dashboard every second; its answer to the dashboard's own API shows when the
# load's commits have arrived there (a bounded wait on a condition, not a sleep that hopes).
host=""
for _ in $(seq 1 150); do
  host=$(curl -sf "http://localhost:$web_port/DashboardCounters" | grep -o '"siloAddress":"[^"]*"' | head -n 1 | cut -d'"' -f4)
  if [ -n "$host" ] && curl -sf "http://localhost:$web_port/SiloCounters/$host" | grep -q '"name":"snapper.txn.committed.Pact","value":"[1-9]'; then
    break
  fi
  sleep 0.2
done
[ -n "$host" ] || { fail "the dashboard's API named no silo"; exit 1; }
curl -sf "http://localhost:$web_port/SiloCounters/$host" >"$data/silo-counters.json" \
  || fail "the dashboard's SiloCounters/$host did not answer"

page="http://localhost:$web_port/#/host/$host/counters"
note "rendering $page in $browser"
chrome=("$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars
        --user-data-dir="$data/chromium-profile" --window-size=1280,3600 --virtual-time-budget=10000)
timeout 120 "${chrome[@]}" --dump-dom "$page" >"$data/page.html" 2>"$data/chromium.log" \
  || fail "$browser could not render the page (log: $data/chromium.log)"
timeout 120 "${chrome[@]}" --screenshot="$screenshot" "$page" >>"$data/chromium.log" 2>&1 \
  || fail "$browser could not take the screenshot (log: $data/chromium.log)"
[ -s "$screenshot" ] || fail "no screenshot at $screenshot"

# The rendered table has a row per counter: <td ...>name</td><td><strong>value</strong></td>.
figure() { grep -o "$1</td><td><strong>[0-9.]*<" "$data/page.html" | head -n 1 | sed 's/.*<strong>//; s/<$//'; }
for name in snapper.txn.committed.Act snapper.txn.committed.Pact snapper.pact.batches snapper.log.flushes snapper.log.bytes; do
  value=$(figure "$name")
  if [ -z "$value" ]; then
    fail "the rendered counters page does not list $name"
  elif ! awk -v v="$value" 'BEGIN { exit !(v > 0) }'; then
    fail "the rendered counters page shows $name = $value after the load (expected more than 0)"
  else
    echo "   $name = $value"
  fi
done
for name in snapper.txn.aborted.WaitDie snapper.pact.batch.commit_lag.mean snapper.log.recovery.duration; do
  [ -n "$(figure "$name")" ] || fail "the rendered counters page does not list $name"
done

# The same figures for a scraper: the Snapper meter on the Prometheus endpoint, tagged by mode.
curl -sf "http://localhost:$web_port/metrics" >"$data/metrics.txt" || fail "GET /metrics failed"
grep -q '^snapper_txn_committed_total{.*mode="Pact"' "$data/metrics.txt" \
  || fail "/metrics has no snapper_txn_committed_total for PACTs (saved in $data/metrics.txt)"
