#!/bin/bash
# Sourced by the mariadb image's entrypoint on the primary's first start (empty data directory).
# Written with binary logging on, so the replica, which starts from the primary's first GTID,
# replays it: the database and the service's user exist on both, the replication user too.
docker_process_sql <<-EOSQL
	CREATE DATABASE IF NOT EXISTS \`${LOYALTY_DATABASE}\` CHARACTER SET utf8mb4;
	CREATE USER IF NOT EXISTS '${LOYALTY_USER}'@'%' IDENTIFIED BY '${LOYALTY_PASSWORD}';
	GRANT ALL PRIVILEGES ON \`${LOYALTY_DATABASE}\`.* TO '${LOYALTY_USER}'@'%';
	CREATE USER IF NOT EXISTS '${REPLICATION_USER}'@'%' IDENTIFIED BY '${REPLICATION_PASSWORD}';
	GRANT REPLICATION SLAVE ON *.* TO '${REPLICATION_USER}'@'%';
EOSQL
