#!/usr/bin/env python3
"""The SQL of a plug-in's 64 B secure put, replayed from Python against a plaintext row.

A plug-in's `SecureStorage.set` is one audited change. Traced with SQLite's statement trace (release build, 2026-11-25),
it runs these statements on the board: the file's state, the master key's check value, the data keys, the data key's
encryption count, the sealed row (its trigger notes the touched rows in `temp.state_touched`), the touched rows
read back, two digests, two buckets, the audit log's head and the audit row, then `COMMIT`. This script runs the
same statements, with values of the same sizes, on a board made with the CLI, opened the way a board is (WAL,
`secure_delete`, temporary storage in memory, the same temporary triggers), through the same libsqlite3, and
alternates with the plaintext row of the Swift benchmark (`INSERT OR REPLACE` of 64 bytes in a WAL file). Python
does no cryptography and no row encoding here: the figures are SQLite's part of the put, a floor for any code on
top of it. `--no-count` leaves out the data key's count (its update, digest and bucket).

`--audit-rows N` first appends N audit rows of the usual sizes (a long log; their hashes are random, not a chain: the
replay never verifies). `--hash-index` adds the index of hashes that boards had before migration 0009 (0001's
`UNIQUE` on `hash`), to measure what it cost.

Usage: Tools/Benchmarks/secure-put-sql/run.py [--puts 1500] [--bin .build/release] [--no-count] [--audit-rows N]
                                              [--hash-index]
"""
import argparse, os, sqlite3, statistics, subprocess, sys, tempfile, time

p = argparse.ArgumentParser()
p.add_argument("--puts", type=int, default=1500)
p.add_argument("--bin", default=".build/release")
p.add_argument("--no-count", action="store_true")
p.add_argument("--audit-rows", type=int, default=0)
p.add_argument("--hash-index", action="store_true")
args = p.parse_args()
cli = os.path.abspath(os.path.join(args.bin, "plugboard"))
work = tempfile.mkdtemp(prefix="plugboard-secure-put-sql-")
board = os.path.join(work, "board.sqlite")
env = {k: v for k, v in os.environ.items() if not k.startswith("PLUGBOARD_")}
PLUGIN = "com.example.bench"


def run(*command, stdin=None):
    result = subprocess.run([cli, *command, "--db", board], input=stdin, capture_output=True, env=env)
    if result.returncode != 0:
        sys.exit(f"plugboard {' '.join(command)} failed: {result.stderr.decode()}")


run("init")
with open(os.path.join(work, "m.json"), "w") as f:
    f.write('{"id":"%s","name":"Bench","version":"1.0.0"}' % PLUGIN)
run("plugin", "register", os.path.join(work, "m.json"))
run("secret", "set", "--plugin", PLUGIN, "k", "--from-file", "-", stdin=os.urandom(64))


def connect(path):
    db = sqlite3.connect(path, isolation_level=None)
    for pragma in ("foreign_keys = ON", "secure_delete = ON", "temp_store = MEMORY", f"journal_size_limit = {4 << 20}",
                   "busy_timeout = 5000", "journal_mode = WAL"):
        db.execute("PRAGMA " + pragma)
    return db


db = connect(board)
if args.hash_index:
    db.execute("CREATE UNIQUE INDEX audit_log_hash ON audit_log (hash)")
if args.audit_rows:
    seq = db.execute("SELECT max(seq) FROM audit_log").fetchone()[0]
    db.execute("BEGIN IMMEDIATE TRANSACTION")
    for n in range(seq + 1, seq + 1 + args.audit_rows):
        db.execute("INSERT INTO audit_log (seq, at, actor, action, outcome, target_type, target_id, after_json, state_changes, "
                   "state_root, prev_hash, hash) VALUES (?, ?, 'root', 'secret.write', 'ok', 'plugin', ?, ?, ?, ?, ?, ?)",
                   (n, "2026-11-25T02:34:51.273Z", f"com.example.p{n % 10000}", '{"data_key_versions":[1],"keys":["k"]}',
                    f'secret_values\t["com.example.p{n % 10000}","k"]\t{os.urandom(32).hex()}', os.urandom(32).hex(),
                    os.urandom(32).hex(), os.urandom(32).hex()))
    db.execute("COMMIT TRANSACTION")
# The board's temporary table of touched rows and the triggers of the two tables a put writes (StateTables.swift).
db.execute("CREATE TEMP TABLE state_touched (tbl TEXT NOT NULL, key TEXT NOT NULL, part0, part1)")
for table, (a, b) in {"secret_data_keys": ("plugin_id", "version"), "secret_values": ("plugin_id", "key")}.items():
    def note(row):
        return (f"INSERT INTO state_touched (tbl, key, part0, part1) VALUES "
                f"('{table}', json_array({row}.{a}, {row}.{b}), {row}.{a}, {row}.{b});")
    db.execute(f"CREATE TEMP TRIGGER state_{table}_insert AFTER INSERT ON main.{table} BEGIN {note('NEW')} END")
    db.execute(f"CREATE TEMP TRIGGER state_{table}_update AFTER UPDATE ON main.{table} BEGIN {note('OLD')} {note('NEW')} END")
    db.execute(f"CREATE TEMP TRIGGER state_{table}_delete AFTER DELETE ON main.{table} BEGIN {note('OLD')} END")
plain = connect(os.path.join(work, "plain.sqlite"))
plain.execute("CREATE TABLE kv (key TEXT PRIMARY KEY, value BLOB NOT NULL)")

hexes = lambda: os.urandom(32).hex()
count = db.execute("SELECT encryption_count FROM secret_data_keys").fetchone()[0]
data_key = f'["{PLUGIN}",1]'
value_key = f'["{PLUGIN}","k"]'
put, put_commit, row, row_commit = [], [], [], []
for _ in range(args.puts):
    started = time.perf_counter()
    db.execute("BEGIN IMMEDIATE TRANSACTION")
    db.execute("PRAGMA data_version").fetchall()
    db.execute("PRAGMA main.schema_version").fetchall()
    db.execute("DELETE FROM temp.state_touched")
    db.execute("SELECT key_check_value FROM secret_master_key WHERE id = 1").fetchall()
    db.execute("SELECT plugin_id, version, state, wrapped_key, encryption_count, created_at, retired_at FROM secret_data_keys "
               "WHERE plugin_id = ? ORDER BY version", (PLUGIN,)).fetchall()
    if not args.no_count:
        count += 1
        db.execute("UPDATE secret_data_keys SET encryption_count = ? WHERE plugin_id = ? AND version = ?", (count, PLUGIN, 1))
    db.execute("INSERT INTO secret_values (plugin_id, key, data_key_version, sealed, updated_at) VALUES (?, ?, ?, ?, ?) "
               "ON CONFLICT (plugin_id, key) DO UPDATE SET data_key_version = excluded.data_key_version, "
               "sealed = excluded.sealed, updated_at = excluded.updated_at",
               (PLUGIN, "k", 1, b"\x01" + os.urandom(12 + 64 + 16), "2026-11-25T02:34:51.273Z"))
    db.execute("SELECT DISTINCT tbl, part0, part1 FROM temp.state_touched WHERE tbl IN ('secret_values', 'secret_data_keys')").fetchall()
    db.execute("PRAGMA main.schema_version").fetchall()
    db.execute("SELECT DISTINCT tbl, key FROM temp.state_touched").fetchall()
    touched = [("secret_values", value_key, 50)] + ([] if args.no_count else [("secret_data_keys", data_key, 69)])
    if not args.no_count:
        db.execute("SELECT plugin_id, version, state, wrapped_key, encryption_count, created_at, retired_at FROM main.secret_data_keys "
                   "WHERE plugin_id = json_extract(?1, '$[0]') AND version = json_extract(?1, '$[1]')", (data_key,)).fetchall()
    db.execute("SELECT plugin_id, key, data_key_version, sealed, updated_at FROM main.secret_values "
               "WHERE plugin_id = json_extract(?1, '$[0]') AND key = json_extract(?1, '$[1]')", (value_key,)).fetchall()
    db.execute("DELETE FROM temp.state_touched")
    for table, key, bucket in touched:
        db.execute("INSERT INTO state_digests (tbl, key, bucket, digest) VALUES (?, ?, ?, ?) "
                   "ON CONFLICT (tbl, key) DO UPDATE SET digest = excluded.digest", (table, key, bucket, hexes()))
    for _, _, bucket in touched:
        db.execute("SELECT tbl, key, digest FROM state_digests WHERE bucket = ? ORDER BY tbl, key", (bucket,)).fetchall()
        db.execute("INSERT OR REPLACE INTO state_buckets (bucket, hash) VALUES (?, ?)", (bucket, hexes()))
    seq, head = db.execute("SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1").fetchone()
    changes = "\n".join(f"{table}\t{key}\t{hexes()}" for table, key, _ in sorted(touched))
    db.execute("INSERT INTO audit_log (seq, at, actor, on_behalf_of, action, outcome, target_type, target_id, environment, reason, "
               "before_json, after_json, state_changes, state_root, prev_hash, hash) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
               (seq + 1, "2026-11-25T02:34:51.273Z", "root", None, "secret.write", "ok", "plugin", PLUGIN, None, None, None,
                '{"data_key_versions":[1],"keys":["k"]}', changes, hexes(), head, hexes()))
    before_commit = time.perf_counter()
    db.execute("COMMIT TRANSACTION")
    done = time.perf_counter()
    put.append(done - started)
    put_commit.append(done - before_commit)

    started = time.perf_counter()
    plain.execute("BEGIN DEFERRED TRANSACTION")
    plain.execute("INSERT OR REPLACE INTO kv (key, value) VALUES ('k', ?)", (os.urandom(64),))
    before_commit = time.perf_counter()
    plain.execute("COMMIT TRANSACTION")
    done = time.perf_counter()
    row.append(done - started)
    row_commit.append(done - before_commit)

us = lambda values: statistics.median(values) * 1e6
print(f"the put's SQL ({'without the count' if args.no_count else 'as traced'}): p50 {us(put):.0f} µs "
      f"(before COMMIT {us([a - b for a, b in zip(put, put_commit)]):.0f} µs, COMMIT {us(put_commit):.0f} µs)")
print(f"plaintext row: p50 {us(row):.0f} µs (COMMIT {us(row_commit):.0f} µs)")
options = [" without the count" if args.no_count else "", f" after {args.audit_rows} audit rows" if args.audit_rows else "",
           " with the index of hashes" if args.hash_index else ""]
print(f"secure-put-sql: {args.puts} puts, ratio {us(put) / us(row):.2f}x the plaintext row{''.join(options)}")
