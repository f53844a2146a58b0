"""dyndep and the extension loading helpers."""
import sys

from caffe2.python import dyndep, extension_loader, workspace


def test_missing_library_is_ignored(capsys):
    dyndep.InitOpsLibrary("@/caffe2/caffe2/distributed:file_store_handler_ops")
    out = capsys.readouterr().out
    assert out == (
        "Ignoring @/caffe2/caffe2/distributed:"
        "file_store_handler_ops as it is not a valid file.\n"
    )
    assert dyndep.GetImportedOpsLibraries() == set()


def test_dlopen_guard_restores_flags():
    import ctypes

    before = sys.getdlopenflags()
    with extension_loader.DlopenGuard():
        assert sys.getdlopenflags() & ctypes.RTLD_GLOBAL
    assert sys.getdlopenflags() == before


def test_c_extension_module():
    import caffe2.python._import_c_extension as C

    assert isinstance(C.has_gpu_support, bool)
    assert workspace.C is C
