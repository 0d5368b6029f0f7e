"""`python3 -m plugboard_drills DRILL [OPTIONS]` (from Tools/Drills), or `Tools/Drills/drill DRILL [OPTIONS]`."""

import importlib
import sys

from plugboard_drills import DRILLS


def main(arguments):
    if not arguments or arguments[0] not in DRILLS:
        print(f"usage: Tools/Drills/drill {{{','.join(DRILLS)}}} [OPTIONS] (--help after the drill's name for its own)",
              file=sys.stderr)
        return 2
    drill = importlib.import_module(f"plugboard_drills.{DRILLS[arguments[0]]}")
    sys.argv = [f"Tools/Drills/drill {arguments[0]}", *arguments[1:]]
    return drill.main()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
