"""Decorated classes in a user's own module become Programs, read from source."""

import importlib.util
import sys

import pytest

import egraph_tiles as et
from egraph_tiles import DslError
from egraph_tiles import language as pl
from egraph_tiles.ir import Program

USER_MODULE = '''
from egraph_tiles import language as pl

ROWS, COLS = 16, 64
SHAPE = [ROWS, COLS]
HALF = COLS // 2


@pl.program
class Kernel:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[SHAPE, pl.FP32], out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
        t = pl.tile.load(x, [0, 0], SHAPE, target_memory=pl.Mem.Vec)
        hi = pl.tile.slice(t, [ROWS, HALF], [0, HALF])
        out = pl.store(hi, [0, 0], out)
        return out
'''


def import_file(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    finally:
        del sys.modules[name]
    return mod


def test_decorated_class_becomes_a_program(tmp_path):
    f = tmp_path / "user_kernel_a.py"
    f.write_text(USER_MODULE)
    mod = import_file(f, "user_kernel_a")
    assert isinstance(mod.Kernel, Program)
    assert [fn.name for fn in mod.Kernel.functions] == ["kernel"]


def test_module_constants_resolve_in_shapes_and_offsets(tmp_path):
    f = tmp_path / "user_kernel_b.py"
    f.write_text(USER_MODULE)
    prog = import_file(f, "user_kernel_b").Kernel
    text = et.print_program(prog)
    assert "x: pl.Tensor[[16, 64], pl.FP32]" in text
    assert "pl.tile.slice(t, [16, 32], [0, 32])" in text


def test_load_program_reads_a_file_without_executing_it(tmp_path):
    f = tmp_path / "never_run.py"
    f.write_text(USER_MODULE + "\nraise SystemExit('this module was executed')\n")
    prog = pl.load_program(f)
    assert prog.name == "Kernel"


def test_error_in_a_decorated_class_names_the_module_file_and_line(tmp_path):
    f = tmp_path / "user_kernel_c.py"
    f.write_text(USER_MODULE.replace("[0, HALF])", "[0, HALFF])"))
    with pytest.raises(DslError) as info:
        import_file(f, "user_kernel_c")
    assert info.value.file == str(f) and info.value.line == 14
    assert "'HALFF'" in info.value.message


def test_load_program_picks_a_class_by_name(tmp_path):
    f = tmp_path / "two.py"
    f.write_text(USER_MODULE + USER_MODULE.split("ROWS, COLS")[0] +
                 "\n@pl.program\nclass Other:\n    pass\n")
    with pytest.raises(DslError):
        pl.load_program(f)
    assert pl.load_program(f, "Other").functions == []
