"""The notebooks (notebooks/*.ipynb): each runs headless from its first cell to its last with
nbclient, in a kernel of this interpreter started from a kernelspec made for the test in a
temporary JUPYTER_PATH (nothing of the user's Jupyter setup is read or written), from a temporary
working folder (the notebooks find the repository themselves); they are stored without outputs;
their first code cell finds the repository from $CAFFE2_REPO, the caffe2 package or the folders
above; and scripts/install_kernel.sh installs the "caffe2" kernelspec, again and again."""
import glob
import json
import os
import re
import subprocess
import sys
import time

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
NOTEBOOKS = sorted(glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb")))
CELL_TIMEOUT = 300  # seconds, per cell; each notebook takes well under a minute in all
KERNEL = "caffe2-test"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def test_there_are_notebooks():
    names = [os.path.basename(p) for p in NOTEBOOKS]
    assert names == [
        "01_basics.ipynb",
        "02_toy_regression.ipynb",
        "03_mnist_brew.ipynb",
        "04_loading_pretrained.ipynb",
        "05_sync_sgd_cpu.ipynb",
        "06_gloo_two_shards.ipynb",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_stored_without_outputs_or_local_paths(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name == "caffe2"
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, "cell {}".format(index)
        assert ROOT not in cell.source and "/tmp/" not in cell.source, "cell {}".format(index)


@pytest.fixture(scope="module")
def jupyter_env(tmp_path_factory):
    """Environment variables for a kernel of this interpreter named KERNEL: a kernelspec in a
    temporary JUPYTER_PATH, and Jupyter's and IPython's other folders there as well. The kernel
    imports the caffe2 package this test process imports, and is told the repository's path (as
    scripts/install_kernel.sh's kernelspec does)."""
    base = tmp_path_factory.mktemp("jupyter")
    spec = base / "path" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    package_root = os.path.dirname(os.path.dirname(__import__("caffe2").__file__))
    kernel = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "caffe2 (test)",
        "language": "python",
        "env": {
            "PYTHONPATH": os.pathsep.join(
                p for p in [package_root, os.environ.get("PYTHONPATH")] if p
            ),
            "CAFFE2_REPO": ROOT,
            "PYDEVD_DISABLE_FILE_VALIDATION": "1",
            # one kernel thread, as the other tests' processes (resnet50_test_util.env): in a
            # Jupyter kernel on 2 busy cores, two OpenMP threads made the ops several times slower
            "OMP_NUM_THREADS": "1",
        },
    }
    (spec / "kernel.json").write_text(json.dumps(kernel))
    return {
        "JUPYTER_PATH": str(base / "path"),
        "JUPYTER_DATA_DIR": str(base / "data"),
        "JUPYTER_CONFIG_DIR": str(base / "config"),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        "IPYTHONDIR": str(base / "ipython"),
    }


def run_notebook(path, env, cwd):
    """Runs every cell; fails naming the notebook and the failing cell, with its source and
    error. Returns the seconds it took."""
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        kernel_name=KERNEL,
        timeout=CELL_TIMEOUT,
        startup_timeout=120,
        resources={"metadata": {"path": str(cwd)}},
    )
    name = os.path.basename(path)
    start = time.time()
    with pytest.MonkeyPatch.context() as mp:
        for key, value in env.items():
            mp.setenv(key, value)
        with client.setup_kernel():
            for index, cell in enumerate(nb.cells):
                try:
                    client.execute_cell(cell, index)
                except nbclient.exceptions.CellExecutionError as e:
                    error = "{}: {}\n{}".format(e.ename, e.evalue, ANSI.sub("", e.traceback))
                    pytest.fail(failure(name, index, cell, error), pytrace=False)
                except nbclient.exceptions.CellTimeoutError:
                    error = "no result within {} s".format(CELL_TIMEOUT)
                    pytest.fail(failure(name, index, cell, error), pytrace=False)
    return time.time() - start


def failure(name, index, cell, error):
    rule = "-" * 72
    return "{}: cell {} failed:\n{}\n{}\n{}\n{}".format(
        name, index, rule, cell.source, rule, error[-4000:]
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_notebook_runs(path, jupyter_env, tmp_path):
    seconds = run_notebook(path, jupyter_env, tmp_path)
    print("{}: {:.1f} s".format(os.path.basename(path), seconds))


def test_failing_cell_is_reported_with_its_source_and_error(jupyter_env, tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.metadata.kernelspec = {"name": KERNEL, "display_name": "caffe2 (test)", "language": "python"}
    nb.cells = [
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_code_cell("y = x + 1\nraise ValueError('bad value %d' % y)"),
    ]
    path = tmp_path / "broken.ipynb"
    nbformat.write(nb, str(path))
    with pytest.raises(pytest.fail.Exception) as info:
        run_notebook(str(path), jupyter_env, tmp_path)
    message = str(info.value)
    assert "broken.ipynb: cell 1 failed" in message
    assert "raise ValueError('bad value %d' % y)" in message
    assert "ValueError: bad value 2" in message


def setup_cell():
    nb = nbformat.read(NOTEBOOKS[0], as_version=4)
    return next(c.source for c in nb.cells if c.cell_type == "code")


@pytest.mark.parametrize("how", ["package", "env", "folders"])
def test_setup_cell_finds_the_repository(how, tmp_path):
    """From another working folder: through the imported caffe2 package, through $CAFFE2_REPO
    (pointing at a folder with examples/resnet50_trainer.py), and, where caffe2 is not importable,
    through the folders above the notebook ($JPY_SESSION_NAME), whose python/ then goes first on
    sys.path."""
    env = dict(os.environ)
    env.pop("CAFFE2_REPO", None)
    env.pop("JPY_SESSION_NAME", None)
    package_root = os.path.dirname(os.path.dirname(__import__("caffe2").__file__))
    python = [sys.executable]
    expected = ROOT
    if how == "package":
        env["PYTHONPATH"] = package_root
    elif how == "env":
        expected = str(tmp_path / "repo")
        os.makedirs(os.path.join(expected, "examples"))
        open(os.path.join(expected, "examples", "resnet50_trainer.py"), "w").close()
        env["CAFFE2_REPO"] = expected
    else:
        # an interpreter that does not see the package: -I ignores PYTHONPATH and user site
        # folders; the venv's editable install is left out with -S (no site-packages at all)
        python = [sys.executable, "-I", "-S"]
        env["JPY_SESSION_NAME"] = os.path.join(ROOT, "notebooks", "01_basics.ipynb")
    code = setup_cell() + "\nprint('path:', sys.path[0])\n"
    out = subprocess.run(
        python + ["-c", code], env=env, cwd=str(tmp_path), capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "repository: {}\n".format(expected) in out.stdout
    if how == "folders":
        assert "path: {}\n".format(os.path.join(ROOT, "python")) in out.stdout


def test_install_kernel_script_is_idempotent(tmp_path):
    venv_python = os.path.join(ROOT, ".venv", "bin", "python")
    if not os.access(venv_python, os.X_OK):
        pytest.skip("no .venv in the repository (scripts/setup_env.sh makes it)")
    script = os.path.join(ROOT, "scripts", "install_kernel.sh")
    for _ in range(2):
        out = subprocess.run(
            ["bash", script, "--prefix", str(tmp_path)], capture_output=True, text=True
        )
        assert out.returncode == 0, out.stdout + out.stderr
    kernels = tmp_path / "share" / "jupyter" / "kernels"
    assert sorted(os.listdir(str(kernels))) == ["caffe2"]
    spec = json.loads((kernels / "caffe2" / "kernel.json").read_text())
    assert spec["argv"] == [venv_python, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    assert spec["env"]["CAFFE2_REPO"] == ROOT
    bad = subprocess.run(["bash", script, "--prefix"], capture_output=True, text=True)
    assert bad.returncode == 2 and "usage:" in bad.stderr
