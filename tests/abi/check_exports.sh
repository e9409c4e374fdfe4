#!/usr/bin/env bash
# check_exports.sh NM LIBDLRT DECLARED_LIST PLUGIN_DIR EXPECTED_PLUGIN...
#
# The dynamic symbol tables are the ABI as the loader sees it. This checks that
#   - libdlrt.so exports only dlrt_* symbols, and exactly the DLRT_API functions the public
#     headers declare (DECLARED_LIST, one name a line, scanned at configure time): an extra
#     export is an internal symbol leaking, a missing one a broken promise;
#   - every plugin in PLUGIN_DIR (libdlrt-*.so) exports dlrt_plugin_init and nothing else;
#   - each EXPECTED_PLUGIN file (the plugins this build made) is among them.
set -uo pipefail
export LC_ALL=C  # one collation for sort and comm

nm_tool=$1 lib=$2 declared=$3 plugin_dir=$4
shift 4
status=0
fail() { echo "FAIL: $*" >&2; status=1; }

# Defined dynamic symbols, bare names (any @VERSION suffix dropped), sorted.
exports() {
  "$nm_tool" -D --defined-only "$1" | awk 'NF >= 3 {print $3}' | sed 's/@.*//' | sort -u
}

[ -f "$lib" ] || { echo "FAIL: $lib does not exist" >&2; exit 1; }
lib_exports=$(exports "$lib") || { echo "FAIL: $nm_tool could not read $lib" >&2; exit 1; }
[ -n "$lib_exports" ] || fail "$lib exports nothing"
stray=$(grep -v '^dlrt_' <<<"$lib_exports")
[ -z "$stray" ] && echo "ok: $(basename "$lib") exports only dlrt_* ($(wc -l <<<"$lib_exports") symbols)" ||
  fail "$(basename "$lib") exports symbols outside dlrt_*:"$'\n'"$stray"
undeclared=$(comm -23 <(echo "$lib_exports") <(sort -u "$declared"))
[ -z "$undeclared" ] || fail "$(basename "$lib") exports dlrt_* symbols no public header declares:"$'\n'"$undeclared"
unexported=$(comm -13 <(echo "$lib_exports") <(sort -u "$declared"))
[ -z "$unexported" ] || fail "declared DLRT_API functions $(basename "$lib") does not export:"$'\n'"$unexported"

shopt -s nullglob
plugins=("$plugin_dir"/libdlrt-*.so)
[ ${#plugins[@]} -gt 0 ] || fail "no plugin found in $plugin_dir"
for expected in "$@"; do
  [ -f "$expected" ] || fail "expected plugin $expected was not built"
done
for p in "${plugins[@]}"; do
  got=$(exports "$p") || { fail "$nm_tool could not read $p"; continue; }
  if [ "$got" = "dlrt_plugin_init" ]; then
    echo "ok: $(basename "$p") exports only dlrt_plugin_init"
  else
    fail "$(basename "$p") must export exactly dlrt_plugin_init; it exports:"$'\n'"$got"
  fi
done
exit $status
