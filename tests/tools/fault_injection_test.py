#!/usr/bin/python3
"""Fault-injection tests of the `sqdiff` program: a full disk, `ulimit -f`, fatal
signals in the middle of a run, inputs that change underneath, read-only and
missing directories, and non-regular inputs.

Run by CTest (tests/tools/CMakeLists.txt) as `fault_injection_test.py -v CLASS`
with the environment variables SQDIFF_BIN (the program) and SQDIFF_TEST_TMP (a
scratch directory), like cli_test.py. By hand:
    SQDIFF_BIN=build/tools/sqdiff /usr/bin/python3 tests/tools/fault_injection_test.py -v

What every case asserts (the behaviour the CLI must have):
- the exit status is exactly the expected one (1 for a failed job);
- stderr is exactly one line, starting "sqdiff: error: " and naming the file or
  directory concerned and the reason;
- nothing is left behind: the output's directory holds exactly what it held
  before (so no `.OUT.npy.tmp-PID-N` temporary), and for `sqdiff ir -o DIR` the
  parent of DIR holds exactly what it held before (no staging directory);
- an existing destination keeps its bytes and its mode.

The cases that run the program as an unprivileged user (root ignores permission bits)
work in a directory of their own below /tmp that every user can enter, with their
inputs, and a copy of the program when that user cannot reach it: the checkout and
the build tree may lie below a directory that other users cannot enter (a clone into
`mktemp -d`, a private home).

A full disk and a read-only file system are small tmpfs mounts made in a private
mount namespace (`unshare --mount`, or `unshare --user --map-root-user --mount`
when not root), so that nothing is mounted on the host; the state of the mount
after the run is copied out (`cp -a`) before the namespace goes away.
"""

import hashlib
import os
import resource
import shlex
import shutil
import signal
import stat
import subprocess
import tempfile
import time
import unittest

import numpy as np

SQDIFF = os.environ.get("SQDIFF_BIN", "sqdiff")
if os.sep in SQDIFF:
    SQDIFF = os.path.abspath(SQDIFF)
TMP_ROOT = os.path.abspath(os.environ.get("SQDIFF_TEST_TMP", tempfile.gettempdir()))
# Where the unprivileged user's cases work: /tmp itself, not $TMPDIR, which may be private.
PUBLIC_TMP_ROOT = "/tmp"

# Seconds a small job may take before it counts as hung.
QUICK = 10

IS_ROOT = os.geteuid() == 0


# --- a model with three Results of different sizes ------------------------------------

def _port(port_id, shape):
    return '<port id="%d" precision="FP32">%s</port>' % (port_id, "".join("<dim>%d</dim>" % d for d in shape))


def _parameter(layer_id, name, shape):
    return ('<layer id="%d" name="%s" type="Parameter" version="opset1">'
            '<data shape="%s" element_type="f32"/><output>%s</output></layer>'
            % (layer_id, name, ",".join(map(str, shape)), _port(0, shape)))


def _op(layer_id, name, op, a, b, out):
    return ('<layer id="%d" name="%s" type="%s" version="opset1"><data auto_broadcast="numpy"/>'
            '<input>%s%s</input><output>%s</output></layer>' % (layer_id, name, op, _port(0, a), _port(1, b),
                                                                 _port(2, out)))


def _result(layer_id, name, shape):
    return '<layer id="%d" name="%s" type="Result" version="opset1"><input>%s</input></layer>' % (
        layer_id, name, _port(0, shape))


def _edge(from_layer, from_port, to_layer, to_port):
    return '<edge from-layer="%d" from-port="%d" to-layer="%d" to-port="%d"/>' % (
        from_layer, from_port, to_layer, to_port)


A_SHAPE, B_SHAPE, C_SHAPE = (256, 1), (1, 2048), (1, 1)
# Results in file order: 1 KiB, 8 KiB and 2 MiB of f32 (plus a 128-byte header each); each depends on
# the random inputs, so runs with different seeds write different bytes.
RESULTS = {"r_small": A_SHAPE, "r_medium": B_SHAPE, "r_large": (256, 2048)}
THREE_RESULTS_XML = "\n".join([
    '<?xml version="1.0"?>',
    '<net name="three_results" version="11">',
    "<layers>",
    _parameter(0, "a", A_SHAPE),
    _parameter(1, "b", B_SHAPE),
    _parameter(2, "c", C_SHAPE),
    _op(3, "a_minus_c", "Subtract", A_SHAPE, C_SHAPE, A_SHAPE),
    _op(4, "b_minus_c", "Subtract", B_SHAPE, C_SHAPE, B_SHAPE),
    _op(5, "a_sd_b", "SquaredDifference", A_SHAPE, B_SHAPE, RESULTS["r_large"]),
    _result(6, "r_small", A_SHAPE),
    _result(7, "r_medium", B_SHAPE),
    _result(8, "r_large", RESULTS["r_large"]),
    "</layers>",
    "<edges>",
    _edge(0, 0, 3, 0), _edge(2, 0, 3, 1),
    _edge(1, 0, 4, 0), _edge(2, 0, 4, 1),
    _edge(0, 0, 5, 0), _edge(1, 0, 5, 1),
    _edge(3, 2, 6, 0), _edge(4, 2, 7, 0), _edge(5, 2, 8, 0),
    "</edges>",
    "</net>",
    "",
])


# --- helpers ---------------------------------------------------------------------------

def tree_state(root):
    """{relative path: (kind, mode, sha256 of the contents)} of everything under root."""
    state = {}
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(directory, name)
            st = os.lstat(path)
            digest = None
            if stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
            state[os.path.relpath(path, root)] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), digest)
    return state


def file_state(path):
    """(mode, contents) of a file."""
    with open(path, "rb") as f:
        return stat.S_IMODE(os.stat(path).st_mode), f.read()


def limit_file_size(limit):
    """A preexec_fn: RLIMIT_FSIZE = limit bytes (`ulimit -f`)."""
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def no_core_dumps():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def reachable_by_others(path):
    """Whether a user who is neither the owner nor in the group can read `path`: it is readable by
    others (o+r) and every directory above it lets others in (o+x)."""
    path = os.path.realpath(path)
    if not os.stat(path).st_mode & stat.S_IROTH:
        return False
    directory = os.path.dirname(path)
    while True:
        if not os.stat(directory).st_mode & stat.S_IXOTH:
            return False
        if os.path.dirname(directory) == directory:
            return True
        directory = os.path.dirname(directory)


def shared_libraries(program):
    """The paths of the shared libraries `program` loads, as ldd resolves them (none when static)."""
    listing = subprocess.run(["ldd", program], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True).stdout
    paths = []
    for line in listing.splitlines():
        if "=>" in line:
            path = line.split("=>", 1)[1].strip().split(" (", 1)[0]
            if path.startswith("/"):
                paths.append(path)
    return paths


def remove_tree(root):
    """Removes a scratch directory, after making every directory in it writable again."""
    for directory, dirs, _ in os.walk(root):
        for name in dirs:
            path = os.path.join(directory, name)
            if not os.path.islink(path):
                os.chmod(path, 0o755)
    shutil.rmtree(root, ignore_errors=True)


def as_unprivileged_user():
    """The command prefix that drops root (root ignores permission bits), or nothing when not root."""
    if IS_ROOT:
        return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    return []


def mount_namespace_prefix():
    """A private mount namespace: as root directly, otherwise inside a user namespace."""
    if IS_ROOT:
        return ["unshare", "--mount", "--propagation", "private"]
    return ["unshare", "--user", "--map-root-user", "--mount", "--propagation", "private"]


def signal_name(signum):
    try:
        return signal.Signals(signum).name
    except ValueError:
        return "SIGRTMIN+%d" % (signum - signal.SIGRTMIN)


class Outcome:
    """What one sqdiff run gave: returncode (negative: killed by that signal), stdout, stderr."""

    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


class FaultTestCase(unittest.TestCase):
    def setUp(self):
        self.dir = self.scratch_directory(TMP_ROOT)
        self.program = SQDIFF

    def scratch_directory(self, root):
        """A new directory of mode 0755 below `root`, removed after the test."""
        os.makedirs(root, exist_ok=True)
        directory = tempfile.mkdtemp(prefix=self.id().split(".")[-1] + "-", dir=root)
        os.chmod(directory, 0o755)
        self.addCleanup(remove_tree, directory)
        return directory

    def path(self, *names):
        return os.path.join(self.dir, *names)

    def mkdir(self, *names):
        path = self.path(*names)
        os.makedirs(path)
        return path

    def save(self, name, array):
        path = self.path(name)
        np.save(path, array)
        os.chmod(path, 0o644)
        return path

    def small_inputs(self):
        """a [1024,1] and b [1024] f32: a 4 MiB output [1024,1024]."""
        rng = np.random.default_rng(3)
        a = self.save("a.npy", rng.standard_normal((1024, 1)).astype(np.float32))
        b = self.save("b.npy", rng.standard_normal(1024).astype(np.float32))
        return a, b

    def model(self):
        path = self.path("three_results.xml")
        with open(path, "w") as f:
            f.write(THREE_RESULTS_XML)
        os.chmod(path, 0o644)
        return path

    def sqdiff(self, args, prefix=(), timeout=QUICK, preexec_fn=None):
        """Runs sqdiff ARGS; a run that does not end within `timeout` seconds fails the test."""
        command = list(prefix) + [self.program] + [str(a) for a in args]
        try:
            proc = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, timeout=timeout, preexec_fn=preexec_fn, restore_signals=True,
                                  cwd=self.dir)
        except subprocess.TimeoutExpired:
            proc = None  # killed by subprocess.run
        if proc is None:
            self.fail("hung: %s did not finish within %d s (it was killed)" % (shlex.join(command), timeout))
        return Outcome(proc.returncode, proc.stdout, proc.stderr)

    def assert_error(self, outcome, *fragments, status=1):
        """Exit status `status`, and stderr exactly one line "sqdiff: error: ..." holding every fragment."""
        if outcome.returncode < 0:
            self.fail("killed by %s; stderr: %r" % (signal_name(-outcome.returncode), outcome.stderr))
        self.assertEqual(outcome.returncode, status, "exit status %d, expected %d; stderr: %r" % (
            outcome.returncode, status, outcome.stderr))
        lines = outcome.stderr.split("\n")
        self.assertEqual(len(lines), 2, "expected exactly one line on stderr, got %r" % outcome.stderr)
        self.assertEqual(lines[1], "", "stderr must end with a newline: %r" % outcome.stderr)
        self.assertTrue(lines[0].startswith("sqdiff: error: "), "stderr: %r" % outcome.stderr)
        for fragment in fragments:
            self.assertIn(fragment, lines[0])
        return lines[0]

    def assert_same_tree(self, after, before):
        """Two tree_state()s are equal; otherwise the message lists what changed, path by path."""
        changes = []
        for name in sorted(set(before) | set(after)):
            was, now = before.get(name), after.get(name)
            if was is None:
                changes.append("%s: new" % name)
            elif now is None:
                changes.append("%s: removed" % name)
            elif was[1] != now[1]:
                changes.append("%s: mode %o became %o" % (name, was[1], now[1]))
            if was is not None and now is not None and was[2] != now[2]:
                changes.append("%s: contents changed" % name)
        if changes:
            self.fail("the existing output changed: " + "; ".join(changes))

    def assert_listing(self, directory, expected):
        """The directory holds exactly `expected` (hidden names included: no temporary, no staging)."""
        found = sorted(os.listdir(directory))
        if found != sorted(expected):
            tree = sorted(tree_state(directory))
            self.fail("%s holds %s, expected %s" % (directory, tree, sorted(expected)))

    # --- a large run, stopped in the middle ---

    def start(self, args):
        """Starts sqdiff ARGS in the background (no core files: some signals below dump core)."""
        return subprocess.Popen([self.program] + [str(a) for a in args], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=no_core_dumps,
                                restore_signals=True, cwd=self.dir)

    def temporaries(self, directory):
        return [name for name in os.listdir(directory) if ".tmp-" in name]

    def wait_for_temporary(self, proc, directory, timeout=30):
        """Polls until the output's temporary exists in `directory`."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.temporaries(directory):
                return
            if proc.poll() is not None:
                self.fail("sqdiff ended (status %d) before its temporary appeared; stderr: %r" % (
                    proc.returncode, proc.stderr.read()))
            time.sleep(0.001)
        self.fail("no temporary appeared in %s within %d s" % (directory, timeout))

    def stop(self, proc):
        """SIGSTOP, and waits until every thread of the process is stopped."""
        os.kill(proc.pid, signal.SIGSTOP)
        end = time.monotonic() + 10
        while time.monotonic() < end:
            states = []
            try:
                for task in os.listdir("/proc/%d/task" % proc.pid):
                    with open("/proc/%d/task/%s/stat" % (proc.pid, task)) as f:
                        states.append(f.read().rsplit(")", 1)[1].split()[0])
            except OSError:
                pass  # a thread ended while we looked
            if states and all(state in "tTZ" for state in states):
                return
            time.sleep(0.001)
        self.fail("sqdiff did not stop within 10 s")

    def finish(self, proc, timeout=120):
        """Waits for the process; a hang fails the test."""
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            out = err = None
        if out is None:
            self.kill_if_running(proc)
            self.fail("hung: sqdiff did not finish within %d s (it was killed)" % timeout)
        return Outcome(proc.returncode, out, err)

    def kill_if_running(self, proc):
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            os.kill(proc.pid, signal.SIGCONT)
        proc.communicate()

    # --- a full disk, a read-only file system: tmpfs in a private mount namespace ---

    def in_mount_namespace(self, body, mount_point, size):
        """Runs the shell script `body` in a private mount namespace where `mount_point` is a tmpfs of
        `size` (e.g. "1m"). In the script, `sqdiff LABEL ARGS...` runs the program (its stdout, stderr and
        status are kept under LABEL), and `snapshot LABEL` copies the tmpfs out (see snapshot_path).
        Returns {label: Outcome}."""
        self.ns_dir = self.mkdir("ns-results")
        prelude = """
set -eu
sqdiff() {
    label=$1; shift
    set +e
    timeout --kill-after=5 $QUICK "$SQDIFF_BIN" "$@" >"$NS_DIR/$label.stdout" 2>"$NS_DIR/$label.stderr"
    status=$?
    set -e
    [ $status -ne 124 ] || echo "(the test: sqdiff hung, killed after $QUICK s)" >>"$NS_DIR/$label.stderr"
    echo $status >"$NS_DIR/$label.status"
}
snapshot() {
    mkdir "$NS_DIR/$1.tree"
    cp -a "$MNT/." "$NS_DIR/$1.tree/"
}
mount -t tmpfs -o size=$SIZE,mode=0755 tmpfs "$MNT"
"""
        env = dict(os.environ, SQDIFF_BIN=self.program, NS_DIR=self.ns_dir, MNT=mount_point, SIZE=size,
                   QUICK=str(QUICK))
        command = mount_namespace_prefix() + ["sh", "-c", prelude + body]
        proc = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=120, cwd=self.dir)
        self.assertEqual(proc.returncode, 0, "the namespace script failed: " + proc.stdout)
        outcomes = {}
        for name in os.listdir(self.ns_dir):
            if name.endswith(".status"):
                label = name[:-len(".status")]
                with open(os.path.join(self.ns_dir, name)) as f:
                    status = int(f.read())
                if status > 128:  # the shell's way of saying "killed by signal status - 128"
                    status = 128 - status
                with open(os.path.join(self.ns_dir, label + ".stdout")) as f:
                    out = f.read()
                with open(os.path.join(self.ns_dir, label + ".stderr")) as f:
                    err = f.read()
                outcomes[label] = Outcome(status, out, err)
        return outcomes

    def snapshot_path(self, label, *names):
        """Where `snapshot LABEL` copied the tmpfs (and names inside it)."""
        return os.path.join(self.ns_dir, label + ".tree", *names)


q = shlex.quote


# --- 1. a full disk ---------------------------------------------------------------------

class DiskFullTest(FaultTestCase):
    """The output's directory is a small tmpfs."""

    def test_run_output_larger_than_the_disk(self):
        a, b = self.small_inputs()
        mnt = self.mkdir("mnt")
        out = os.path.join(mnt, "o.npy")
        outcomes = self.in_mount_namespace(
            "sqdiff run run --op squared_difference %s %s -o %s\nsnapshot after\n" % (q(a), q(b), q(out)),
            mnt, "1m")
        self.assert_error(outcomes["run"], out, "No space left on device")
        self.assertEqual(outcomes["run"].stdout, "")
        self.assert_listing(self.snapshot_path("after"), [])

    def test_run_existing_output_is_kept(self):
        a, b = self.small_inputs()
        old = self.save("old.npy", np.arange(100, dtype=np.int16))
        mnt = self.mkdir("mnt")
        out = os.path.join(mnt, "o.npy")
        outcomes = self.in_mount_namespace(
            "cp %s %s\nchmod 0640 %s\n" % (q(old), q(out), q(out)) +
            "sqdiff run run --op squared_difference %s %s -o %s\nsnapshot after\n" % (q(a), q(b), q(out)),
            mnt, "1m")
        self.assert_error(outcomes["run"], out, "No space left on device")
        self.assert_listing(self.snapshot_path("after"), ["o.npy"])
        self.assertEqual(file_state(self.snapshot_path("after", "o.npy")), (0o640, file_state(old)[1]))

    def test_ir_later_result_does_not_fit(self):
        # 1 MiB: the random inputs, r_small and r_medium fit, r_large (2 MiB) does not.
        model = self.model()
        mnt = self.mkdir("mnt")
        out = os.path.join(mnt, "out")
        outcomes = self.in_mount_namespace(
            "sqdiff ir ir %s --random 1 -o %s\nsnapshot after\n" % (q(model), q(out)), mnt, "1m")
        self.assert_error(outcomes["ir"], out, "No space left on device")
        self.assert_listing(self.snapshot_path("after"), [])  # no out, no staging directory

    def test_ir_existing_output_directory_is_kept(self):
        # 3 MiB: an earlier run's output (2.04 MiB) fits, a second copy of it does not.
        model = self.model()
        mnt = self.mkdir("mnt")
        out = os.path.join(mnt, "out")
        outcomes = self.in_mount_namespace(
            "sqdiff first ir %s --random 1 -o %s\n" % (q(model), q(out)) +
            "chmod 0600 %s\n" % q(os.path.join(out, "r_small.npy")) +
            "snapshot before\n"
            "sqdiff second ir %s --random 2 -o %s\n" % (q(model), q(out)) +
            "snapshot after\n", mnt, "3m")
        self.assertEqual(outcomes["first"].returncode, 0, outcomes["first"].stderr)
        before = tree_state(self.snapshot_path("before"))
        self.assertEqual(sorted(before), ["out", "out/.sqdiff-output", "out/inputs", "out/inputs/a.npy",
                                          "out/inputs/b.npy", "out/inputs/c.npy", "out/r_large.npy",
                                          "out/r_medium.npy", "out/r_small.npy"])
        self.assert_error(outcomes["second"], out, "No space left on device")
        self.assert_listing(self.snapshot_path("after"), ["out"])
        self.assert_same_tree(tree_state(self.snapshot_path("after")), before)


# --- 2. ulimit -f ------------------------------------------------------------------------

class FileSizeLimitTest(FaultTestCase):
    """RLIMIT_FSIZE below the output's size: a clear error, not death by SIGXFSZ."""

    def assert_size_limit_error(self, outcome, path):
        line = self.assert_error(outcome, path)
        self.assertTrue("ulimit -f" in line or "file size limit" in line.lower(),
                        "the message does not mention the file size limit (ulimit -f): %r" % line)

    def test_run_output_over_the_limit(self):
        a, b = self.small_inputs()
        out_dir = self.mkdir("out")
        out = os.path.join(out_dir, "o.npy")
        outcome = self.sqdiff(["run", "--op", "subtract", a, b, "-o", out], preexec_fn=limit_file_size(1 << 20))
        self.assert_size_limit_error(outcome, out)
        self.assert_listing(out_dir, [])

    def test_run_existing_output_is_kept(self):
        a, b = self.small_inputs()
        out_dir = self.mkdir("out")
        out = self.save(os.path.join("out", "o.npy"), np.arange(10, dtype=np.uint8))
        os.chmod(out, 0o640)
        before = file_state(out)
        outcome = self.sqdiff(["run", "--op", "subtract", a, b, "-o", out], preexec_fn=limit_file_size(1 << 20))
        self.assert_size_limit_error(outcome, out)
        self.assert_listing(out_dir, ["o.npy"])
        self.assertEqual(file_state(out), before)

    def test_ir_result_over_the_limit(self):
        # 64 KiB: the inputs, r_small and r_medium are under the limit, r_large is not.
        model = self.model()
        parent = self.mkdir("parent")
        out = os.path.join(parent, "out")
        outcome = self.sqdiff(["ir", model, "--random", "1", "-o", out], preexec_fn=limit_file_size(64 << 10))
        self.assert_size_limit_error(outcome, out)
        self.assert_listing(parent, [])


# --- 3. fatal signals in the middle of a large run ---------------------------------------

def large_input(path, rows, cols, data_rows, seed):
    """A sparse f32 .npy file [rows, cols]: zeros (holes) except the random rows `data_rows`."""
    array = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(rows, cols))
    rng = np.random.default_rng(seed)
    for r in data_rows:
        array[r] = rng.standard_normal(cols, dtype=np.float32) * 100
    array.flush()
    del array
    os.chmod(path, 0o644)
    return path


# Every signal whose default action ends the process (signal(7): "Term" and "Core"), SIGXFSZ aside.
FATAL_SIGNALS = [
    signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGILL, signal.SIGTRAP, signal.SIGABRT, signal.SIGBUS,
    signal.SIGFPE, signal.SIGUSR1, signal.SIGSEGV, signal.SIGUSR2, signal.SIGPIPE, signal.SIGALRM, signal.SIGTERM,
    signal.SIGSTKFLT, signal.SIGXCPU, signal.SIGVTALRM, signal.SIGPROF, signal.SIGIO, signal.SIGPWR, signal.SIGSYS,
    signal.SIGRTMIN, signal.SIGRTMIN + 5, signal.SIGRTMAX,
]

LARGE_ROWS, LARGE_COLS = 64, 1 << 20  # 256 MiB of f32


class SignalTest(FaultTestCase):
    """A 256 MiB squared_difference of two 256 MiB (sparse) inputs with --threads 1, stopped as soon as
    its temporary exists (SIGSTOP), sent the signal, continued (SIGCONT): the signal is handled in
    the middle of the run. Every fatal signal kills the process with that signal, after removing the
    temporary; SIGXFSZ is ignored and the run completes."""

    @classmethod
    def setUpClass(cls):
        os.makedirs(TMP_ROOT, exist_ok=True)
        cls.inputs_dir = tempfile.mkdtemp(prefix="SignalTest-inputs-", dir=TMP_ROOT)
        cls.a = large_input(os.path.join(cls.inputs_dir, "a.npy"), LARGE_ROWS, LARGE_COLS, [0, 37, 63], 1)
        cls.b = large_input(os.path.join(cls.inputs_dir, "b.npy"), LARGE_ROWS, LARGE_COLS, [1, 37, 62], 2)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.inputs_dir, ignore_errors=True)

    def interrupt(self, signum):
        """Runs the job into out-SIGNAME/o.npy (an existing file), sends `signum` mid-run; returns
        (outcome, output directory, the existing output's state)."""
        out_dir = self.mkdir("out-" + signal_name(signum))
        out = self.save(os.path.join(os.path.basename(out_dir), "o.npy"), np.arange(10, dtype=np.uint8))
        os.chmod(out, 0o640)
        before = file_state(out)
        proc = self.start(["run", "--op", "squared_difference", self.a, self.b, "-o", out, "--threads", "1",
                           "--quiet"])
        try:
            self.wait_for_temporary(proc, out_dir)
            self.stop(proc)
            self.assertTrue(self.temporaries(out_dir), "the run ended before the signal was sent")
            os.kill(proc.pid, signum)
            os.kill(proc.pid, signal.SIGCONT)
            outcome = self.finish(proc)
        finally:
            self.kill_if_running(proc)
        return outcome, out_dir, before

    def test_each_fatal_signal_kills_and_removes_the_temporary(self):
        for signum in FATAL_SIGNALS:
            with self.subTest(signal=signal_name(signum)):
                outcome, out_dir, before = self.interrupt(signum)
                self.assertEqual(outcome.returncode, -signum, "expected death by %s; stderr: %r" % (
                    signal_name(signum), outcome.stderr))
                self.assert_listing(out_dir, ["o.npy"])
                self.assertEqual(file_state(os.path.join(out_dir, "o.npy")), before,
                                 "the existing output changed")

    def test_sigxfsz_is_ignored(self):
        outcome, out_dir, _ = self.interrupt(signal.SIGXFSZ)
        if outcome.returncode < 0:
            self.fail("killed by %s; stderr: %r" % (signal_name(-outcome.returncode), outcome.stderr))
        self.assertEqual(outcome.returncode, 0, "stderr: %r" % outcome.stderr)
        self.assertEqual(outcome.stderr, "")
        self.assert_listing(out_dir, ["o.npy"])
        out = np.load(os.path.join(out_dir, "o.npy"), mmap_mode="r")
        a = np.load(self.a, mmap_mode="r")
        b = np.load(self.b, mmap_mode="r")
        self.assertEqual((out.dtype, out.shape), (np.dtype(np.float32), (LARGE_ROWS, LARGE_COLS)))
        for r in range(0, LARGE_ROWS, 8):
            d = np.asarray(a[r:r + 8]) - np.asarray(b[r:r + 8])
            self.assertTrue(np.array_equal(np.asarray(out[r:r + 8]), d * d), "rows %d-%d differ" % (r, r + 7))
        del out, a, b


# --- 4. inputs changing underneath ----------------------------------------------------------

class InputChangeTest(FaultTestCase):
    """An input of 256 MiB (sparse) is truncated, or rewritten, while sqdiff run reads it: the run
    is stopped (SIGSTOP) as soon as its temporary exists, the file is changed, the run continues."""

    def setUp(self):
        super().setUp()
        self.row = self.save("row.npy", np.random.default_rng(4).standard_normal(LARGE_COLS).astype(np.float32))

    def prepare(self, name):
        """A large input NAME.npy, and an output directory NAME-out/ holding an existing o.npy."""
        big = large_input(self.path(name + ".npy"), LARGE_ROWS, LARGE_COLS, [0, 1, 40, 63], 3)
        out_dir = self.mkdir(name + "-out")
        out = self.save(os.path.join(name + "-out", "o.npy"), np.arange(10, dtype=np.uint8))
        os.chmod(out, 0o640)
        return big, out_dir, out

    def run_and_change(self, inputs, out, change):
        proc = self.start(["run", "--op", "subtract"] + inputs + ["-o", out, "--threads", "1", "--quiet"])
        try:
            self.wait_for_temporary(proc, os.path.dirname(out))
            self.stop(proc)
            self.assertTrue(self.temporaries(os.path.dirname(out)), "the run ended before the input was changed")
            change()
            os.kill(proc.pid, signal.SIGCONT)
            return self.finish(proc)
        finally:
            self.kill_if_running(proc)

    def test_truncated_input(self):
        for which in ("a", "b"):
            with self.subTest(truncated=which):
                big, out_dir, out = self.prepare("big_" + which)
                existing = file_state(out)
                inputs = [big, self.row] if which == "a" else [self.row, big]
                size = os.path.getsize(big)
                outcome = self.run_and_change(inputs, out, lambda: os.truncate(big, size // 2))
                self.assert_error(outcome, big, "truncated")
                self.assertEqual(outcome.stdout, "")
                self.assert_listing(out_dir, ["o.npy"])
                self.assertEqual(file_state(out), existing, "the existing output changed")

    def test_rewritten_input(self):
        # The same size, other bytes: not detectable, not an error; the run completes.
        big, out_dir, out = self.prepare("big")
        size = os.path.getsize(big)

        def rewrite():
            new = np.full(LARGE_COLS, 7.0, dtype=np.float32).tobytes()
            with open(big, "r+b") as f:
                f.seek(size - LARGE_ROWS // 2 * len(new))
                for _ in range(LARGE_ROWS // 2):
                    f.write(new)
            self.assertEqual(os.path.getsize(big), size)

        outcome = self.run_and_change([big, self.row], out, rewrite)
        self.assertEqual(outcome.returncode, 0, "stderr: %r" % outcome.stderr)
        self.assertEqual(outcome.stderr, "")
        self.assert_listing(out_dir, ["o.npy"])
        result = np.load(out, mmap_mode="r")
        self.assertEqual((result.dtype, result.shape), (np.dtype(np.float32), (LARGE_ROWS, LARGE_COLS)))
        row = np.load(self.row)
        a = np.load(big, mmap_mode="r")
        self.assertTrue(np.array_equal(np.asarray(result[0]), np.asarray(a[0]) - row))  # not rewritten
        del result, a


# --- 5. read-only, unwritable and missing directories ----------------------------------------

class UnwritableDirectoryTest(FaultTestCase):
    """The output's directory (sqdiff run) or the output directory's parent (sqdiff ir -o DIR) is on a
    read-only mount, has no write permission for the (unprivileged) user, or does not exist."""

    def setUp(self):
        super().setUp()
        self.make_inputs()

    def make_inputs(self):
        self.a, self.b = self.small_inputs()
        self.old = self.save("old.npy", np.arange(100, dtype=np.int16))

    def locked_directory(self, name, existing=None):
        """A directory of mode 0555, holding `existing` (a copy of old.npy, mode 0640) if given."""
        directory = self.mkdir(name)
        if existing:
            shutil.copyfile(self.old, os.path.join(directory, existing))
            os.chmod(os.path.join(directory, existing), 0o640)
        os.chmod(directory, 0o555)
        return directory

    def unprivileged(self):
        """Moves the test into a directory below /tmp that every user can enter, holding the inputs (made
        anew there) and, when needed, a copy of the program (copy_program), and returns the prefix that
        runs the program as an unprivileged user; checks that this user can run it at all. Then the
        user's errors are about the locked directories alone, wherever the checkout and the build tree
        lie: below a directory of mode 0700, that user reaches neither the program nor the inputs there."""
        self.dir = self.scratch_directory(PUBLIC_TMP_ROOT)
        self.assertTrue(reachable_by_others(self.dir), "other users cannot enter " + self.dir)
        prefix = as_unprivileged_user() + self.copy_program(self.path("bin"))
        self.make_inputs()
        outcome = self.sqdiff(["--version"], prefix=prefix)
        self.assertEqual(outcome.returncode, 0, "%s cannot run %s: %r" % (shlex.join(prefix), self.program,
                                                                         outcome.stderr))
        return prefix

    def copy_program(self, directory):
        """When other users cannot reach the program or a shared library it loads (a shared libsqdiff in
        the build tree, found through the program's RUNPATH), copies the program into `directory` and
        makes self.program the copy, and copies those libraries too (into directory/lib). Returns the
        command prefix that makes the copy load them. The program is used in place otherwise (/tmp may
        be mounted noexec)."""
        program = shutil.which(SQDIFF)
        self.assertIsNotNone(program, "no program " + SQDIFF)
        private = [path for path in shared_libraries(program) if not reachable_by_others(path)]
        if reachable_by_others(program) and not private:
            return []
        os.mkdir(directory)
        self.program = os.path.join(directory, "sqdiff")
        shutil.copyfile(program, self.program)
        os.chmod(self.program, 0o755)
        if not private:
            return []
        libraries = os.path.join(directory, "lib")
        os.mkdir(libraries)
        for path in private:
            copy = os.path.join(libraries, os.path.basename(path))
            shutil.copyfile(path, copy)
            os.chmod(copy, 0o755)
        # LD_LIBRARY_PATH comes before the program's RUNPATH in the loader's search.
        return ["env", "LD_LIBRARY_PATH=" + libraries]

    def test_run_read_only_file_system(self):
        mnt = self.mkdir("mnt")
        existing, new = os.path.join(mnt, "d", "o.npy"), os.path.join(mnt, "d", "new.npy")
        outcomes = self.in_mount_namespace(
            "mkdir %s\ncp %s %s\nchmod 0640 %s\n" % (q(os.path.dirname(existing)), q(self.old), q(existing),
                                                   q(existing)) +
            "mount -o remount,ro %s\n" % q(mnt) +
            "sqdiff existing run --op subtract %s %s -o %s\n" % (q(self.a), q(self.b), q(existing)) +
            "sqdiff new run --op subtract %s %s -o %s\n" % (q(self.a), q(self.b), q(new)) +
            "snapshot after\n", mnt, "1m")
        self.assert_error(outcomes["existing"], existing, "Read-only file system")
        self.assert_error(outcomes["new"], new, "Read-only file system")
        self.assert_listing(self.snapshot_path("after", "d"), ["o.npy"])
        self.assertEqual(file_state(self.snapshot_path("after", "d", "o.npy")), (0o640, file_state(self.old)[1]))

    def test_run_directory_without_write_permission(self):
        prefix = self.unprivileged()
        directory = self.locked_directory("locked", existing="o.npy")
        before = file_state(os.path.join(directory, "o.npy"))
        for name in ("o.npy", "new.npy"):
            with self.subTest(output=name):
                out = os.path.join(directory, name)
                outcome = self.sqdiff(["run", "--op", "subtract", self.a, self.b, "-o", out], prefix=prefix)
                self.assert_error(outcome, out, "Permission denied")
                self.assert_listing(directory, ["o.npy"])
                self.assertEqual(file_state(os.path.join(directory, "o.npy")), before)

    def test_run_missing_directory(self):
        out = self.path("missing", "o.npy")
        outcome = self.sqdiff(["run", "--op", "subtract", self.a, self.b, "-o", out])
        self.assert_error(outcome, out, "No such file or directory")
        self.assert_listing(self.dir, ["a.npy", "b.npy", "old.npy"])

    def test_ir_parent_read_only(self):
        model = self.model()
        mnt = self.mkdir("mnt")
        new, existing = os.path.join(mnt, "new"), os.path.join(mnt, "out")
        outcomes = self.in_mount_namespace(
            "sqdiff first ir %s --random 1 -o %s\n" % (q(model), q(existing)) +
            "snapshot before\n"
            "mount -o remount,ro %s\n" % q(mnt) +
            "sqdiff new ir %s --random 2 -o %s\n" % (q(model), q(new)) +
            "sqdiff existing ir %s --random 2 -o %s\n" % (q(model), q(existing)) +
            "snapshot after\n", mnt, "4m")
        self.assertEqual(outcomes["first"].returncode, 0, outcomes["first"].stderr)
        self.assert_error(outcomes["new"], new, "Read-only file system")
        self.assert_error(outcomes["existing"], existing, "Read-only file system")
        self.assert_listing(self.snapshot_path("after"), ["out"])
        self.assert_same_tree(tree_state(self.snapshot_path("after")), tree_state(self.snapshot_path("before")))

    def test_ir_parent_without_write_permission(self):
        prefix = self.unprivileged()
        model = self.model()
        parent = self.locked_directory("locked")
        out = os.path.join(parent, "out")
        outcome = self.sqdiff(["ir", model, "--random", "1", "-o", out], prefix=prefix)
        self.assert_error(outcome, out, "Permission denied")
        self.assert_listing(parent, [])

    def test_ir_parent_missing(self):
        # Missing parents of DIR are created (docs/ir.md), but only once the whole set is
        # written: a run that fails leaves not even an empty parent behind.
        model = self.model()
        out = self.path("missing", "deeper", "out")
        outcome = self.sqdiff(["ir", model, "--random", "1", "--input", "a=" + self.path("none.npy"), "-o", out])
        self.assert_error(outcome, self.path("none.npy"), "No such file or directory")
        self.assertFalse(os.path.exists(self.path("missing")), "a parent was created by a failed run")
        self.assertEqual([n for n in os.listdir(self.dir) if "missing" in n or ".tmp-" in n], [])
        outcome = self.sqdiff(["ir", model, "--random", "1", "-o", out])
        self.assertEqual(outcome.returncode, 0, outcome.stderr)
        self.assertEqual(sorted(os.listdir(out)), [".sqdiff-output", "inputs", "r_large.npy", "r_medium.npy",
                                                   "r_small.npy"])


# --- 6. non-regular inputs ------------------------------------------------------------------

class NonRegularInputTest(FaultTestCase):
    """A FIFO as an input must be refused at once, not opened (which blocks until a writer comes)."""

    def setUp(self):
        super().setUp()
        self.a, self.b = self.small_inputs()
        self.fifo = self.path("fifo.npy")
        os.mkfifo(self.fifo)
        self.out_dir = self.mkdir("out")

    def test_run_fifo_as_input(self):
        for inputs in ([self.fifo, self.b], [self.a, self.fifo]):
            with self.subTest(fifo="a" if inputs[0] == self.fifo else "b"):
                out = os.path.join(self.out_dir, "o.npy")
                outcome = self.sqdiff(["run", "--op", "subtract"] + inputs + ["-o", out])
                self.assert_error(outcome, self.fifo, "not a regular file")
                self.assert_listing(self.out_dir, [])

    def test_ir_fifo_as_model(self):
        fifo_xml = self.path("fifo.xml")
        os.mkfifo(fifo_xml)
        outcome = self.sqdiff(["ir", fifo_xml, "--random", "1", "-o", os.path.join(self.out_dir, "ir")])
        self.assert_error(outcome, fifo_xml, "not a regular file")
        self.assert_listing(self.out_dir, [])

    def test_ir_fifo_as_input_file(self):
        model = self.model()
        outcome = self.sqdiff(["ir", model, "--input", "a=" + self.fifo, "--random", "1", "-o",
                               os.path.join(self.out_dir, "ir")])
        self.assert_error(outcome, self.fifo, "not a regular file")
        self.assert_listing(self.out_dir, [])


if __name__ == "__main__":
    unittest.main()
