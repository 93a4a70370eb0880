# Sourced by the test scripts that CI counts (test/cluster-kill-test.sh, test/dashboard-test.sh): writes a script's
# verdict as a .trx file with one test, in the shape .ci/run sums (<Counters ... passed="N" failed="N" ...>).
#
#   write_one_test_trx FILE RUN-NAME TEST-NAME SECONDS [FAILURE...]
#
# No failure given: the test passed. Each failure becomes a line of the result's message (XML-escaped).
write_one_test_trx() {
  local file="$1" run="$2" test="$3" seconds="$4"
  shift 4
  local outcome=Passed passed=1 failed=0 message=""
  if [ $# -gt 0 ]; then
    outcome=Failed passed=0 failed=1
    message="$(printf '%s\n' "$@" | sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g; s/"/\&quot;/g')"
  fi
  mkdir -p "$(dirname "$file")"
  cat >"$file" <<TRX
<?xml version="1.0" encoding="utf-8"?>
<TestRun id="$(cat /proc/sys/kernel/random/uuid)" name="$run" xmlns="http://microsoft.com/schemas/VisualStudio/TeamTest/2010">
  <Results>
    <UnitTestResult testName="$test" outcome="$outcome" duration="${seconds}s">
      <Output><ErrorInfo><Message>$message</Message></ErrorInfo></Output>
    </UnitTestResult>
  </Results>
  <ResultSummary outcome="$([ $failed -eq 0 ] && echo Completed || echo Failed)">
    <Counters total="1" executed="1" passed="$passed" failed="$failed" error="0" timeout="0" aborted="0" inconclusive="0" passedButRunAborted="0" notRunnable="0" notExecuted="0" disconnected="0" warning="0" completed="0" inProgress="0" pending="0" />
  </ResultSummary>
</TestRun>
TRX
}
