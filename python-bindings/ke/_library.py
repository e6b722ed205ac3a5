"""Finding and loading libke.so (ke's C API) and the ke-opt driver.

libke.so is one self-contained shared library (ke, MLIR and LLVM linked in,
only ke_* exported), so ctypes loads it into any CPython. Where it is
looked for, first found wins:
  1. $KE_LIBRARY;
  2. ke/lib/libke.so inside this package (bundled into a wheel);
  3. $KE_BUILD_DIR/lib/libke.so;
  4. lib/libke.so of the build tree that `pip install ./python-bindings`
     recorded (ke/_build_dir.py, absent from bundled and editable installs);
  5. build/lib/libke.so of the ke checkout this file sits in (an editable
     install or PYTHONPATH=python-bindings);
  6. lib/libke.so of the build tree whose venv runs Python
     (scripts/setup-python.sh makes $KE_BUILD_DIR/venv).
"""

import ctypes
import os
import shutil
import sys
from pathlib import Path

from ke._errors import KeError

_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT_BUILD = _PACKAGE.parent.parent / "build"


def _candidates(env, bundled, build_relative):
    if os.environ.get(env):
        return [Path(os.environ[env])]
    found = [_PACKAGE / "lib" / bundled]
    if os.environ.get("KE_BUILD_DIR"):
        found.append(Path(os.environ["KE_BUILD_DIR"]) / build_relative)
    try:
        from ke._build_dir import BUILD_DIR
        found.append(Path(BUILD_DIR) / build_relative)
    except ImportError:
        pass
    found.append(_CHECKOUT_BUILD / build_relative)
    found.append(Path(sys.prefix).parent / build_relative)
    return found


def find_library():
    """The path of libke.so, or a KeError saying where it was looked for."""
    candidates = _candidates("KE_LIBRARY", "libke.so", "lib/libke.so")
    for path in candidates:
        if path.is_file():
            return path
    raise KeError("libke.so not found (looked at %s); build it with "
                  "`bash scripts/build.sh ke` or set KE_LIBRARY" %
                  ", ".join(map(str, candidates)))


def find_ke_opt():
    """The path of the ke-opt driver: $KE_OPT, beside libke.so (bundled, or
    build/tools/ke-opt/ke-opt of its build tree), then ke-opt on PATH."""
    if os.environ.get("KE_OPT"):
        return Path(os.environ["KE_OPT"])
    places = []
    try:
        library = find_library()
        places += [library.parent / "ke-opt",
                   library.parent.parent / "tools" / "ke-opt" / "ke-opt"]
    except KeError:
        pass
    for path in places:
        if path.is_file():
            return path
    on_path = shutil.which("ke-opt")
    if on_path:
        return Path(on_path)
    raise KeError("ke-opt not found (looked at %s and PATH); build it with "
                  "`bash scripts/build.sh ke-opt` or set KE_OPT" %
                  ", ".join(map(str, places)))


_lib = None

_c = ctypes
_SIGNATURES = {
    # name: (restype, argtypes)
    "ke_message_free": (None, [_c.c_void_p]),
    "ke_version": (_c.c_char_p, []),
    "ke_llvm_version": (_c.c_char_p, []),
    "ke_compile": (_c.c_void_p, [_c.c_char_p, _c.c_size_t, _c.c_char_p,
                                 _c.c_char_p, _c.c_char_p,
                                 _c.POINTER(_c.c_void_p)]),
    "ke_module_get_remarks": (_c.c_char_p, [_c.c_void_p]),
    "ke_module_save": (_c.c_void_p, [_c.c_void_p, _c.c_char_p]),
    "ke_module_load": (_c.c_void_p, [_c.c_char_p, _c.POINTER(_c.c_void_p)]),
    "ke_module_destroy": (None, [_c.c_void_p]),
    "ke_module_get_num_functions": (_c.c_size_t, [_c.c_void_p]),
    "ke_module_get_function_name": (_c.c_char_p, [_c.c_void_p, _c.c_size_t]),
    "ke_module_lookup": (_c.c_void_p, [_c.c_void_p, _c.c_char_p,
                                       _c.POINTER(_c.c_void_p)]),
    "ke_function_get_num_inputs": (_c.c_size_t, [_c.c_void_p]),
    "ke_function_get_num_results": (_c.c_size_t, [_c.c_void_p]),
    "ke_function_get_arg_rank": (_c.c_size_t, [_c.c_void_p, _c.c_size_t]),
    "ke_function_get_arg_shape": (_c.POINTER(_c.c_int64),
                                  [_c.c_void_p, _c.c_size_t]),
    "ke_function_get_arg_element_type": (_c.c_char_p,
                                         [_c.c_void_p, _c.c_size_t]),
    "ke_function_call": (_c.c_void_p, [_c.c_void_p,
                                       _c.POINTER(_c.c_void_p), _c.c_size_t]),
}


def lib():
    """libke.so, loaded once, with the argument types of every function."""
    global _lib
    if _lib is None:
        loaded = ctypes.CDLL(str(find_library()))
        for name, (restype, argtypes) in _SIGNATURES.items():
            function = getattr(loaded, name)
            function.restype = restype
            function.argtypes = argtypes
        _lib = loaded
    return _lib


def check(message, error=KeError):
    """Raises `error` with the C API's message (and frees it) if not null."""
    if message:
        text = ctypes.string_at(message).decode("utf-8", "replace")
        lib().ke_message_free(message)
        raise error(text.rstrip())


def version():
    """ke's version and git revision, e.g. '0.1.0 (bad5a54)'."""
    return lib().ke_version().decode()


def llvm_version():
    """The LLVM/MLIR version ke was built with."""
    return lib().ke_llvm_version().decode()
