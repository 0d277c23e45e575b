# SPDX-License-Identifier: BSD-2-Clause
# bench/lib.sh - helpers shared by the bench scripts (sourced, not run).
#
# Environment read by every script:
#   B=DIR             build directory (default: build); the scripts use
#                     $B/tnfctl-follow, $B/tnfdump and $B/bench/*.
#   BENCH_SMOKE=1     tiny sizes, no package installs: a missing peer is
#                     skipped with a printed reason (what make bench-smoke sets).
#   BENCH_NO_INSTALL=1  never run apt-get (missing peers are skipped).

export LC_ALL=C
B=${B:-build}
BENCH_SMOKE=${BENCH_SMOKE:-0}
BENCH_NO_INSTALL=${BENCH_NO_INSTALL:-$BENCH_SMOKE}

die() {
	echo "$prog: $*" >&2
	exit 1
}

note() {
	echo "$prog: $*" >&2
}

need_root() {
	[[ $(id -u) -eq 0 ]] || die "must be run as root (BPF, ptrace, LTTng's root session daemon)"
}

# The load on the (shared) machine, printed with every result.
print_load() {
	echo "load: $(uptime | sed 's/^.*load average/load average/'), $(nproc) CPUs"
}

# have_pkgs PKG...: 0 if every Debian package is installed; otherwise
# installs them (unless BENCH_NO_INSTALL) and returns 0 on success, else
# prints why and returns 1 (the caller skips that peer).
have_pkgs() {
	local p missing=()
	for p in "$@"; do
		case "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" in
		*" ok installed") ;;
		*) missing+=("$p") ;;
		esac
	done
	((${#missing[@]} == 0)) && return 0
	if [[ $BENCH_NO_INSTALL == 1 ]]; then
		note "skipping: package(s) ${missing[*]} not installed (no installs in smoke mode)"
		return 1
	fi
	note "installing ${missing[*]} from Debian"
	if ! { DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" ||
		{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y \
			--no-install-recommends "${missing[@]}"; }; } >&2; then
		note "skipping: could not install ${missing[*]}"
		return 1
	fi
	return 0
}

# timed FILE CMD...: run CMD (stdout to /dev/null), append its wall time in
# ns to FILE; returns CMD's status.  stderr goes to $tmp/err.
timed() {
	local file=$1 t0 t1 rc=0
	shift
	t0=$(date +%s%N)
	"$@" >/dev/null 2>"$tmp/err" || rc=$?
	t1=$(date +%s%N)
	echo $((t1 - t0)) >>"$file"
	return "$rc"
}

# stats FILE [SCALE]: "median min max" of the numbers in FILE (one a line),
# each divided by SCALE (default 1).
stats() {
	sort -g "$1" | awk -v s="${2:-1}" '{ v[NR] = $1 / s }
		END { if (!NR) { print "nan nan nan"; exit }
		      m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		      printf "%.6g %.6g %.6g\n", m, v[1], v[NR] }'
}

# ratios A B OUT: per-round ratio A[i]/B[i] of two files of one number a
# line (same number of lines) into OUT.
ratios() {
	paste -d' ' "$1" "$2" | awk '{ printf "%.6f\n", $1 / $2 }' >"$3"
}

# fmt_ratio FILE: "median 1.23x (min 1.20x, max 1.30x)".
fmt_ratio() {
	stats "$1" | awk '{ printf "median %.3fx (min %.3fx, max %.3fx)", $1, $2, $3 }'
}

# fmt_time FILE: "median 1.234 s (min 1.200, max 1.300)" from ns.
fmt_time() {
	stats "$1" 1e9 | awk '{ printf "median %.3f s (min %.3f, max %.3f)", $1, $2, $3 }'
}
