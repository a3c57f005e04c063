"""The machine's processes and cores as the library sees them: the command that starts one of
this package's modules in a child Python process, importing only the standard library, the
installed packages and this package's own files; the cores this process may use, and how many
of them other programs are running on now.

    subprocess.Popen([*module_command("gguf_extract.cli.batch.child"), ...])

`python -m MODULE` puts the working directory first on the module path, so a folder of
untrusted documents holding `gguf_extract.py` or `json.py` would run that file in every child
(a converter, a batch's worker process). The child starts in isolated mode (`-I`: neither the
working directory nor the script's folder on the path, every PYTHON* variable such as
PYTHONPATH, PYTHONSTARTUP and PYTHONHOME ignored, no user site-packages), and a few lines
given with `-c` bind the name `gguf_extract` to the very folder this process imported it from,
so the child runs the same files as its parent however the package was installed (a wheel, an
editable install, a folder on PYTHONPATH) without adding any folder to its path. A
sitecustomize or .pth file can come only from the interpreter's own site-packages.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

_PACKAGE = __name__.split(".", 1)[0]  # "gguf_extract"
_PACKAGE_FOLDER = str(Path(__file__).resolve().parent.parent)

# Run in the child with argv [-c, PACKAGE, FOLDER, MODULE, arguments...]: import the package from
# FOLDER, then run MODULE as __main__ with argv [MODULE's file, arguments...].
_BOOTSTRAP = (
    "import importlib.util, os, runpy, sys\n"
    "name, folder, module = sys.argv[1:4]\n"
    "init = os.path.join(folder, '__init__.py')\n"
    "spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[folder])\n"
    "package = importlib.util.module_from_spec(spec)\n"
    "sys.modules[name] = package\n"
    "spec.loader.exec_module(package)\n"
    "del sys.argv[1:4]\n"
    "runpy.run_module(module, run_name='__main__', alter_sys=True)\n"
)


def module_command(module: str) -> list[str]:
    """The argv that runs `module` (a dotted name inside this package) as `__main__` in an
    isolated child interpreter; append the module's own arguments."""
    if module != _PACKAGE and not module.startswith(_PACKAGE + "."):
        raise ValueError(f"module_command: {module!r} is not a module of {_PACKAGE}")
    return [sys.executable, "-I", "-c", _BOOTSTRAP, _PACKAGE, _PACKAGE_FOLDER, module]


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it), at least one."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _running_tasks() -> int:
    """Tasks running now, this process among them: the fourth field of /proc/loadavg is
    "running/total". Raises OSError or ValueError where there is no such file."""
    return int(Path("/proc/loadavg").read_text().split()[3].split("/")[0])


def cores_taken(running_tasks: Callable[[], int] = _running_tasks, readings: int = 4) -> int:
    """How many of this process's cores other programs run on now: the fewest other running
    tasks over a few readings 10 ms apart (a task that only passes by is not counted), at most
    the cores less one; 0 where the system does not tell."""
    found = []
    for reading in range(readings):
        if reading:
            time.sleep(0.01)
        try:
            found.append(running_tasks())
        except (OSError, ValueError, IndexError):
            return 0
    return max(0, min(min(found) - 1, usable_cores() - 1))


def wait_policy(environment: Mapping[str, str], taken: Callable[[], int] = cores_taken) -> dict[str, str]:
    """The OpenMP settings for how llama.cpp's threads wait: none where the environment
    already says (the load is not read then: it takes 30 ms); sleep at once where `taken()`
    cores run other programs (core.model sets them before llama.cpp loads, and says why)."""
    if {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME"} & environment.keys():
        return {}
    if taken():
        return {"OMP_WAIT_POLICY": "PASSIVE"}
    return {"GOMP_SPINCOUNT": "1000", "KMP_BLOCKTIME": "0"}
