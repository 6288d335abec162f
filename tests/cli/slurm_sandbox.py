#!/usr/bin/env python3
"""A throw-away single-node Slurm cluster on localhost, for testing the batch scripts for real.

munged, slurmctld and slurmd run in the foreground as children of this process, with every file (munge key
and socket, slurm.conf, state, spool, logs) in one temporary folder and free TCP ports picked at start, so
several sandboxes (or a real Slurm) on the same machine do not collide. Clients (sbatch, squeue, scontrol)
find it through SLURM_CONF, which `env()` provides.

The settings that make Slurm work without systemd, cgroups or a database (see the project's machine notes):
proctrack/linuxproc, task/none, jobacct_gather/none, accounting_storage/none, select/cons_tres with CR_CPU,
config_overrides (advertise more CPUs than the machine has), MpiDefault=pmix (Debian's Open MPI speaks PMIx
only) and kill_invalid_depend (a job whose afterok dependency failed is cancelled instead of pending forever).

    with SlurmSandbox(cpus=4) as slurm:
        subprocess.run(["sbatch", ...], env=slurm.env(), check=True)
        slurm.wait_for_jobs(["12", "13"], timeout=120)

`stop()` (also on any exception inside the `with`) cancels the jobs, stops the daemons, kills whatever they
started that is still alive (found by a marker in the process environment, never by name) and removes the
folder. Run this file directly for an interactive sandbox: it prints the SLURM_CONF to export and waits for
Ctrl-C.
"""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

DAEMONS = ("munged", "slurmctld", "slurmd")
ENV_MARKER = "RAD_SLURM_SANDBOX"


def MissingDaemons():
    """The Slurm/munge programs not on PATH (or in /usr/sbin): empty when a sandbox can start."""
    needed = DAEMONS + ("sbatch", "squeue", "scontrol", "srun")
    return [p for p in needed if FindProgram(p) is None]


def FindProgram(name):
    found = shutil.which(name)
    if found is None:
        for folder in ("/usr/sbin", "/usr/local/sbin", "/sbin"):
            if os.access(os.path.join(folder, name), os.X_OK):
                return os.path.join(folder, name)
    return found


def FreePort():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SlurmError(RuntimeError):
    pass


class SlurmSandbox:
    def __init__(self, cpus=4, node_name="radnode", keep_on_failure=False):
        self.cpus = cpus
        self.node_name = node_name
        self.keep_on_failure = keep_on_failure
        self.root = None
        self.procs = {}

    # --- life cycle ---------------------------------------------------------------------------------------
    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, exc_type, exc, tb):
        self.stop(failed=exc_type is not None)
        return False

    def start(self, timeout=30):
        missing = MissingDaemons()
        if missing:
            raise SlurmError("not installed: " + ", ".join(missing))
        # mkdtemp gives mode 700; munged insists on a key no one else can read and a socket folder others can
        # enter, so those two get their own modes below.
        self.root = tempfile.mkdtemp(prefix="rad-slurm-")
        for sub in ("munge", "state", "spool", "log"):
            os.mkdir(os.path.join(self.root, sub))
        os.chmod(self.root, 0o755)
        os.chmod(os.path.join(self.root, "munge"), 0o755)
        self.key = os.path.join(self.root, "munge", "munge.key")
        with open(self.key, "wb") as fh:
            fh.write(os.urandom(1024))
        os.chmod(self.key, 0o400)
        self.munge_socket = os.path.join(self.root, "munge", "munge.socket")
        self.conf = os.path.join(self.root, "slurm.conf")
        self._write_conf()

        self._spawn("munged", [FindProgram("munged"), "--foreground", "--force", "--key-file=" + self.key,
                               "--socket=" + self.munge_socket,
                               "--pid-file=" + os.path.join(self.root, "munge", "munged.pid"),
                               "--seed-file=" + os.path.join(self.root, "munge", "munged.seed"),
                               "--log-file=" + os.path.join(self.root, "log", "munged.log")])
        self._wait(lambda: os.path.exists(self.munge_socket), timeout, "munged's socket")
        self._spawn("slurmctld", [FindProgram("slurmctld"), "-D", "-i", "-f", self.conf])
        self._spawn("slurmd", [FindProgram("slurmd"), "-D", "-f", self.conf, "-N", self.node_name])
        self._wait(self._node_idle, timeout, "the node to become idle")

    def stop(self, failed=False):
        """Cancel every job, stop the daemons, kill leftovers, remove the folder. Safe to call twice."""
        if self.root is None:
            return
        try:
            if self.procs.get("slurmctld") and self.procs["slurmctld"].poll() is None:
                subprocess.run([FindProgram("scancel"), "--full", "--user", str(os.getuid())], env=self.env(),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)
                self._wait(lambda: not self.queue(), 15, "the queue to empty", raise_on_timeout=False)
        except (OSError, subprocess.SubprocessError):
            pass
        for name in ("slurmd", "slurmctld", "munged"):
            proc = self.procs.get(name)
            if proc is None or proc.poll() is not None:
                continue
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        self._kill_leftovers()
        if failed and self.keep_on_failure:
            print("slurm sandbox kept for inspection: " + self.root)
        else:
            shutil.rmtree(self.root, ignore_errors=True)
        self.root = None

    # --- use ----------------------------------------------------------------------------------------------
    def env(self, base=None):
        env = dict(os.environ if base is None else base)
        env["SLURM_CONF"] = self.conf
        env[ENV_MARKER] = self.root
        # Anything a caller's own Slurm session exported would point the clients at the wrong cluster/job.
        for key in list(env):
            if key.startswith(("SLURM_", "SBATCH_", "SRUN_", "SALLOC_")) and key != "SLURM_CONF":
                del env[key]
        return env

    def run(self, args, check=True, timeout=60):
        res = subprocess.run(args, env=self.env(), capture_output=True, text=True, timeout=timeout)
        if check and res.returncode != 0:
            raise SlurmError("%s failed (%d): %s%s" % (" ".join(args), res.returncode, res.stdout, res.stderr))
        return res

    def queue(self):
        """Ids of the jobs still queued or running."""
        res = self.run([FindProgram("squeue"), "-h", "-o", "%i"], check=False, timeout=10)
        return res.stdout.split() if res.returncode == 0 else []

    def job_state(self, job_id):
        """JobState from `scontrol show job` (finished jobs stay visible for MinJobAge seconds)."""
        return self.job_field(job_id, "JobState")

    def job_field(self, job_id, name):
        """A field of `scontrol show job` (JobState, Restarts, ...), or None."""
        res = self.run([FindProgram("scontrol"), "-o", "show", "job", str(job_id)], check=False, timeout=10)
        for field in res.stdout.split():
            if field.startswith(name + "="):
                return field.split("=", 1)[1]
        return None

    def wait_for_jobs(self, job_ids, timeout):
        """Waits until none of job_ids is pending or running; returns {id: final JobState}."""
        job_ids = [str(j) for j in job_ids]
        self._wait(lambda: not set(job_ids) & set(self.queue()), timeout,
                   "jobs %s to finish (logs in %s)" % (" ".join(job_ids), self.root))
        return {j: self.job_state(j) for j in job_ids}

    def log(self, name):
        path = os.path.join(self.root, "log", name + ".log")
        try:
            with open(path, errors="replace") as fh:
                return fh.read()
        except OSError:
            return ""

    # --- internals ----------------------------------------------------------------------------------------
    def _write_conf(self):
        host = socket.gethostname().split(".")[0]
        lines = [
            "ClusterName=radsandbox",
            "SlurmctldHost=%s(127.0.0.1)" % host,
            "SlurmctldPort=%d" % FreePort(),
            "SlurmdPort=%d" % FreePort(),
            "SlurmUser=%s" % _user_name(),
            "SlurmdUser=root" if os.getuid() == 0 else "SlurmdUser=%s" % _user_name(),
            "AuthType=auth/munge",
            "CredType=cred/munge",
            # A requeued job waits cred_expire seconds before it may start again (120 by default).
            "AuthInfo=socket=%s,cred_expire=10" % self.munge_socket,
            "StateSaveLocation=%s" % os.path.join(self.root, "state"),
            "SlurmdSpoolDir=%s" % os.path.join(self.root, "spool"),
            "SlurmctldPidFile=%s" % os.path.join(self.root, "slurmctld.pid"),
            "SlurmdPidFile=%s" % os.path.join(self.root, "slurmd.pid"),
            "SlurmctldLogFile=%s" % os.path.join(self.root, "log", "slurmctld.log"),
            "SlurmdLogFile=%s" % os.path.join(self.root, "log", "slurmd.log"),
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "SchedulerType=sched/builtin",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "SlurmdParameters=config_overrides",
            "MpiDefault=pmix",
            "DependencyParameters=kill_invalid_depend",
            "ReturnToService=2",
            "SlurmctldTimeout=30",
            "SlurmdTimeout=60",
            "InactiveLimit=0",
            "KillWait=5",
            "MinJobAge=120",
            "NodeName=%s NodeHostname=%s NodeAddr=127.0.0.1 CPUs=%d State=UNKNOWN" % (self.node_name, host, self.cpus),
            "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        ]
        with open(self.conf, "w") as fh:
            fh.write("\n".join(lines) + "\n")

    def _spawn(self, name, args):
        out = open(os.path.join(self.root, "log", name + ".stderr"), "w")
        env = self.env()
        self.procs[name] = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                            env=env, start_new_session=True, preexec_fn=_DieWithParent)
        out.close()

    def _node_idle(self):
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                raise SlurmError("%s exited with %d:\n%s\n%s" % (name, proc.returncode, self._stderr(name),
                                                                  self.log(name)[-3000:]))
        res = self.run([FindProgram("sinfo"), "-h", "-N", "-o", "%T"], check=False, timeout=10)
        return res.returncode == 0 and res.stdout.strip().rstrip("*") == "idle"

    def _stderr(self, name):
        try:
            with open(os.path.join(self.root, "log", name + ".stderr"), errors="replace") as fh:
                return fh.read()[-3000:]
        except OSError:
            return ""

    def _wait(self, ready, timeout, what, raise_on_timeout=True):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return True
            time.sleep(0.2)
        if raise_on_timeout:
            raise SlurmError("timed out after %g s waiting for %s\nslurmctld log:\n%s\nslurmd log:\n%s"
                             % (timeout, what, self.log("slurmctld")[-3000:], self.log("slurmd")[-3000:]))
        return False

    def _kill_leftovers(self):
        """Kill processes still carrying this sandbox's marker (job steps, slurmstepd), by pid."""
        marker = ("%s=%s" % (ENV_MARKER, self.root)).encode()
        me = os.getpid()
        for _ in range(3):
            found = []
            for pid in os.listdir("/proc"):
                if not pid.isdigit() or int(pid) == me:
                    continue
                try:
                    with open("/proc/%s/environ" % pid, "rb") as fh:
                        if marker in fh.read().split(b"\0"):
                            found.append(int(pid))
                except OSError:
                    continue
            if not found:
                return
            for pid in found:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.2)


def _DieWithParent():
    """In the daemon before exec: SIGTERM it when this process dies, even by SIGKILL (e.g. a test timeout),
    so that no daemon outlives the sandbox's owner. Linux only; elsewhere the daemons rely on stop()."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def _user_name():
    import pwd
    return pwd.getpwuid(os.getuid()).pw_name


if __name__ == "__main__":
    missing = MissingDaemons()
    if missing:
        raise SystemExit("slurm_sandbox: not installed: %s (Debian: apt-get install slurm-wlm munge)"
                         % ", ".join(missing))
    with SlurmSandbox() as sandbox:
        print("Slurm sandbox running. In another shell:\n  export SLURM_CONF=%s\nCtrl-C stops it and removes %s"
              % (sandbox.conf, sandbox.root), flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
