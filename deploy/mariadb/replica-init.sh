#!/bin/bash
# Sourced by the mariadb image's entrypoint on the replica's first start (empty data directory).
# GTID replication from the primary's first transaction (gtid_slave_pos is empty here), so it
# replays the primary's init too. The IO thread retries until the primary answers, and the
# replication settings survive restarts (the server starts the replica threads itself).
docker_process_sql <<-EOSQL
	CHANGE MASTER TO
	  MASTER_HOST='${PRIMARY_HOST}',
	  MASTER_PORT=3306,
	  MASTER_USER='${REPLICATION_USER}',
	  MASTER_PASSWORD='${REPLICATION_PASSWORD}',
	  MASTER_CONNECT_RETRY=5,
	  MASTER_USE_GTID=slave_pos;
	START SLAVE;
EOSQL
