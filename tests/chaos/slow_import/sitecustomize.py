"""A cold machine, for the processes a chaos test starts: the first import of litellm takes REASONING_SLOW_IMPORT_S
seconds more (on an idle, cold core it took 5.6 s; under load, more). Python imports this file at startup when its
directory is on PYTHONPATH; nothing else changes."""

import importlib.abc
import os
import sys
import time

DELAY_S = float(os.environ.get("REASONING_SLOW_IMPORT_S") or 0)


class SlowFirstImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "litellm":
            sys.meta_path.remove(self)  # once per process, as a cold disk is slow once
            time.sleep(DELAY_S)
        return None  # the usual finders then import it


if DELAY_S:
    sys.meta_path.insert(0, SlowFirstImport())
