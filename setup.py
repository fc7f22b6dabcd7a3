import os
import re

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

PTH = "torch_export_names.pth"


def _pth_line() -> str:
    """torch_export_names._bootstrap.pth_line(), the one source of the .pth (imports no torch)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_export_names", "_bootstrap.py")
    spec = importlib.util.spec_from_file_location("_torch_export_names_bootstrap", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.pth_line()


def _write_pth(directory: str) -> None:
    with open(os.path.join(directory, PTH), "w", encoding="utf-8") as f:
        f.write(_pth_line())


# The one version source: torch_export_names.__version__ (read, not imported: no torch at build time).
with open(os.path.join("torch_export_names", "__init__.py"), encoding="utf-8") as f:
    VERSION = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M).group(1)


class build_py_with_pth(build_py):
    """Put torch_export_names.pth at the root of site-packages (TORCH_EXPORT_NAMES=1)."""

    def run(self):
        super().run()
        self.mkpath(self.build_lib)
        _write_pth(self.build_lib)


class editable_wheel_with_pth(editable_wheel):
    """``pip install -e .``: the editable wheel gets the .pth file too (as pytest-cov does).

    Everything written to the unpacked wheel's root ends up in site-packages;
    setuptools writes its namespace .pth files there through this method.
    """

    def _install_namespaces(self, installation_dir, pth_prefix):
        super()._install_namespaces(installation_dir, pth_prefix)
        _write_pth(installation_dir)


setup(
    name="torch-export-names",
    version=VERSION,
    description=(
        "Record every node name torch.export assigns, so later passes never hit "
        "'Node redefined name' (pytorch/pytorch#202927)"
    ),
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    license="BSD-3-Clause",
    python_requires=">=3.10",
    packages=find_packages(include=["torch_export_names", "torch_export_names.*"]),
    # The release patches and their hashes (patches/make_patches.py writes them there).
    package_data={
        "torch_export_names": ["py.typed"],
        "torch_export_names.tools.torch_patch": ["data/torch-*.patch", "data/torch-*.sha256"],
    },
    # Every torch from 2.4 (the first with placeholder_naming_pass, which assigns the names)
    # works; a lower bound only, so installing beside a pinned torch never replaces it.
    install_requires=["torch>=2.4"],
    extras_require={
        "executorch": ["executorch>=1.5,<1.6"],
        # numpy: the benchmarks the tests smoke-run (torch 2.4 does not pull it in); pytest-xdist:
        # scripts/test.sh and .ci/run run the suite in two worker processes
        "test": ["pytest>=8.2", "pytest-xdist>=3.5", "expecttest>=0.2", "hypothesis>=6", "numpy"],
        # transformers 5.23.0: the newest whose dependencies install here (5.24+ need kernels>=0.19)
        "bench": ["matplotlib>=3.8", "transformers==5.23.0"],
    },
    cmdclass={"build_py": build_py_with_pth, "editable_wheel": editable_wheel_with_pth},
    entry_points={"console_scripts": ["torch-export-names=torch_export_names.tools.cli:main"]},
)
