"""The parts of Tools/Scripts/console-check: its browser, and the change requests step."""
