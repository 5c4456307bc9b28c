#!/usr/bin/env bash
# Install everything the tests need (Debian's Chromium and Node.js, bubblewrap to contain
# the reproducers, torch CPU, the package with its test extras), then run the linter, the
# formatter's check, the type checker, the entry checks, the CPU reproducers (contained;
# those a change concerns and a daily share, or all with FAILPEDIA_PROVE=all) and the
# whole test suite (browser and slow tests included).
set -euo pipefail
cd "$(dirname "$0")/.."

# Chromium runs the browser tests (Debian's, or the browser FAILPEDIA_CHROMIUM names); Node
# runs the log page's matcher against Python's.
missing=()
[ -x "${FAILPEDIA_CHROMIUM:-/usr/bin/chromium}" ] || missing+=(chromium)
command -v node >/dev/null || missing+=(nodejs)
command -v bwrap >/dev/null || missing+=(bubblewrap)
if [ "${#missing[@]}" -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# torch is pinned: an unpinned torch pulls a multi-GB CUDA build.
python3 -m pip install -q --disable-pip-version-check "torch==2.13.0" -e ".[test]"
# Packages the CPU reproducers declare (pinned in their entries).
mapfile -t pins < <(failpedia requirements --device cpu)
if [ "${#pins[@]}" -gt 0 ]; then
  python3 -m pip install -q --disable-pip-version-check "${pins[@]}"
fi
# Packages they declare installed apart (another release of one installed above), each in
# its own folder, which no reproducer imports from unless it puts it on sys.path.
while read -r pin folder; do
  [ -d "$folder" ] || python3 -m pip install -q --disable-pip-version-check --no-deps \
    --target "$folder" "$pin"
done < <(failpedia requirements --device cpu --private)
export NO_MKDOCS_2_WARNING=1
python3 -m ruff check .
python3 -m ruff format --check .
python3 -m mypy
failpedia validate
# The README's command table and exit codes and CONTRIBUTING's field and package tables are
# written from the parser, the model and the parts' declarations: none may be out of date.
failpedia docs --check
# Prove CPU reproducers both ways, contained; any verdict but proved fails the run, and so
# does a machine where bubblewrap cannot contain them. Which ones (the plan, printed with
# each entry's reason): those whose committed record does not prove them as they are here
# (a changed reproducer, pin or runner; no record), those changed since FAILPEDIA_BASE_REF
# (a pull request's base), and the day's seventh of the rest, so each is proved at least
# weekly. FAILPEDIA_PROVE=all (the weekly scheduled run) proves every one.
selection=(--changed)
base="${FAILPEDIA_BASE_REF:-}"
if [ "${FAILPEDIA_PROVE:-changed}" = all ]; then
  selection=()
elif [ -n "$base" ] && git rev-parse --verify --quiet "$base^{commit}" >/dev/null; then
  selection+=(--since "$base")
elif [ -n "$base" ]; then
  echo "scripts/test.sh: base $base is not a commit here: proving every CPU reproducer" >&2
  selection=()
fi
failpedia verify "${selection[@]}" --device cpu --jobs 2 --no-record --require-packages --require-containment
# One test process per CPU (pytest-xdist); the slowest tests are listed, so a suite that
# grows slower shows where.
python3 -m pytest -n auto --durations=25 "$@"
