"""dtrun_build.py -- the PEP 517 backend behind `pip install .`.

It runs make for dtrun, dtrun-agent, dtrun-kill and libdtcomm, then packs
them into a wheel with the standard library alone (no setuptools, no wheel,
nothing from a registry), so the install works offline in any venv, with or
without build isolation. The wheel installs:

  bin/dtrun, bin/dtrun-kill, bin/dtrun-agent    on the environment's PATH
  dtrun_progress.py                             importable
  lib/libdtcomm.so{,.0}, include/dtcomm.h,      for C workers; the .pc file
  lib/pkgconfig/dtcomm.pc                       finds its prefix itself
  share/man/man{1,3,5}/...                      the man pages
"""
import base64
import hashlib
import io
import os
import re
import subprocess
import sys
import sysconfig
import zipfile

NAME = "dtrun"
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = "build"
BINS = ("dtrun", "dtrun-kill", "dtrun-agent")
SUMMARY = ("A launcher for distributed training: torchrun's and mpirun's "
           "jobs over ssh, Slurm or this machine")


def _version():
    """The VERSION the Makefile gives the binaries."""
    with open(os.path.join(TOP, "Makefile")) as f:
        m = re.search(r"^VERSION\s*:=\s*(\S+)", f.read(), re.M)
    return m.group(1)


def _tag():
    """py3-none-PLATFORM: any Python 3 here, but these binaries only."""
    return "py3-none-" + re.sub(r"[-.]", "_", sysconfig.get_platform())


def _metadata():
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\n"
            "Requires-Python: >=3.7\n" % (NAME, _version(), SUMMARY))


def _wheel_file():
    return ("Wheel-Version: 1.0\nGenerator: dtrun_build\n"
            "Root-Is-Purelib: false\nTag: %s\n" % _tag())


def _make():
    """Builds what the wheel holds; a missing -dev package says how to fix it."""
    targets = [BUILD + "/" + b for b in BINS + ("libdtcomm.so",)]
    cmd = ["make", "-C", TOP, "-j%d" % (os.cpu_count() or 1),
           "B=" + BUILD] + targets
    # pip shows the build's output on failure; make's goes to stderr too.
    r = subprocess.run(cmd, stdout=sys.stderr)
    if r.returncode != 0:
        raise SystemExit("dtrun: make failed (exit %d); install the build's "
                         "Debian packages with `sh scripts/deps.sh` (as root) "
                         "and run pip again" % r.returncode)


def _pc():
    """dtcomm.pc relative to where it lies: a venv's prefix is not known here."""
    with open(os.path.join(TOP, "src/comm/dtcomm.pc.in")) as f:
        s = f.read()
    return (s.replace("@PREFIX@", "${pcfiledir}/../..")
            .replace("@VERSION@", _version()))


def _files():
    """(path in the wheel, bytes, executable) for everything but dist-info."""
    data = "%s-%s.data" % (NAME, _version())
    out = []

    def add(dst, src=None, text=None, x=False):
        if src is not None:
            with open(os.path.join(TOP, src), "rb") as f:
                text = f.read()
        elif isinstance(text, str):
            text = text.encode()
        out.append((dst, text, x))

    add("dtrun_progress.py", "python/dtrun_progress.py")
    for b in BINS:
        add(data + "/scripts/" + b, BUILD + "/" + b, x=True)
    for so in ("libdtcomm.so", "libdtcomm.so.0"):
        add(data + "/data/lib/" + so, BUILD + "/libdtcomm.so", x=True)
    add(data + "/data/include/dtcomm.h", "src/comm/dtcomm.h")
    add(data + "/data/lib/pkgconfig/dtcomm.pc", text=_pc())
    for m in sorted(os.listdir(os.path.join(TOP, "man"))):
        sec = m.rsplit(".", 1)[-1]
        if sec in ("1", "3", "5"):
            add("%s/data/share/man/man%s/%s" % (data, sec, m), "man/" + m)
    return out


def _record_line(path, blob):
    digest = base64.urlsafe_b64encode(hashlib.sha256(blob).digest())
    return "%s,sha256=%s,%d\n" % (path, digest.rstrip(b"=").decode(), len(blob))


def _write(zf, path, blob, x):
    """Adds one file; the mode bits are what pip gives it when installing."""
    zi = zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0))
    zi.external_attr = (0o100755 if x else 0o100644) << 16
    zi.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(zi, blob)


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    """The dist-info without building anything."""
    di = "%s-%s.dist-info" % (NAME, _version())
    os.makedirs(os.path.join(metadata_directory, di), exist_ok=True)
    for name, text in (("METADATA", _metadata()), ("WHEEL", _wheel_file())):
        with open(os.path.join(metadata_directory, di, name), "w") as f:
            f.write(text)
    return di


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """Runs make, then writes the wheel; returns its file name."""
    _make()
    ver = _version()
    di = "%s-%s.dist-info" % (NAME, ver)
    files = _files() + [(di + "/METADATA", _metadata().encode(), False),
                        (di + "/WHEEL", _wheel_file().encode(), False)]
    name = "%s-%s-%s.whl" % (NAME, ver, _tag())
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        record = ""
        for path, blob, x in files:
            _write(zf, path, blob, x)
            record += _record_line(path, blob)
        record += di + "/RECORD,,\n"
        _write(zf, di + "/RECORD", record.encode(), False)
    with open(os.path.join(wheel_directory, name), "wb") as f:
        f.write(buf.getvalue())
    return name
