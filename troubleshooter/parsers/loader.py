"""The dynamic loader's refusal to start a program, or Python's to import a module, for a shared library it cannot
find: ``ucx_info: error while loading shared libraries: libgdrapi.so.1: cannot open shared object file: No such file
or directory`` (ld.so), ``ImportError: libnccl.so.2: cannot open shared object file`` (Python).

Real sample (openucx/ucx#3198, UCX built --with-gdrcopy=/opt/gdrcopy, no rpath; tests/data/loader)::

    /opt/ucx/git/bin/ucx_info: error while loading shared libraries: libgdrapi.so.1: cannot open shared object file: No such file or directory

The linker says the same at build time (GNU ld: ``warning: libcudart.so.11.0, needed by .../libmpi_gtl_cuda.so, not
found (try using -rpath or -rpath-link)``, ``cannot find -lcudart``): the CUDA runtime of a module or a toolkit is not
on the link path of the program or extension being built.

What it means here: a GPU-stack library installed outside the loader's search path (GDRCopy, UCX, NCCL and its net
plugin, the CUDA runtime or math libraries, libibverbs and its providers, Libfabric) is not on LD_LIBRARY_PATH or in
ld.so.conf where the program runs: on every node, and in what mpirun/srun pass on (``mpirun -x LD_LIBRARY_PATH``).
The driver's own libraries (libcuda.so.1, libnvidia-ml.so.1) missing is another matter: no driver, or a container
started without the GPU runtime.

>>> parse("ucx_info: error while loading shared libraries: libgdrapi.so.1: cannot open shared object file: No such file or directory")
{'loader.missing_libs': ['libgdrapi.so.1'], 'loader.programs': ['ucx_info'], 'loader.gpu_stack_missing': ['libgdrapi.so.1']}
"""

from __future__ import annotations

import re
from typing import Any

from troubleshooter.parsers.base import ParseError, parser, require_text

FACTS = [
    ("loader.missing_libs", "list", "", "shared libraries the loader (or Python's import) could not find, as named, in order"),
    ("loader.programs", "list", "", "the programs that could not start for it (ld.so's 'PROGRAM: error while loading shared libraries'), base names"),
    ("loader.link_time_missing", "list", "", "libraries the linker (ld) could not find while building a program or an extension ('ld: warning: libcudart.so.11.0, needed by X, not found', 'ld: cannot find -lcudart'), as library names"),
    ("loader.gpu_stack_missing", "list", "", "of the missing libraries, the GPU stack's user-space ones (GDRCopy, UCX, NCCL and its net plugin, CUDA runtime and math libraries, verbs and its providers, Libfabric, NVSHMEM, HCOLL/SHARP); not the driver's libcuda/libnvidia-ml"),
]

_LD = re.compile(r"(?:^|\s)(\S+): error while loading shared libraries: ([\w.+-]+\.so[\w.]*): cannot open shared object file")
_PY = re.compile(r"(?:ImportError|OSError|ModuleNotFoundError)(?: \([^)]{0,80}\))?: ([\w.+-]+\.so[\w.]*): cannot open shared object file")
# TensorFlow's (and JAX's, through XLA) own loader: "dso_loader.cc:55] Could not load dynamic library 'libcupti.so.10.1';
# dlerror: libcupti.so.10.1: cannot open shared object file: No such file or directory"
_DSO = re.compile(r"Could not load dynamic library '([\w.+-]+\.so[\w.]*)'; dlerror: [^:]{0,200}: cannot open shared object file")
# GNU ld at build time: a library another one needs is not on the link path (libraries named by -l, or
# DT_NEEDED of a linked .so; "/usr/bin/x86_64-linux-gnu-ld: warning: libcusparse.so.10.0, needed by
# .../libtorch_cuda.so, not found (try using -rpath or -rpath-link)", "../x86_64-conda-linux-gnu/bin/ld: cannot
# find -lcudart: No such file or directory"). Quoted in backticks too: \S* from the blank before takes the backtick
# (a backtick as a start of its own retried \S* from each of a run of them, quadratic in the run).
_LINK_NEEDED = re.compile(r"(?:^|\s)\S*\bld(?:\.\w+)?: warning: ([\w.+-]+\.so[\w.]*), needed by \S+, not found "
                          r"\(try using -rpath or -rpath-link\)")
_LINK_L = re.compile(r"(?:^|\s)\S*\bld(?:\.\w+)?: cannot find -l([\w+-][\w.+-]*?)(?::|\s|`|$)")
_GPU_STACK = re.compile(r"^lib(?:gdrapi|cupti|uc[pstm]|uct_\w+|nccl|nccl-net\S*|nccl_net\S*|cudart|cublas\w*|cudnn\w*|cufft\w*|curand|"
                        r"cusparse\w*|cusolver\w*|nvrtc\w*|nvToolsExt|nvJitLink|ibverbs|mlx5|mlx4|rdmacm|efa|fabric|nvshmem\w*|"
                        r"hcoll|sharp\w*|nvidia-peermem)\b")


def _detect(text: str) -> float:
    head = text[:262144]
    if _LD.search(head) or _LINK_NEEDED.search(head):
        return 0.9
    if _LINK_L.search(head):
        return 0.55
    if _PY.search(head) or _DSO.search(head):
        return 0.55
    return 0.0


@parser(
    "loader",
    detect=_detect,
    summary="the loader's 'error while loading shared libraries', Python's and TensorFlow's 'cannot open shared object file', the linker's 'needed by ..., not found' and 'cannot find -lX': a library not on the path",
    facts=FACTS,
    command="ldd \"$(command -v ucx_info)\" | grep 'not found'   # or the program that would not start",
)
def parse(text: str) -> dict[str, Any]:
    text = require_text(text, "a loader error ('error while loading shared libraries: libX.so: cannot open shared object file')")
    libs: list[str] = []
    programs: list[str] = []
    linked: list[str] = []
    for line in text.split("\n"):
        if len(line) > 4000:
            continue
        k = _LINK_NEEDED.search(line) if "needed by" in line else None
        k = k or (_LINK_L.search(line) if "cannot find -l" in line else None)
        if k:
            lib = k.group(1) if k.re is _LINK_NEEDED else f"lib{k.group(1)}.so"
            for seen in (libs, linked):
                if lib not in seen and len(seen) < 64:
                    seen.append(lib)
            continue
        if "cannot open shared object file" not in line:
            continue
        m = _LD.search(line)
        if m:
            prog = m.group(1).rsplit("/", 1)[-1]
            if prog not in programs:
                programs.append(prog)
            lib = m.group(2)
        else:
            p = _PY.search(line) or _DSO.search(line)
            if not p:
                continue
            lib = p.group(1)
        if lib not in libs and len(libs) < 64:
            libs.append(lib)
    if not libs:
        raise ParseError("no 'error while loading shared libraries: ...: cannot open shared object file' line, and no "
                         "linker's 'needed by ..., not found' or 'cannot find -lX'")
    out = {"loader.missing_libs": libs, "loader.programs": programs,
           "loader.gpu_stack_missing": [lib for lib in libs if _GPU_STACK.match(lib)]}
    if linked:
        out["loader.link_time_missing"] = linked
    return out
