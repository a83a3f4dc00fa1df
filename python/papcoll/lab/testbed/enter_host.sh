#!/bin/sh
# The "remote shell" MPI's launchers use to start their daemons on a testbed host
# (papcoll.lab.testbed): called as ssh would be, after the testbed's name, it runs the
# command inside the host's network namespace. Each testbed's wrapper (links.py writes it
# as <state directory>/<name>/enter-host) runs this file with the testbed's name first:
#     enter_host.sh NAME [launcher options: -x, -o X, ...] HOST COMMAND...
# Hosts are named by their namespace, papcoll-NAME-HOST; any other is refused.
name="$1"; shift
# ssh-like: skip the launcher's options (-x, -o X, ...), then HOST COMMAND...
while [ "${1#-}" != "$1" ]; do
  case "$1" in -o|-p|-l|-i) shift ;; esac
  shift
done
host="$1"; shift
case "$host" in "papcoll-$name-"*) ;;
  *) echo "enter-host: $host is not a host of this testbed" >&2; exit 255 ;; esac
# its own hostname too (a UTS namespace): Open MPI tells hosts apart by name
exec ip netns exec "$host" unshare --uts /bin/sh -c "hostname $host; $*"
