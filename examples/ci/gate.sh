#!/usr/bin/env bash
# normbench's regression gate: the shell steps of examples/ci/normbench.yml, runnable on any machine (the
# tests run them on stored runs). It fails closed: anything but "every case compared, no regression" fails.
#
#   gate.sh ab BASE [SUITE] time BASE (a commit, branch or tag) against the working tree in this job:
#                           the timing gate for pull requests (normbench ab; SUITE default $SUITE or quick)
#   gate.sh compare [RUN]   compare RUN (default: latest) with its machine's saved baseline of its suite:
#                           deterministic metrics, and timings on a runner that keeps its machine
#   gate.sh save [RUN]      keep RUN (default: latest) as that baseline
#
# Environment:
#   NORMBENCH                the command (default: normbench; e.g. "python -m normbench")
#   NORMBENCH_RESULTS        the results folder (default: results)
#   NORMBENCH_BASELINES      the baselines folder a CI cache restores and saves (default: baselines)
#   NORMBENCH_COMPARE_ARGS   extra options for compare, e.g. "--factor 1.5 --allow-incomparable"
#   NORMBENCH_AB_ARGS        extra options for ab, e.g. "--processes 7 --factor 1.15"
#   NORMBENCH_GATE_OUT       where ab.md/ab.json or comparison.md/comparison.json are written (default: .)
#   GITHUB_STEP_SUMMARY      set by GitHub Actions: the markdown (a pull-request comment: the verdict, the
#                            counts and only the rows that changed) is appended to it
#   PYTHON                   the interpreter that reads the JSON for ::error:: lines (default: python3)
#
# Exit codes are normbench's: 0 pass, 1 regression, 2 bad input (no baseline yet, a bad run id), 3
# inconclusive (a case not comparable, or run-to-run noise above --factor).
set -uo pipefail

read -r -a nb <<<"${NORMBENCH:-normbench}"
read -r -a extra <<<"${NORMBENCH_COMPARE_ARGS:-}"
export NORMBENCH_RESULTS="${NORMBENCH_RESULTS:-results}"
export NORMBENCH_BASELINES="${NORMBENCH_BASELINES:-baselines}"
out="${NORMBENCH_GATE_OUT:-.}"
action="${1:-}"
run="${2:-latest}"

case "$action" in
save)
    exec "${nb[@]}" baseline save "$run"
    ;;
ab)
    [ -n "${2:-}" ] || { echo "usage: gate.sh ab BASE [SUITE]" >&2; exit 2; }
    read -r -a abx <<<"${NORMBENCH_AB_ARGS:-}"
    mkdir -p "$out"
    "${nb[@]}" ab "$2" "${3:-${SUITE:-quick}}" --format json --markdown "$out/ab.md" ${abx[@]+"${abx[@]}"} >"$out/ab.json"
    code=$?
    if [ "$code" -eq 2 ]; then
        echo "::error title=normbench::ab could not start (exit 2); see the log above"
        exit 2
    fi
    [ -n "${GITHUB_STEP_SUMMARY:-}" ] && cat "$out/ab.md" >>"$GITHUB_STEP_SUMMARY"
    "${PYTHON:-python3}" - "$out/ab.json" <<'PY'
import json
import sys


def escape(text):  # workflow-command escaping: %, CR and LF
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


data = json.load(open(sys.argv[1], encoding="utf-8"))
print(escape(data["verdict"]))
shown = 0
for c in data["cases"]:
    if c["mark"] == "+":
        print("::error title=normbench regression::" + escape("%s %s: %.3fx slower than base" % (c["kind"], c["case"], c["ratio"])))
    elif c["mark"] in ("?", "x") and data["exit_code"] == 3 and shown < 20:
        shown += 1
        print("::error title=normbench inconclusive::" + escape("%s %s: %s" % (c["kind"], c["case"], c["note"])))
PY
    exit "$code"
    ;;
compare) ;;
*)
    echo "usage: gate.sh ab BASE [SUITE] | compare [RUN] | save [RUN]" >&2
    exit 2
    ;;
esac

mkdir -p "$out"
# One compare: the JSON for the ::error:: lines below, the markdown (only the rows that changed) beside it.
"${nb[@]}" compare --baseline "$run" --format json --markdown "$out/comparison.md" ${extra[@]+"${extra[@]}"} \
    >"$out/comparison.json"
code=$?
if [ "$code" -eq 2 ]; then # bad input: compare said why on stderr (no baseline for this machine, ...)
    echo "::error title=normbench::compare could not start (exit 2); see the log above"
    exit 2
fi
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    cat "$out/comparison.md" >>"$GITHUB_STEP_SUMMARY"
fi

# One ::error:: line per regression, and per case not compared when the gate is inconclusive.
"${PYTHON:-python3}" - "$out/comparison.json" <<'PY'
import json
import sys


def escape(text):  # workflow-command escaping: %, CR and LF
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


data = json.load(open(sys.argv[1], encoding="utf-8"))
print(escape(data["verdict"]))
for r in data["regressions"]:
    ratio = "" if r["ratio"] is None else " %.2fx" % r["ratio"]
    what = "%s %s %s%s: %s" % (r["bench"], r["case"], r["metric"], ratio, r["reason"])
    print("::error title=normbench regression::" + escape(what))
if data["exit_code"] == 3:
    for r in data["not_compared"][:20]:
        what = "%s %s %s: %s" % (r["bench"], r["case"], r["metric"], r["reason"])
        print("::error title=normbench not compared::" + escape(what))
    if len(data["not_compared"]) > 20:
        more = len(data["not_compared"]) - 20
        print("::error title=normbench not compared::and %d more (see the summary)" % more)
    for why in data["undetectable"]:
        print("::error title=normbench inconclusive::" + escape(why))
PY
exit "$code"
