"""Plugboard's drills: real `plugboard`, `plugboard serve` and `plugboard-test-host` processes doing what must never
go wrong. One module a drill (`stress`, `fleet`, `replication`, and `snapshot_proxy`, the attacking proxy the stress
suite and the tests put between hosts and a served board); what they share is in `common`."""

DRILLS = {"stress": "stress", "fleet": "fleet", "replication": "replication", "snapshot-proxy": "snapshot_proxy"}
