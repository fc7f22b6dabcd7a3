"""Imported by ``torch_export_names.pth`` at start-up when TORCH_EXPORT_NAMES or
TORCH_EXPORT_NAMES_AUDIT is set (``torch-export-names run`` sets them, then execs python).

TORCH_EXPORT_NAMES installs the hook the moment ``torch.export.exported_program`` (where
``ExportedProgram`` lives) has been imported, so user code needs no change.
TORCH_EXPORT_NAMES_AUDIT (``run --audit``) opens an ``audited()`` block once torch is
imported and reports it when the process ends (``audit.audit_until_exit``), to stderr and,
with TORCH_EXPORT_NAMES_AUDIT_JSON=FILE, as JSON to FILE; both audit variables are taken out
of the environment, so the audit covers this process and not its subprocesses.
Importing this module does not import torch.
"""

from __future__ import annotations

import os

ENV_VAR = "TORCH_EXPORT_NAMES"
AUDIT_VAR = "TORCH_EXPORT_NAMES_AUDIT"
AUDIT_JSON_VAR = "TORCH_EXPORT_NAMES_AUDIT_JSON"
PTH = "torch_export_names.pth"  # the file setup.py writes into site-packages
_TARGET = "torch.export.exported_program"
# torch_export_names.pth imports this module unless the value is one of FALSE; setup.py
# writes the .pth from pth_line(), so the tuple is spelled here only.
TRUE = ("1", "true", "yes", "on")
FALSE = ("", "0", "false", "no", "off")


def pth_line() -> str:
    """The one line of ``torch_export_names.pth`` (setup.py writes it into site-packages).

    Python runs a .pth line that starts with ``import`` at every start-up. It imports this
    module only when TORCH_EXPORT_NAMES asks for the hook or TORCH_EXPORT_NAMES_AUDIT for the
    audit, and, as coverage's and pytest-cov's do, never lets an error escape: a
    half-uninstalled package must not make every Python start print a traceback. It says so
    in one line on stderr instead.
    """
    code = (  # no comprehension: its scope would not see the names this exec defines
        "on = None\n"
        "try:\n"
        f"    for on in ({ENV_VAR!r}, {AUDIT_VAR!r}):\n"
        f"        if os.environ.get(on, '').strip().lower() not in {FALSE!r}:\n"
        "            __import__('torch_export_names._bootstrap')\n"
        "            break\n"
        "except Exception as exc:\n"
        "    sys.stderr.write('torch-export-names: %s is set but the export hook could not be "
        "loaded (%s: %s); reinstall or uninstall torch-export-names\\n' % (on, type(exc).__name__, exc))\n"
    )
    return f"import os, sys; exec({code!r})\n"


def enabled(environ=os.environ, var: str = ENV_VAR) -> bool:
    """Whether TORCH_EXPORT_NAMES (or ``var``) asks for the hook (the audit): 1/true/yes/on,
    any case.

    0/false/no/off (any case) or unset leave it off; any other value warns
    once and leaves it off.
    """
    value = environ.get(var, "").strip().lower()
    if value in TRUE:
        return True
    if value not in FALSE:
        from ._warnings import warn_once

        what = "the export hook" if var == ENV_VAR else "the audit"
        warn_once(
            f"env-var-value-{var}",
            f"{var}={environ.get(var)!r} is not understood; {what} stays "
            f"off. Use one of {', '.join(TRUE)} to turn it on, or {', '.join(FALSE[1:])}.",
            stacklevel=2,
        )
    return False


def _install() -> None:
    from .hook import _install_for

    _install_for(ENV_VAR)


def arm() -> None:
    from ._after_import import after_import  # not at the top: setup.py loads this file alone

    after_import(_TARGET, _install)


def _audit_when_torch_is_imported(json_path: str | None) -> None:
    """``run --audit``: the report is written when the process ends, whether torch was
    imported or not; the block opens once torch is (with the hook first, if asked for)."""
    from . import audit
    from ._after_import import after_import

    process_audit = audit.audit_until_exit(json_path)

    def start() -> None:
        if enabled():
            _install()  # the hook in place before the block opens, whatever imports torch.export
        process_audit.start()

    after_import("torch", start)


if enabled():
    arm()
if enabled(var=AUDIT_VAR):
    _audit_when_torch_is_imported(os.environ.pop(AUDIT_JSON_VAR, None))
os.environ.pop(AUDIT_VAR, None)  # this process only: not the program's subprocesses
