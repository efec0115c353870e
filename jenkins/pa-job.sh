#!/usr/bin/env bash
# The PA (performance analysis) Jenkins job: set up pal, work out which trigger fired, run
# `pal run`, and turn its exit code into the Jenkins build result.
#
# Called by the JJB job (jenkins/jobs/pal-pa.yaml) and the Jenkinsfile; all logic lives here
# so both behave the same and tests can run it with a Jenkins-like environment.
#
# Inputs (environment; Jenkins sets the upper-case Jenkins/Gerrit ones):
#   WORKSPACE            job workspace (default: current directory); outputs go under it
#   PAL_SPEC             spec path, relative to WORKSPACE (default specs/csit-trending.yaml)
#   PAL_OUT              output root passed as --out (default $WORKSPACE/out)
#   PAL_VENV             virtualenv to create/reuse (default $WORKSPACE/.pal-venv)
#   PAL_SKIP_INSTALL=1   do not pip-install pal into the venv (it is already there)
#   PAL_SRC              what to pip-install (default: the checkout holding this script)
#   PAL_CONSTRAINTS      pip constraints file pinning every dependency (default: constraints.txt
#                        of the checkout holding this script); installs are never unpinned
#   PAL_PYTHON           interpreter that creates the venv (default python3)
#   PAL_BIN              the pal executable (default $PAL_VENV/bin/pal)
#   PAL_TRIGGER          force the trigger (upstream|gerrit|timer|manual); else detected from
#                        GERRIT_EVENT_TYPE, BUILD_CAUSE / ROOT_BUILD_CAUSE (EnvInject),
#                        UPSTREAM_JOB_NAME, or the build's causes in the Jenkins API
#   UPSTREAM_JOB_NAME, UPSTREAM_BUILD_NUMBER   the PT build that finished (upstream trigger)
#   PAL_CAUSE_LOOKUP=0   never ask the Jenkins API ($BUILD_URL) for the build causes
#   JENKINS_USER, JENKINS_TOKEN                API credentials (credentials-binding)
#   PAL_GERRIT_FETCH=0   do not fetch GERRIT_REFSPEC on a Gerrit-triggered run
#   PAL_GERRIT_REMOTE    where to fetch it from (default ssh://GERRIT_HOST:GERRIT_PORT/GERRIT_PROJECT)
#   PAL_EXECUTOR, PAL_SCHEDULER, PAL_WORKERS   --executor / --scheduler / --workers
#   PAL_FULL=true|1      --full (recompute from scratch)
#   PAL_UNSTABLE_RETURN  exit code meaning UNSTABLE (default 3; the JJB shell builder's
#                        unstable-return must match)
#
# Outputs: $WORKSPACE/pal-result.txt (SUCCESS, UNSTABLE or FAILURE), $WORKSPACE/pal-email-subject.txt
# (the alert mail subject), and pal's own outputs under $PAL_OUT. A failed run (any step) removes
# the published outputs an earlier run left in $PAL_OUT (site, alert files, alerts.json,
# junit.xml, exports) and publishes a failure page ($PAL_OUT/site/index.html) and mail bodies
# saying what failed; report.json is only ever this run's.
# Exit status: 0 SUCCESS, $PAL_UNSTABLE_RETURN UNSTABLE, 1 FAILURE.
#
# pal exit codes: 0 no new regression, 2 regressions found, 1 error. Exit 2 becomes the
# spec's alerts.regression-result (UNSTABLE or FAILURE; FAILURE when it cannot be read).

set -euo pipefail

log() { printf 'pa-job: %s\n' "$*"; }

# An error of this script: logged, and kept for the failure page and mail.
fail_msg() {
    FAILED="$*"
    log "error: $*"
}

is_true() { case "${1:-}" in 1 | true | TRUE | True | yes) return 0 ;; *) return 1 ;; esac; }

# Which trigger fired; sets TRIGGER, UPSTREAM_JOB, UPSTREAM_BUILD.
detect_trigger() {
    TRIGGER="${PAL_TRIGGER:-}"
    UPSTREAM_JOB="${UPSTREAM_JOB_NAME:-}"
    UPSTREAM_BUILD="${UPSTREAM_BUILD_NUMBER:-}"
    local cause="${BUILD_CAUSE:-}"
    [[ -n "$cause" ]] || cause="${ROOT_BUILD_CAUSE:-}"
    if [[ -z "$TRIGGER" ]]; then
        if [[ -n "${GERRIT_EVENT_TYPE:-}" ]]; then
            TRIGGER=gerrit
        elif [[ ",$cause," == *,UPSTREAMTRIGGER,* ]] || [[ -n "$UPSTREAM_JOB" ]]; then
            TRIGGER=upstream
        elif [[ ",$cause," == *,GERRIT* ]]; then
            TRIGGER=gerrit
        elif [[ ",$cause," == *,TIMERTRIGGER,* ]]; then
            TRIGGER=timer
        elif [[ ",$cause," == *,MANUALTRIGGER,* ]]; then
            TRIGGER=manual
        fi
    fi
    # The Jenkins API knows what EnvInject does not: the upstream job and build.
    if { [[ -z "$TRIGGER" ]] || { [[ "$TRIGGER" == upstream ]] && [[ -z "$UPSTREAM_JOB" ]]; }; } &&
        [[ -n "${BUILD_URL:-}" ]] && [[ "${PAL_CAUSE_LOOKUP:-1}" != 0 ]]; then
        local line t j b
        if line="$("$PY" "$HERE/build_cause.py" "$BUILD_URL")"; then
            IFS=$'\t' read -r t j b <<<"$line" || true
            [[ -n "$TRIGGER" ]] || TRIGGER="$t"
            if [[ "$TRIGGER" == upstream ]]; then
                UPSTREAM_JOB="${UPSTREAM_JOB:-$j}"
                UPSTREAM_BUILD="${UPSTREAM_BUILD:-$b}"
            fi
        else
            log "warning: could not read the build causes from Jenkins"
        fi
    fi
    TRIGGER="${TRIGGER:-manual}"
    case "$TRIGGER" in
        upstream | gerrit | timer | manual) ;;
        *)
            fail_msg "unknown trigger '$TRIGGER' (expected upstream, gerrit, timer or manual)"
            return 1
            ;;
    esac
}

# Gerrit-triggered: analyse the spec of the change under review.
gerrit_checkout() {
    if [[ "${PAL_GERRIT_FETCH:-1}" == 0 ]]; then
        log "gerrit: fetch disabled (PAL_GERRIT_FETCH=0)"
        return 0
    fi
    if [[ -z "${GERRIT_REFSPEC:-}" ]]; then
        log "gerrit: no GERRIT_REFSPEC, analysing the workspace as it is"
        return 0
    fi
    local head=""
    head="$(git -C "$WORKSPACE" rev-parse HEAD 2>/dev/null || true)"
    if [[ -n "${GERRIT_PATCHSET_REVISION:-}" ]] && [[ "$head" == "$GERRIT_PATCHSET_REVISION" ]]; then
        log "gerrit: $GERRIT_REFSPEC already checked out ($head)"
        return 0
    fi
    local remote="${PAL_GERRIT_REMOTE:-}"
    if [[ -z "$remote" ]]; then
        if [[ -n "${GERRIT_HOST:-}" ]] && [[ -n "${GERRIT_PROJECT:-}" ]]; then
            remote="${GERRIT_SCHEME:-ssh}://${GERRIT_HOST}:${GERRIT_PORT:-29418}/${GERRIT_PROJECT}"
        else
            remote=origin
        fi
    fi
    log "gerrit: fetching $GERRIT_REFSPEC from $remote"
    FAILED="gerrit: could not fetch $GERRIT_REFSPEC from $remote"
    git -C "$WORKSPACE" fetch --quiet "$remote" "$GERRIT_REFSPEC"
    FAILED=""
    git -C "$WORKSPACE" checkout --quiet --detach FETCH_HEAD
    log "gerrit: checked out $(git -C "$WORKSPACE" rev-parse HEAD)"
}

setup_venv() {
    if [[ ! -x "$PAL_VENV/bin/python" ]]; then
        log "creating virtualenv $PAL_VENV"
        FAILED="could not create the virtualenv $PAL_VENV"
        "${PAL_PYTHON:-python3}" -m venv "$PAL_VENV"
    fi
    if is_true "${PAL_SKIP_INSTALL:-0}"; then
        log "PAL_SKIP_INSTALL set: using pal as installed in $PAL_VENV"
    else
        local constraints="${PAL_CONSTRAINTS:-$(dirname "$HERE")/constraints.txt}"
        if [[ ! -f "$constraints" ]]; then
            fail_msg "no constraints file $constraints: dependencies are only installed pinned"
            return 1
        fi
        log "installing pal from $PAL_SRC into $PAL_VENV (pinned by $constraints)"
        FAILED="could not install pal from $PAL_SRC (pinned by $constraints)"
        "$PAL_VENV/bin/python" -m pip install --quiet --upgrade -c "$constraints" "$PAL_SRC"
    fi
    FAILED=""
}

# alerts.regression-result of the spec: UNSTABLE or FAILURE (FAILURE if unreadable).
regression_result() {
    local value
    value="$("$PY" -c '
import sys, yaml
d = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
a = d.get("alerts") if isinstance(d, dict) else None
print(a.get("regression-result", "FAILURE") if isinstance(a, dict) else "FAILURE")
' "$1" 2>/dev/null || true)"
    case "$value" in
        UNSTABLE | FAILURE) printf '%s' "$value" ;;
        *) printf 'FAILURE' ;;
    esac
}

# Jobs with a non-empty per-job regressions file, comma-separated.
regressed_jobs() {
    local f name jobs=""
    for f in "$PAL_OUT"/alerts/regressions-*.txt; do
        [[ -s "$f" ]] || continue
        grep -qiEv '^[[:space:]]*(no regressions)?[[:space:]]*$' "$f" || continue
        name="${f##*/regressions-}"
        jobs="${jobs:+$jobs, }${name%.txt}"
    done
    printf '%s' "$jobs"
}

html_escape() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g'; }

# What failed, in a few lines: pal's own error lines (or the end of its stderr), else the step
# of this script that failed.
failure_details() {
    local lines=""
    if [[ -s "${PAL_LOG:-}" ]]; then
        lines="$(grep -E '^(error|Traceback|[A-Za-z.]*(Error|Exception))' "$PAL_LOG" | tail -n 20 || true)"
        [[ -n "$lines" ]] || lines="$(tail -n 20 "$PAL_LOG")"
    fi
    [[ -n "$lines" ]] || lines="${FAILED:-pa-job.sh stopped (see the console log)}"
    printf '%s\n' "$lines"
}

# A failed run publishes what failed and nothing else: the workspace keeps $PAL_OUT between
# builds, and the archive, JUnit, HTML and mail steps must not re-publish an earlier run's
# results as this build's. The mail bodies and the page say what failed.
publish_failure() {
    local rc="$1" details body f
    details="$(failure_details)"
    rm -rf "$PAL_OUT/site" "$PAL_OUT/alerts" "$PAL_OUT/exports"
    rm -f "$PAL_OUT/alerts.json" "$PAL_OUT/junit.xml"
    mkdir -p "$PAL_OUT/alerts" "$PAL_OUT/site"
    body="ERROR: The build number ${BUILD_NUMBER:-?} of the job ${JOB_NAME:-pal} failed (exit code $rc). For more information see: ${BUILD_URL:-the console log}

What failed:
$details

No trending results were published by this build."
    for f in trending-regressions.txt trending-progressions.txt trending-failed-tests.txt; do
        printf '%s\n' "$body" >"$PAL_OUT/alerts/$f"
    done
    {
        printf '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Performance trending: analysis failed</title></head>\n<body>\n'
        printf '<h1>Performance trending: analysis failed</h1>\n'
        printf '<p>Build %s of %s failed (exit code %s); no trending results were published by this build.</p>\n' \
            "$(printf '%s' "${BUILD_NUMBER:-?}" | html_escape)" "$(printf '%s' "${JOB_NAME:-pal}" | html_escape)" "$rc"
        printf '<h2>What failed</h2>\n<pre>%s</pre>\n' "$(printf '%s\n' "$details" | html_escape)"
        printf '<p>Full log: %s</p>\n</body></html>\n' "$(printf '%s' "${BUILD_URL:-the console log}" | html_escape)"
    } >"$PAL_OUT/site/index.html"
}

# Any early failure (venv, install, git) is a FAILURE, never mistaken for UNSTABLE.
on_exit() {
    local rc=$?
    if [[ $rc -ne 0 ]] && [[ ! -s "$WORKSPACE/pal-result.txt" ]]; then
        printf 'FAILURE\n' >"$WORKSPACE/pal-result.txt" || true
        printf 'Performance trending: analysis failed (build %s)' "${BUILD_NUMBER:-?}" \
            >"$WORKSPACE/pal-email-subject.txt" || true
        publish_failure "$rc" || true
        exit 1
    fi
}

main() {
    HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
    WORKSPACE="${WORKSPACE:-$PWD}"
    PAL_SPEC="${PAL_SPEC:-specs/csit-trending.yaml}"
    PAL_OUT="${PAL_OUT:-$WORKSPACE/out}"
    PAL_VENV="${PAL_VENV:-$WORKSPACE/.pal-venv}"
    PAL_SRC="${PAL_SRC:-$(dirname "$HERE")}"
    local unstable_return="${PAL_UNSTABLE_RETURN:-3}"
    PAL_LOG="$WORKSPACE/pal-stderr.log"
    FAILED=""
    cd "$WORKSPACE"
    rm -f "$WORKSPACE/pal-result.txt" "$WORKSPACE/pal-email-subject.txt" "$PAL_LOG"
    # report.json is pal's account of this run only: an earlier run's must never be archived
    rm -f "$PAL_OUT/report.json"
    trap on_exit EXIT

    setup_venv
    PY="$PAL_VENV/bin/python"
    local pal_bin="${PAL_BIN:-$PAL_VENV/bin/pal}"

    detect_trigger
    log "trigger: $TRIGGER${UPSTREAM_JOB:+ (upstream $UPSTREAM_JOB #${UPSTREAM_BUILD:-?})}"
    # pal has no option for the upstream build: it is passed on in the environment.
    export PAL_UPSTREAM_JOB="$UPSTREAM_JOB" PAL_UPSTREAM_BUILD="$UPSTREAM_BUILD"
    if [[ "$TRIGGER" == gerrit ]]; then
        log "gerrit: change ${GERRIT_CHANGE_NUMBER:-?} patch set ${GERRIT_PATCHSET_NUMBER:-?} (${GERRIT_PROJECT:-?} ${GERRIT_BRANCH:-?})"
        gerrit_checkout
    fi

    # specs/csit-trending.yaml reads archives of rotated builds from $WORKSPACE/archive-cache
    # first; pal validate wants every local source directory to exist (an empty one is fine)
    mkdir -p "$WORKSPACE/archive-cache"

    local cmd=("$pal_bin" run --spec "$PAL_SPEC" --out "$PAL_OUT" --trigger "$TRIGGER")
    [[ -z "${PAL_EXECUTOR:-}" ]] || cmd+=(--executor "$PAL_EXECUTOR")
    [[ -z "${PAL_SCHEDULER:-}" ]] || cmd+=(--scheduler "$PAL_SCHEDULER")
    [[ -z "${PAL_WORKERS:-}" ]] || cmd+=(--workers "$PAL_WORKERS")
    ! is_true "${PAL_FULL:-0}" || cmd+=(--full)
    [[ -z "$UPSTREAM_JOB" || -z "$UPSTREAM_BUILD" ]] || cmd+=(--upstream "$UPSTREAM_JOB#$UPSTREAM_BUILD")
    printf 'pa-job: running:'
    printf ' %q' "${cmd[@]}"
    printf '\n'
    local rc=0
    # pal's stderr goes to the console as it comes and to $PAL_LOG for the failure page
    { "${cmd[@]}" 2>&1 1>&3 3>&- | tee "$PAL_LOG" >&2 3>&-; } 3>&1 || rc=$?

    local result subject
    case "$rc" in
        0)
            result=SUCCESS
            subject="Performance trending: no new regressions"
            ;;
        2)
            result="$(regression_result "$PAL_SPEC")"
            local jobs
            jobs="$(regressed_jobs)"
            subject="Performance trending: regressions in ${jobs:-${UPSTREAM_JOB:-the analysed jobs}}"
            ;;
        *)
            result=FAILURE
            subject="Performance trending: analysis failed (build ${BUILD_NUMBER:-?})"
            publish_failure "$rc"
            ;;
    esac
    printf '%s\n' "$result" >"$WORKSPACE/pal-result.txt"
    printf '%s' "$subject" >"$WORKSPACE/pal-email-subject.txt"
    log "pal exit code $rc -> $result"
    case "$result" in
        SUCCESS) return 0 ;;
        UNSTABLE) return "$unstable_return" ;;
        *) return 1 ;;
    esac
}

# Everything runs from main: a Gerrit checkout may rewrite this file while bash reads it.
main "$@"
exit $?
