"""The upstream-style torch patches for pytorch/pytorch#202927, and their tools.

    torch-export-names patch list
    torch-export-names patch status [--target SITE_PACKAGES] [--json]
    torch-export-names patch verify [--target SITE_PACKAGES] [--no-baseline] [--json]
    torch-export-names patch apply [--target SITE_PACKAGES] [--dry-run]
    torch-export-names patch revert [--target SITE_PACKAGES] [--dry-run]

``status`` says per file whether the installed torch is stock, patched or
modified otherwise. ``verify`` runs the reproductions on the torch with the
patch and on the torch without it: the installed torch is one of the two, a
throw-away overlay of it the other (the installed torch is never modified);
``apply``/``revert`` patch an installed torch in place, for pinned images that
want the fix without the hook.

Modules: ``store`` (where the patches and release hashes are), ``diff`` (parse
and strictly apply a unified diff), ``overlay`` (the throw-away torch),
``install`` (apply/revert in place), ``status`` (stock, patched or modified
otherwise, per file), ``verify`` (the harness), ``_child`` (what
the harness runs in the subprocess). Importing this package imports no torch.
"""
