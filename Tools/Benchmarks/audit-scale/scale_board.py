"""The board of the scale benchmarks: 10,000 plug-ins and 1,000,000 audit rows by default, made once with
`audit-scale-board` (Tools/Benchmarks/AuditScale; its header says what the rows are) and kept in a work folder between
runs. Used by audit-scale/run.py and backup/run.py."""
import glob, os, subprocess, sys, time


def environment():
    """The environment of every command the benchmarks run: none of the caller's PLUGBOARD_ settings."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PLUGBOARD_")}


def board(bin_folder, work, plugins, rows):
    """The path of the board of `plugins` plug-ins and `rows` audit rows in `work`, made first when missing."""
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, f"board-{plugins}-{rows}.sqlite")
    if os.path.exists(path):
        return path
    maker = os.path.abspath(os.path.join(bin_folder, "audit-scale-board"))
    started = time.monotonic()
    if subprocess.run([maker, path + ".part", "--plugins", str(plugins), "--rows", str(rows)], env=environment()).returncode != 0:
        sys.exit("audit-scale-board failed")
    # The board and what sits beside it (its master key file); the empty -wal and -shm go.
    for part in glob.glob(path + ".part*"):
        if part.endswith(("-wal", "-shm")):
            os.remove(part)
        else:
            os.rename(part, path + part[len(path + ".part"):])
    print(f"made {path} in {time.monotonic() - started:.0f} s", flush=True)
    return path
