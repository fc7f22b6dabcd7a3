"""Imported by ``torch_export_names.pth`` at start-up when TORCH_EXPORT_NAMES is set.

Installs the hook the moment ``torch.export.exported_program`` (where
``ExportedProgram`` lives) has been imported, so user code needs no change.
Importing this module does not import torch.
"""

from __future__ import annotations

import os

ENV_VAR = "TORCH_EXPORT_NAMES"
_TARGET = "torch.export.exported_program"
# torch_export_names.pth imports this module unless the value is one of FALSE; setup.py
# writes the .pth from pth_line(), so the tuple is spelled here only.
TRUE = ("1", "true", "yes", "on")
FALSE = ("", "0", "false", "no", "off")


def pth_line() -> str:
    """The one line of ``torch_export_names.pth`` (setup.py writes it into site-packages).

    Python runs a .pth line that starts with ``import`` at every start-up. It imports this
    module only when TORCH_EXPORT_NAMES asks for the hook, and, as coverage's and pytest-cov's
    do, never lets an error escape: a half-uninstalled package must not make every Python
    start print a traceback. It says so in one line on stderr instead.
    """
    code = (
        "try:\n"
        f"    if os.environ.get({ENV_VAR!r}, '').strip().lower() not in {FALSE!r}:\n"
        "        __import__('torch_export_names._bootstrap')\n"
        "except Exception as exc:\n"
        f"    sys.stderr.write('torch-export-names: {ENV_VAR} is set but the export hook could not be "
        "loaded (%s: %s); reinstall or uninstall torch-export-names\\n' % (type(exc).__name__, exc))\n"
    )
    return f"import os, sys; exec({code!r})\n"


def enabled(environ=os.environ) -> bool:
    """Whether TORCH_EXPORT_NAMES asks for the hook: 1/true/yes/on, any case.

    0/false/no/off (any case) or unset leave it off; any other value warns
    once and leaves it off.
    """
    value = environ.get(ENV_VAR, "").strip().lower()
    if value in TRUE:
        return True
    if value not in FALSE:
        from ._warnings import warn_once

        warn_once(
            "env-var-value",
            f"{ENV_VAR}={environ.get(ENV_VAR)!r} is not understood; the export hook stays "
            f"off. Use one of {', '.join(TRUE)} to turn it on, or {', '.join(FALSE[1:])}.",
            stacklevel=2,
        )
    return False


def _install() -> None:
    from .hook import _install_for

    _install_for(ENV_VAR)


def activate() -> None:
    from ._after_import import after_import  # not at the top: setup.py loads this file alone

    after_import(_TARGET, _install)


if enabled():
    activate()
