"""Builds strata._strata with the project's CMake for `pip install`; pyproject.toml holds the
metadata. The extension is compiled for the interpreter running pip (Python_EXECUTABLE)."""

import os
import pathlib
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = pathlib.Path(self.build_temp) / "cmake"
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                        f"-DPython_EXECUTABLE={sys.executable}"], check=True)
        subprocess.run(["cmake", "--build", str(build), "--target", "strata_python", "-j",
                        str(os.cpu_count() or 1)], check=True)
        built = next((build / "python" / "strata").glob("_strata*.so"))
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        self.copy_file(str(built), str(target))


setup(ext_modules=[Extension("strata._strata", sources=[])], cmdclass={"build_ext": CMakeBuild})
