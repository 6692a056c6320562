#!/bin/sh
# The compose example's client: waits for the emulator's health, deploys ./app with `up` (a PostgreSQL addon from its
# scalingo.json) and reads the app's page through the router, all over the compose network (the emulator's service name).
set -eu
api=$EMULATOR_API_URL
i=0
until busybox wget -q -O /dev/null "$api/_emulator/health"; do
  i=$((i + 1))
  [ "$i" -lt 120 ] || { echo "client: the emulator did not become healthy at $api" >&2; exit 1; }
  sleep 1
done
# `up` writes into its folder's state: a copy of the read-only sources.
cp -R /src /tmp/web && cd /tmp/web
scalingo-emulator up . --app compose-web --detach --port "$EMULATOR_PORT" --router-port "$EMULATOR_ROUTER_PORT" --ssh-port "$EMULATOR_SSH_PORT"
# The router serves every app on one port and picks the app by the request's host name.
busybox wget -q -O - --header "Host: compose-web.localhost" "http://$EMULATOR_HOST:$EMULATOR_ROUTER_PORT/"
