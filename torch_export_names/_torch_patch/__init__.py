"""The upstream-style torch patches for pytorch/pytorch#202927, and their tools.

    torch-export-names patch list
    torch-export-names patch verify [--no-baseline] [--json]
    torch-export-names patch apply [--target SITE_PACKAGES] [--dry-run]
    torch-export-names patch revert [--target SITE_PACKAGES] [--dry-run]

``verify`` runs the reproductions against a throw-away overlay of the
installed torch with the patch applied (the installed torch is never
modified); ``apply``/``revert`` patch an installed torch in place, for pinned
images that want the fix without the hook.

Modules: ``store`` (where the patches and release hashes are), ``diff`` (parse
and strictly apply a unified diff), ``overlay`` (the throw-away torch),
``install`` (apply/revert in place), ``verify`` (the harness), ``_child`` (what
the harness runs in the subprocess). Importing this package imports no torch.
"""
