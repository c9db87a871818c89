#!/usr/bin/env bash
# make bench-wrk: a cache-hit GET /v1/decode served by five servers, each in
# a process of its own, under the same load from a third process (wrk, 64
# connections), alternated in rounds, with the ratios of one run:
#
#   vinsvc-limits  vinsvc as in production: rate limits on (a plan too large
#                  ever to refuse), the gateway headers, REDIS_URL unset
#   vinsvc-nolim   the same with RATE_LIMITS=off
#   vinsvc-minimal the same with RATE_LIMITS=off and LOG_LEVEL=warn (no
#                  limiter, no access line): the service's other work only
#   bare           a bare net/http handler (tools/benchbare) writing the
#                  response vinsvc wrote (status, headers, body, captured
#                  with curl), checking nothing
#   echo-floor     the same response from an Echo route without middleware,
#                  on a server with vinsvc's timeouts (tools/benchbare
#                  echo): the framework and the production server settings,
#                  before any of the service's own work
#   nginx          nginx with proxy_cache in front of vinsvc-limits, answering
#                  from its cache behind the same proxy-secret check
#                  (worker_processes 2, access log on): what an operator
#                  might deploy instead of the service
#   vinsvc-redis   vinsvc-limits with REDIS_URL=redis://127.0.0.1:6379/0
#   vinsvc-trace01 vinsvc-limits with tracing on (OTEL_EXPORTER_OTLP_ENDPOINT
#                  at a collector that drops everything, tools/benchbare
#                  sink), OTEL_TRACES_SAMPLER=parentbased_traceidratio,
#                  OTEL_TRACES_SAMPLER_ARG=0.1; wrk sends no traceparent,
#                  so a tenth of the requests are sampled and exported
#   vinsvc-trace1  the same at 1.0: every request sampled and exported
#
# The cache is filled the way production fills it: vinsvc's VPIC_BASE_URL
# points at a fake vPIC (tools/benchbare vpic) that answers every call with
# a recorded vPIC answer (vinsvc/internal/vpic/vpictest/testdata), and one
# request per instance makes the single upstream call. That needs no
# network and no snapshot download, and what is measured is the common case
# of a vPIC answer from the cache. The vPIC snapshot is loaded as in
# production when data/vpic/ holds it (BENCH_SNAPSHOT; see below).
#
# Settings (environment): ROUNDS (5), DURATION (6s per server and round),
# CONNS (64), THREADS (wrk threads, 2), WARMUP (3s per server before the
# rounds), BENCH_KEEP=1 keeps the work directory (logs, captured response).
#
# Needs wrk and nginx: when missing they are installed with apt-get (as
# root, else with sudo); nothing else needs root. Redis: when nothing
# answers on 127.0.0.1:6379 it is started as .ci/run does, and stopped
# again at the end. Every process the script starts is stopped on exit.
set -euo pipefail

ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-6s}
CONNS=${CONNS:-64}
THREADS=${THREADS:-2}
WARMUP=${WARMUP:-3s}
VIN=1HGCM82633A004352
SECRET=bench-proxy-secret
PLAN=BENCH
SERVERS=(vinsvc-limits vinsvc-nolim vinsvc-minimal bare echo-floor nginx vinsvc-redis vinsvc-trace01 vinsvc-trace1)

root=$(cd "$(dirname "$0")/.." && pwd)
fixture=$root/vinsvc/internal/vpic/vpictest/testdata/decode_$VIN.json
# The vPIC snapshot, loaded as production loads it (VPIC_SNAPSHOT_MODE
# fallback, the image ships the file): it plays no part in a hit, but its
# ~75 MB of live heap is what the garbage collector paces itself by, and
# an empty heap makes the collector run far more often than in production.
# BENCH_SNAPSHOT=off, or no file, runs without it.
snapshot=${BENCH_SNAPSHOT:-$root/data/vpic/vpic.lite.db}
[ "$snapshot" != off ] && [ -f "$snapshot" ] || snapshot=""

# --- tools ---------------------------------------------------------------
missing=()
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
if [ ${#missing[@]} -gt 0 ]; then
	echo "== installing ${missing[*]} with apt-get (Debian packages)"
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	# Debian's package starts its own nginx on port 80; this script uses its own.
	$sudo systemctl disable --now nginx >/dev/null 2>&1 || true
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

# --- clean-up: every process started here, by its id ---------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-wrk.XXXXXX")
pids=()
started_redis=""
cleanup() {
	set +e
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	if [ -n "$started_redis" ]; then redis-cli -p 6379 shutdown nosave >/dev/null 2>&1; fi
	if [ "${BENCH_KEEP:-}" = 1 ]; then echo "work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- Redis ---------------------------------------------------------------
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
	echo "== starting redis-server on 127.0.0.1:6379 (stopped again at the end)"
	if redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
		--dir /var/lib/redis --logfile /var/log/redis/ci.log; then
		started_redis=1
		for _ in $(seq 50); do redis-cli -p 6379 ping >/dev/null 2>&1 && break; sleep 0.1; done
	else # vinsvc-redis then measures vinsvc with its Redis down
		echo "warning: redis-server did not start; vinsvc-redis runs without Redis" >&2
	fi
fi

# --- build ---------------------------------------------------------------
echo "== building vinsvc and tools/benchbare"
(cd "$root" && go build -o "$work/vinsvc" ./vinsvc/cmd/vinsvc)
GOWORK=off go -C "$root/tools" build -o "$work/benchbare" ./benchbare

ports=$("$work/benchbare" ports 11)
read -r p_vpic p_limits p_nolim p_bare p_nginx p_redis p_sink p_trace01 p_trace1 p_minimal p_echo <<<"$(echo $ports)"

# wait_http URL: until URL answers (any status), at most 10 s.
wait_http() {
	for _ in $(seq 100); do
		curl -s -o /dev/null "$1" && return 0
		sleep 0.1
	done
	echo "no answer from $1" >&2
	return 1
}

# start NAME CMD...: run CMD in the background, output appended to
# $work/NAME.log (truncated between measurements); its pid goes to
# $work/NAME.pid.
start() {
	local name=$1
	shift
	"$@" >>"$work/$name.log" 2>&1 &
	pids+=($!)
	echo $! >"$work/$name.pid"
}

# cpu_ticks SERVER: CPU time (user + system, clock ticks) used so far by the
# server's process, or by nginx's workers.
cpu_ticks() {
	local p=$(<"$work/$1.pid") ps
	ps=$p
	[ "$1" != nginx ] || ps=$(pgrep -P "$p" | paste -sd' ')
	for q in $ps; do awk '{print $14 + $15}' "/proc/$q/stat"; done | awk '{t += $1} END {print t + 0}'
}

# start_vinsvc NAME PORT RATE_LIMITS [REDIS_URL [VAR=VALUE...]]: a clean
# environment, so nothing of the caller's (a PORT, a REDIS_URL, an
# OTEL_* variable) leaks in; "" for no REDIS_URL.
start_vinsvc() {
	local env=(PATH="$PATH" HOME="$HOME" APP_ENV=production LOG_LEVEL=info PORT="$2"
		PROXY_SECRET="$SECRET" CACHE_PATH="$work/$1.db" VPIC_BASE_URL="http://127.0.0.1:$p_vpic"
		RATE_LIMITS="$3")
	if [ -n "$snapshot" ]; then
		env+=(VPIC_SNAPSHOT_MODE=fallback VPIC_SNAPSHOT_PATH="$snapshot")
	else
		env+=(VPIC_SNAPSHOT_MODE=off)
	fi
	[ -z "${4:-}" ] || env+=(REDIS_URL="$4")
	[ $# -le 4 ] || env+=("${@:5}")
	start "$1" env -i "${env[@]}" "$work/vinsvc" # env execs vinsvc: same pid
}

url_of() {
	case $1 in
	vinsvc-limits) echo "http://127.0.0.1:$p_limits" ;;
	vinsvc-nolim) echo "http://127.0.0.1:$p_nolim" ;;
	vinsvc-minimal) echo "http://127.0.0.1:$p_minimal" ;;
	bare) echo "http://127.0.0.1:$p_bare" ;;
	echo-floor) echo "http://127.0.0.1:$p_echo" ;;
	nginx) echo "http://127.0.0.1:$p_nginx" ;;
	vinsvc-redis) echo "http://127.0.0.1:$p_redis" ;;
	vinsvc-trace01) echo "http://127.0.0.1:$p_trace01" ;;
	vinsvc-trace1) echo "http://127.0.0.1:$p_trace1" ;;
	esac
}

headers=(-H "X-Gateway-Proxy-Secret: $SECRET" -H "X-Gateway-Subscription: $PLAN" -H "X-Gateway-User: bench-subscriber")
path="/v1/decode?vin=$VIN"

# --- servers ---------------------------------------------------------------
echo "== starting the servers"
limits="$PLAN=1000000000/1s,default=60/1m" # a billion a second: never refuses
start vpic "$work/benchbare" vpic "127.0.0.1:$p_vpic" "$fixture"
start_vinsvc vinsvc-limits "$p_limits" "$limits"
start_vinsvc vinsvc-nolim "$p_nolim" off
start_vinsvc vinsvc-minimal "$p_minimal" off "" LOG_LEVEL=warn
start_vinsvc vinsvc-redis "$p_redis" "$limits" redis://127.0.0.1:6379/0
start sink "$work/benchbare" sink "127.0.0.1:$p_sink"
tracing=(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$p_sink" OTEL_TRACES_SAMPLER=parentbased_traceidratio)
start_vinsvc vinsvc-trace01 "$p_trace01" "$limits" "" "${tracing[@]}" OTEL_TRACES_SAMPLER_ARG=0.1
start_vinsvc vinsvc-trace1 "$p_trace1" "$limits" "" "${tracing[@]}" OTEL_TRACES_SAMPLER_ARG=1.0
for s in vinsvc-limits vinsvc-nolim vinsvc-minimal vinsvc-redis vinsvc-trace01 vinsvc-trace1; do
	wait_http "$(url_of $s)/livez"
	if [ -n "$snapshot" ]; then # loaded in the background: wait for it
		for _ in $(seq 600); do
			curl -s "$(url_of $s)/v1/health" | grep -q '"available":true' && break
			sleep 0.1
		done
	fi
	# The one upstream call: a miss that fills the cache.
	curl -sf -o /dev/null "${headers[@]}" "$(url_of $s)$path"
done

# The response vinsvc writes for a hit, as the bare handler's script.
curl -sfi "${headers[@]}" "$(url_of vinsvc-limits)$path" >"$work/response.http"
grep -qi '^x-cache: HIT' "$work/response.http" || { echo "vinsvc did not answer from its cache:"; cat "$work/response.http"; exit 1; }
start bare "$work/benchbare" bare "127.0.0.1:$p_bare" "$work/response.http"
start echo-floor "$work/benchbare" echo "127.0.0.1:$p_echo" "$work/response.http"
wait_http "$(url_of bare)/" && wait_http "$(url_of echo-floor)/"

mkdir -p "$work/nginx/cache"
nginx_user=""
[ "$(id -u)" -ne 0 ] || nginx_user="user root;" # the workers must reach $work (mode 0700)
cat >"$work/nginx/nginx.conf" <<EOF
$nginx_user
worker_processes 2;
pid $work/nginx/nginx.pid;
error_log $work/nginx.log warn;
events { worker_connections 1024; }
http {
    log_format bench '\$remote_addr [\$time_local] "\$request" \$status \$body_bytes_sent \$upstream_cache_status';
    access_log $work/nginx-access.txt bench;
    client_body_temp_path $work/nginx/body;
    proxy_temp_path $work/nginx/proxy;
    fastcgi_temp_path $work/nginx/fastcgi;
    uwsgi_temp_path $work/nginx/uwsgi;
    scgi_temp_path $work/nginx/scgi;
    proxy_cache_path $work/nginx/cache levels=1:2 keys_zone=vin:10m max_size=100m inactive=60m use_temp_path=off;
    upstream vinsvc { server 127.0.0.1:$p_limits; keepalive 16; }
    server {
        listen 127.0.0.1:$p_nginx;
        location / {
            if (\$http_x_gateway_proxy_secret != "$SECRET") { return 403; }
            proxy_pass http://vinsvc;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_cache vin;
            proxy_cache_key \$request_uri;
            proxy_cache_valid 200 10m;
            proxy_cache_lock on;
        }
    }
}
EOF
start nginx "$NGINX" -e "$work/nginx.log" -p "$work/nginx" -c "$work/nginx/nginx.conf" -g 'daemon off;'
wait_http "$(url_of nginx)/livez"
curl -sf -o /dev/null "${headers[@]}" "$(url_of nginx)$path" # fills nginx's cache

# Every server must send the same body; print the headers for the record.
curl -sf "${headers[@]}" "$(url_of vinsvc-limits)$path" >"$work/body.json"
for s in "${SERVERS[@]}"; do
	curl -sf -D "$work/headers-$s.txt" -o "$work/body-$s.json" "${headers[@]}" "$(url_of "$s")$path"
	cmp -s "$work/body.json" "$work/body-$s.json" || { echo "$s sends another body than vinsvc"; exit 1; }
done
echo "== response (each server's body: $(wc -c <"$work/body.json") bytes, identical); headers:"
for s in "${SERVERS[@]}"; do
	echo "-- $s: $(tr -d '\r' <"$work/headers-$s.txt" | sed 1d | cut -d: -f1 | grep . | sort | paste -sd' ')"
done

# --- measure ---------------------------------------------------------------
# measure SERVER DURATION: one wrk run; prints "rps p50_ms p99_ms cpu_us",
# cpu_us being the server's CPU time per request (user + system, from
# /proc; for nginx its workers'), which the machine's other load disturbs
# less than the rates.
measure() {
	local out t0 t1
	t0=$(cpu_ticks "$1")
	out=$(wrk -t"$THREADS" -c"$CONNS" -d"$2" --latency "${headers[@]}" "$(url_of "$1")$path")
	t1=$(cpu_ticks "$1")
	if grep -q -e 'Non-2xx' -e 'Socket errors' <<<"$out"; then
		echo "$1: wrk saw failed requests:" >&2
		echo "$out" >&2
		return 1
	fi
	awk -v ticks=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" '
		function ms(v) {
			if (v ~ /us$/) return v / 1000
			if (v ~ /ms$/) return v + 0
			if (v ~ /s$/) return v * 1000
			return v
		}
		$1 == "50%" { p50 = ms($2) }
		$1 == "99%" { p99 = ms($2) }
		$1 == "Requests/sec:" { rps = $2 }
		$2 == "requests" && $3 == "in" { n = $1 }
		END { printf "%.0f %.3f %.3f %.1f\n", rps, p50, p99, ticks / hz * 1e6 / n }' <<<"$out"
	# Keep the logs small: every vinsvc request writes an access line.
	for f in "$work"/*.log; do : >"$f"; done
}

echo "== warm-up: $WARMUP per server"
for s in "${SERVERS[@]}"; do measure "$s" "$WARMUP" >/dev/null; done

results=$work/results.txt
: >"$results"
echo "== $ROUNDS rounds of $DURATION per server; wrk -t$THREADS -c$CONNS --latency, $(nproc) CPUs shared by server and wrk"
echo "   load average before: $(cut -d' ' -f1-3 /proc/loadavg) (anything above 0 is other work sharing the CPUs)"
printf '%-6s %-14s %10s %9s %9s %12s\n' round server req/s p50_ms p99_ms cpu_us/req
n=${#SERVERS[@]}
for r in $(seq "$ROUNDS"); do
	for i in $(seq 0 $((n - 1))); do # each round starts one server later
		s=${SERVERS[$(((i + r - 1) % n))]}
		line=$(measure "$s" "$DURATION")
		read -r rps p50 p99 cpu <<<"$line"
		echo "$r $s $rps $p50 $p99 $cpu" >>"$results"
		printf '%-6s %-14s %10s %9s %9s %12s\n' "$r" "$s" "$rps" "$p50" "$p99" "$cpu"
	done
done

echo "   load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== nginx's access log: $(awk '$NF == "HIT"' "$work/nginx-access.txt" | wc -l) answers from its cache, $(awk '$NF != "HIT"' "$work/nginx-access.txt" | wc -l) others (the fill, the start-up check)"

# --- summary: per server, the median over the rounds; per ratio, the
# median and the range of the ratios of each round (both sides measured
# within a minute of each other, so a change in the machine's other load
# moves both) ---------------------------------------------------------------
echo
echo "== summary (median of $ROUNDS rounds)"
awk -v servers="${SERVERS[*]}" '
	function med(vals, k) {
		asort(vals)
		return k % 2 ? vals[(k + 1) / 2] : (vals[k / 2] + vals[k / 2 + 1]) / 2
	}
	function col(r, s, c,    v) { split(row[r, s], v, " "); return v[c] }
	function median(s, c,    r, k, vals) {
		for (r = 1; r <= rounds; r++) vals[++k] = col(r, s, c)
		return med(vals, k)
	}
	# ratio(a, b, c): "median  lo-hi" of the per-round ratios of column c.
	function ratio(a, b, c,    r, k, x, lo, hi, vals) {
		lo = 1e18; hi = -1e18
		for (r = 1; r <= rounds; r++) {
			x = col(r, a, c) / col(r, b, c)
			vals[++k] = x
			if (x < lo) lo = x
			if (x > hi) hi = x
		}
		return sprintf("%6.2f   %.2f-%.2f", med(vals, k), lo, hi)
	}
	function diff(a, b, c,    r, k, x, lo, hi, vals) {
		lo = 1e18; hi = -1e18
		for (r = 1; r <= rounds; r++) {
			x = col(r, a, c) - col(r, b, c)
			vals[++k] = x
			if (x < lo) lo = x
			if (x > hi) hi = x
		}
		return sprintf("%+6.2f   %+.2f to %+.2f ms", med(vals, k), lo, hi)
	}
	{ row[$1, $2] = $3 " " $4 " " $5 " " $6; if ($1 > rounds) rounds = $1 }
	END {
		n = split(servers, names, " ")
		printf "%-14s %10s %9s %9s %12s\n", "server", "req/s", "p50_ms", "p99_ms", "cpu_us/req"
		for (i = 1; i <= n; i++) printf "%-14s %10.0f %9.3f %9.3f %12.1f\n", names[i], median(names[i], 1), median(names[i], 2), median(names[i], 3), median(names[i], 4)
		print ""
		printf "%-44s %6s   %s\n", "per-round ratio (target)", "median", "range"
		printf "%-44s %s\n", "vinsvc-limits / bare, req/s (>= 0.90)", ratio("vinsvc-limits", "bare", 1)
		printf "%-44s %s\n", "vinsvc-limits / bare, p99 (<= 1.50)", ratio("vinsvc-limits", "bare", 3)
		printf "%-44s %s\n", "vinsvc-limits / bare, CPU per request", ratio("vinsvc-limits", "bare", 4)
		printf "%-44s %s\n", "vinsvc-nolim / bare, req/s", ratio("vinsvc-nolim", "bare", 1)
		printf "%-44s %s\n", "vinsvc-nolim / bare, p99", ratio("vinsvc-nolim", "bare", 3)
		printf "%-44s %s\n", "vinsvc-minimal / bare, req/s", ratio("vinsvc-minimal", "bare", 1)
		printf "%-44s %s\n", "echo-floor / bare, req/s", ratio("echo-floor", "bare", 1)
		printf "%-44s %s\n", "vinsvc-limits / echo-floor, req/s", ratio("vinsvc-limits", "echo-floor", 1)
		printf "%-44s %s\n", "vinsvc-limits / nginx, req/s (>= 0.80)", ratio("vinsvc-limits", "nginx", 1)
		printf "%-44s %s\n", "vinsvc-limits / nginx, p99", ratio("vinsvc-limits", "nginx", 3)
		printf "%-44s %s\n", "vinsvc-redis - vinsvc-limits, p99 (<= +1 ms)", diff("vinsvc-redis", "vinsvc-limits", 3)
		printf "%-44s %s\n", "vinsvc-trace01 / vinsvc-limits, req/s (>= 0.95)", ratio("vinsvc-trace01", "vinsvc-limits", 1)
		printf "%-44s %s\n", "vinsvc-trace01 / vinsvc-limits, CPU per request", ratio("vinsvc-trace01", "vinsvc-limits", 4)
		printf "%-44s %s\n", "vinsvc-trace1 / vinsvc-limits, req/s", ratio("vinsvc-trace1", "vinsvc-limits", 1)
		printf "%-44s %s\n", "vinsvc-trace1 / vinsvc-limits, CPU per request", ratio("vinsvc-trace1", "vinsvc-limits", 4)
	}' "$results"
