#!/bin/sh
# The compose example's client: waits for the emulator's health, deploys ./app with `up` (a PostgreSQL addon from its
# scalingo.json) and reads the app's page through the router.
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
busybox wget -q -O - --header "Host: compose-web.localhost" "http://127.0.0.1:$EMULATOR_ROUTER_PORT/"
