#!/usr/bin/env bash
# Serve attnlab from N `streamlit run` replicas on loopback behind one nginx on PORT (DESIGN contract 7).
#
#   bash deploy/replicas.sh N PORT
#
# Runs in the foreground. Once every replica is healthy it prints one line per replica (index, port, pid)
# and the address to open. The live class (contract 18) keeps its classes where ATTNLAB_CLASS_STORE says; with
# ATTNLAB_REPLICAS_REDIS=1 the script starts a private redis-server on loopback (nothing saved to disk) and points
# every replica at it, so a class started on one replica is followed from all of them, as it would be across
# machines. Without either, replicas on one machine share the embedded SQLite file in the temporary folder. SIGINT (Ctrl-C), SIGTERM or SIGHUP stops nginx and every replica and removes
# the temporary directory. A replica that dies is reported and nginx sends new sessions to the others;
# the script stops everything when nginx or the last replica is gone. It needs no root: nginx's pid file,
# logs and temporary files stay in that temporary directory.
#
# Environment:
#   ATTNLAB_FRONT_ADDRESS           IPv4 address nginx listens on (default 0.0.0.0: every interface)
#   STREAMLIT_SERVER_COOKIE_SECRET  the cookie secret every replica shares (default: a random one per run)
#   ATTNLAB_REPLICAS_REDIS          1: start a private redis-server and share it as the replicas' class store
#   ATTNLAB_CLASS_STORE             otherwise passed on to every replica (sqlite:///PATH or redis://HOST:PORT/DB)
#   NGINX, PYTHON, REDIS_SERVER     the programs to run (default: from PATH; nginx also from /usr/sbin)
set -euo pipefail

readonly MAX_REPLICAS=32
readonly START_TIMEOUT_S=180
readonly STOP_TIMEOUT_S=20
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly ROOT

TMP=""
declare -a NAMES=() PIDS=() LOGS=()  # every child: replicas 0..N-1, nginx at index N, redis-server at N+1
REDIS_PORT="" CHILDREN=0  # the class store's port when the script starts one; how many children it started
declare -a REPLICA_PORTS=()
declare -A INDEX_OF=()               # pid -> index in the arrays above

usage_error() {
  # A wrong argument is the caller's mistake: say which one and how to call, exit 2 like other CLIs.
  echo "replicas.sh: $1" >&2
  echo "usage: bash deploy/replicas.sh N PORT   (N replicas: 1..$MAX_REPLICAS; PORT for nginx: 1..65535)" >&2
  exit 2
}

fail() {
  # Anything else that stops the script: the EXIT trap then stops whatever was started.
  echo "replicas.sh: $1" >&2
  exit 1
}

whole_in_range() {
  # True when $1 is a plain decimal number from $2 to $3 (a few digits, so bash arithmetic cannot overflow).
  [[ $1 =~ ^[0-9]{1,6}$ ]] && ((10#$1 >= $2 && 10#$1 <= $3))
}

check_args() {
  # Refuse bad N and PORT before anything starts, with the value that was wrong.
  (($# == 2)) || usage_error "expected 2 arguments (N PORT), got $#"
  whole_in_range "$1" 1 "$MAX_REPLICAS" || usage_error "N must be a whole number from 1 to $MAX_REPLICAS, not '$1'"
  whole_in_range "$2" 1 65535 || usage_error "PORT must be a whole number from 1 to 65535, not '$2'"
  ((BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] >= 501)) || fail "needs bash 5.1 or newer (wait -n -p)"
}

find_programs() {
  # Debian puts nginx in /usr/sbin, which is not on a normal user's PATH; streamlit must import.
  NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}
  [[ -x $NGINX ]] || fail "nginx not found (apt-get install nginx, or set NGINX=/path/to/nginx)"
  PYTHON=${PYTHON:-$(command -v python || command -v python3 || echo python)}
  "$PYTHON" -c "import streamlit" 2>/dev/null ||
    fail "$PYTHON cannot import streamlit (pip install -r requirements.txt, or set PYTHON)"
  if [[ ${ATTNLAB_REPLICAS_REDIS:-} == 1 ]]; then
    REDIS_SERVER=${REDIS_SERVER:-$(command -v redis-server || echo /usr/bin/redis-server)}
    [[ -x $REDIS_SERVER ]] || fail "redis-server not found (apt-get install redis-server, or set REDIS_SERVER)"
  fi
}

check_front_port() {
  # Fail fast, before the replicas spend seconds starting, when nginx could not listen on PORT.
  "$PYTHON" - "$FRONT_ADDRESS" "$PORT" <<'PY' || exit 1
import socket
import sys

address, port = sys.argv[1], int(sys.argv[2])
with socket.socket() as s:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as nginx does: a port in TIME_WAIT is free
    try:
        s.bind((address, port))
    except OSError as e:
        sys.exit(f"replicas.sh: nginx cannot listen on {address}:{port}: {e.strerror or e}")
PY
}

pick_ports() {
  # $1 distinct free loopback ports: held open together so the kernel cannot hand out one twice.
  "$PYTHON" - "$1" "$PORT" <<'PY'
import socket
import sys

n, front = int(sys.argv[1]), int(sys.argv[2])
held = []
while sum(s.getsockname()[1] != front for s in held) < n:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    held.append(s)
print(*[port for port in (s.getsockname()[1] for s in held) if port != front][:n])
PY
}

write_nginx_conf() {
  # Our own top-level nginx.conf: every file nginx writes lives in $TMP, and deploy/attnlab.conf does the rest.
  local port
  for port in "${REPLICA_PORTS[@]}"; do
    echo "server 127.0.0.1:$port max_fails=1 fail_timeout=10s;"
  done >"$TMP/attnlab-upstream.conf"
  echo "listen $FRONT_ADDRESS:$PORT;" >"$TMP/attnlab-listen.conf"
  cat >"$TMP/nginx.conf" <<EOF
daemon off;
worker_processes auto;
pid "$TMP/nginx.pid";
lock_file "$TMP/nginx.lock";
error_log "$TMP/error.log" notice;
events {
    worker_connections 1024;
}
http {
    log_format attnlab '\$remote_addr [\$time_local] "\$request" \$status \$body_bytes_sent '
                       'upstream=\$upstream_addr affinity=\$attnlab_affinity time=\$request_time';
    access_log "$TMP/access.log" attnlab;
    client_body_temp_path "$TMP/client_body";
    proxy_temp_path "$TMP/proxy";
    fastcgi_temp_path "$TMP/fastcgi";
    uwsgi_temp_path "$TMP/uwsgi";
    scgi_temp_path "$TMP/scgi";
    include "$ROOT/deploy/attnlab.conf";
}
EOF
  # Run as root, nginx's workers drop to an unprivileged user that must reach its temp directories.
  chmod 711 "$TMP"
  "$NGINX" -t -q -p "$TMP/" -c "$TMP/nginx.conf" -e "$TMP/error.log" >>"$TMP/nginx.log" 2>&1 ||
    fail "nginx rejected the configuration: $(tail -n 3 "$TMP/nginx.log" "$TMP/error.log" 2>/dev/null)"
}

track() {
  # Remember a child just started with `&`, so it can be reported and stopped.
  local index=$1 name=$2 log=$3 pid=$!
  NAMES[index]=$name PIDS[index]=$pid LOGS[index]=$log INDEX_OF[$pid]=$index
}

start_redis() {
  # The replicas' shared class store: loopback only, no file written, stopped with everything else.
  [[ -n $REDIS_PORT ]] || return 0
  "$REDIS_SERVER" --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$TMP" \
    </dev/null >"$TMP/redis.log" 2>&1 &
  track "$((N + 1))" "redis-server (port $REDIS_PORT)" "$TMP/redis.log"
  export ATTNLAB_CLASS_STORE="redis://127.0.0.1:$REDIS_PORT/0"
}

start_children() {
  # The replicas share one cookie secret, so a browser that moves to another replica keeps valid cookies.
  local i
  export STREAMLIT_SERVER_COOKIE_SECRET=${STREAMLIT_SERVER_COOKIE_SECRET:-$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')}
  start_redis
  cd "$ROOT"
  for i in "${!REPLICA_PORTS[@]}"; do
    "$PYTHON" -m streamlit run app.py --server.headless true --server.address 127.0.0.1 \
      --server.port "${REPLICA_PORTS[i]}" --browser.gatherUsageStats false \
      </dev/null >"$TMP/replica-$i.log" 2>&1 &
    track "$i" "replica $i (port ${REPLICA_PORTS[i]})" "$TMP/replica-$i.log"
  done
  "$NGINX" -p "$TMP/" -c "$TMP/nginx.conf" -e "$TMP/error.log" </dev/null >>"$TMP/nginx.log" 2>&1 &
  track "$N" "nginx" "$TMP/error.log"
}

redis_answers() {
  # One PING over bash's /dev/tcp (no client needed): true when it answers +PONG.
  (
    exec 3<>"/dev/tcp/127.0.0.1/$1"
    printf 'PING\r\n' >&3
    IFS= read -r -t 2 reply <&3
    [[ $reply == +PONG* ]]
  ) 2>/dev/null
}

healthy() {
  # One GET /_stcore/health over bash's /dev/tcp (no curl needed): true when it answers 200.
  local host=$1 port=$2
  (
    exec 3<>"/dev/tcp/$host/$port"
    printf 'GET /_stcore/health HTTP/1.0\r\nHost: %s:%s\r\n\r\n' "$host" "$port" >&3
    IFS= read -r -t 2 status <&3
    [[ $status == HTTP/1.[01]" 200"* ]]
  ) 2>/dev/null
}

describe_exit() {
  # An exit status in words: a signal number is more useful to an operator than 137.
  local status=$1
  if ((status > 128)); then
    echo "killed by SIG$(kill -l $((status - 128)))"
  else
    echo "exited with status $status"
  fi
}

report_exit() {
  # Say which child ended and how, with the end of its log, then forget it.
  local pid=$1 status=$2 index=${INDEX_OF[$1]}
  echo "replicas.sh: ${NAMES[index]}, pid $pid, $(describe_exit "$status"); end of ${LOGS[index]}:" >&2
  tail -n 5 "${LOGS[index]}" 2>/dev/null | sed 's/^/    /' >&2
  unset "PIDS[index]" "INDEX_OF[$pid]"
}

reap_exited() {
  # Collect the children that ended without blocking: `wait -n` returns at once only for those.
  local k
  for k in "${!PIDS[@]}"; do
    kill -0 "${PIDS[k]}" 2>/dev/null && continue
    local status=0
    wait "${PIDS[k]}" || status=$?
    report_exit "${PIDS[k]}" "$status"
  done
}

wait_until_healthy() {
  # Every replica, then nginx in front of them, must answer /_stcore/health before the URL is announced.
  local deadline=$((SECONDS + START_TIMEOUT_S)) target
  until [[ -z $REDIS_PORT ]] || redis_answers "$REDIS_PORT"; do
    reap_exited
    ((${#PIDS[@]} == CHILDREN)) || fail "a process ended during startup; stopping the others"
    ((SECONDS < deadline)) || fail "redis-server did not answer after $START_TIMEOUT_S s; logs: $TMP"
    sleep 0.1
  done
  for target in "${REPLICA_PORTS[@]/#/127.0.0.1:}" "$1:$PORT"; do
    until healthy "${target%:*}" "${target##*:}"; do
      reap_exited
      ((${#PIDS[@]} == CHILDREN)) || fail "a process ended during startup; stopping the others"
      ((SECONDS < deadline)) || fail "$target was not healthy after $START_TIMEOUT_S s; logs: $TMP"
      sleep 0.2
    done
  done
}

announce() {
  # The lines an operator (or a test) reads: each replica's index, port and pid, then where to go.
  local i front_host=$1
  for i in "${!REPLICA_PORTS[@]}"; do
    echo "replica $i: port ${REPLICA_PORTS[i]}, pid ${PIDS[i]}"
  done
  echo "nginx: pid ${PIDS[N]}, listening on $FRONT_ADDRESS:$PORT, logs in $TMP"
  [[ -z $REDIS_PORT ]] || echo "redis: pid ${PIDS[N + 1]}, $ATTNLAB_CLASS_STORE (the replicas' class store)"
  echo "attnlab: http://$front_host:$PORT/ ($N replicas; Ctrl-C or SIGTERM stops them all)"
}

watch_children() {
  # Block until a child ends; go on while nginx and at least one replica still serve.
  local pid status
  while true; do
    pid="" status=0
    wait -n -p pid || status=$?
    [[ -n $pid ]] || fail "no child left to wait for"
    report_exit "$pid" "$status"
    [[ -n ${PIDS[N]-} ]] || fail "nginx is gone; stopping the replicas"
    [[ -z $REDIS_PORT || -n ${PIDS[N + 1]-} ]] || fail "redis-server is gone; stopping the replicas"
    ((${#PIDS[@]} > CHILDREN - N)) || fail "no replica is left; stopping nginx"
    echo "replicas.sh: $((${#PIDS[@]} - CHILDREN + N)) of $N replicas still serving; new sessions go to those" >&2
  done
}

stop_children() {
  # SIGTERM to nginx and every replica at once, SIGKILL (with nginx's workers) to any still there after the grace.
  local deadline=$((SECONDS + STOP_TIMEOUT_S)) pid workers
  ((${#PIDS[@]})) || return 0
  kill -TERM "${PIDS[@]}" 2>/dev/null
  while ((SECONDS < deadline)) && kill -0 "${PIDS[@]}" 2>/dev/null; do
    reap_quietly
    sleep 0.1
  done
  for pid in "${PIDS[@]}"; do
    kill -0 "$pid" 2>/dev/null || continue
    echo "replicas.sh: pid $pid ignored SIGTERM for $STOP_TIMEOUT_S s; killing it" >&2
    mapfile -t workers < <(pgrep -P "$pid")
    kill -KILL "${workers[@]}" "$pid" 2>/dev/null
  done
  wait 2>/dev/null
}

reap_quietly() {
  # While stopping, children that end are expected: drop them without a report.
  local k
  for k in "${!PIDS[@]}"; do
    kill -0 "${PIDS[k]}" 2>/dev/null || unset "PIDS[k]"
  done
}

cleanup() {
  # Runs on every exit (a signal, a failure, the end): nothing started here may outlive the script.
  local status=$?
  set +e
  trap - EXIT INT TERM HUP
  if ((${#PIDS[@]})); then
    echo "replicas.sh: stopping nginx and the replicas" >&2
    stop_children
  fi
  [[ -n $TMP ]] && rm -rf "$TMP"
  exit "$status"
}

main() {
  # Validate, start the replicas and nginx, wait until all are healthy, announce, then watch until stopped.
  check_args "$@"
  N=$((10#$1)) PORT=$((10#$2))
  FRONT_ADDRESS=${ATTNLAB_FRONT_ADDRESS:-0.0.0.0}
  local front_host=$FRONT_ADDRESS
  [[ $front_host == 0.0.0.0 ]] && front_host=127.0.0.1
  find_programs
  check_front_port
  trap cleanup EXIT
  trap 'exit 0' INT TERM HUP
  TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnlab-replicas.XXXXXX")
  local ports
  read -r -a ports <<<"$(pick_ports $((N + 1)))"
  ((${#ports[@]} == N + 1)) || fail "could not find $((N + 1)) free loopback ports"
  REPLICA_PORTS=("${ports[@]:0:N}")
  CHILDREN=$((N + 1))  # the replicas and nginx
  if [[ ${ATTNLAB_REPLICAS_REDIS:-} == 1 ]]; then
    REDIS_PORT=${ports[N]} CHILDREN=$((N + 2))
  fi
  write_nginx_conf
  start_children
  wait_until_healthy "$front_host"
  announce "$front_host"
  watch_children
}

main "$@"
