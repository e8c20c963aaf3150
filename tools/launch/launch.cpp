// dynasoar_launch: starts the ranks of a distributed program as processes
// on this host.
//
//   dynasoar_launch -n N [--timeout S] [--] program args...
//
// Each of the N children runs `program args...` with DYNASOAR_RANK (0 to
// N-1), DYNASOAR_RANKS (N) and DYNASOAR_RENDEZVOUS (a file in a fresh
// directory under $TMPDIR or /tmp, through which rank 0 hands NCCL's unique
// id to the others; nccl_transport.h). Everything else of the environment
// reaches the children unchanged: NCCL's settings, and the variables that
// keep NVLink multicast off where a machine sets them.
//
// The launcher waits for every child. When one fails (a non-zero exit or a
// signal), it writes the reason into the abort file beside the rendezvous
// file, so that the others' NCCL operations fail at once instead of at
// their deadline, and gives them the time limit to end; then it sends
// SIGTERM, and SIGKILL a few seconds later. It prints a line per failed
// rank and exits with 1; 0 when every rank succeeded, 2 for a wrong
// command line. SIGINT, SIGTERM and SIGHUP are passed on to the ranks.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// Time the ranks get to end after SIGTERM before SIGKILL.
constexpr double kKillGraceSeconds = 3.0;
// Added to DYNASOAR_DISTRIBUTED_TIMEOUT by default, so that the ranks
// report their own errors (at their deadline) before the launcher stops them.
constexpr double kReportSeconds = 10.0;

volatile sig_atomic_t g_signal = 0;

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g s", seconds);
  return text;
}

void on_signal(int sig) { g_signal = sig; }

void usage(std::FILE* to) {
  std::fputs(
      "usage: dynasoar_launch -n N [--timeout S] [--] program [args...]\n"
      "\n"
      "Starts N processes of `program args...`, rank r with DYNASOAR_RANK=r,\n"
      "DYNASOAR_RANKS=N and DYNASOAR_RENDEZVOUS=<a fresh file>; the rest of the\n"
      "environment is passed on unchanged. Waits for all of them.\n"
      "\n"
      "  -n N           number of ranks (>= 1)\n"
      "  --timeout S    after a rank fails, seconds the others get to end before\n"
      "                 they are stopped (default: DYNASOAR_DISTRIBUTED_TIMEOUT,\n"
      "                 or 120, plus 10)\n"
      "  -h, --help     this text\n"
      "\n"
      "Exit status: 0 when every rank exited with 0, 1 when one failed (a line\n"
      "per failed rank says how), 2 for a wrong command line.\n",
      to);
}

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr, "dynasoar_launch: %s\n(dynasoar_launch --help shows the usage)\n",
               what.c_str());
  std::exit(2);
}

std::optional<double> positive_number(const char* text) {
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || errno != 0 || !(v > 0)) return std::nullopt;
  return v;
}

struct Options {
  int ranks = 0;
  double timeout = 0;
  std::vector<char*> program;  // program and its arguments, null-terminated
};

Options parse(int argc, char** argv) {
  Options o;
  bool have_timeout = false;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      usage(stdout);
      std::exit(0);
    } else if (a == "--") {
      ++i;
      break;
    } else if (a == "-n" || a.rfind("-n", 0) == 0 || a.rfind("--ranks", 0) == 0) {
      std::string value;
      if (a == "-n" || a == "--ranks") {
        if (i + 1 >= argc) usage_error(a + " needs the number of ranks");
        value = argv[++i];
      } else if (a.rfind("--ranks=", 0) == 0) {
        value = a.substr(8);
      } else if (a.rfind("-n", 0) == 0 && a.size() > 2) {
        value = a.substr(2);
      } else {
        usage_error("unknown option '" + a + "'");
      }
      char* end = nullptr;
      const long n = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || n < 1 || n > 4096)
        usage_error("-n needs a number of ranks from 1 to 4096, not '" + value + "'");
      o.ranks = static_cast<int>(n);
    } else if (a == "--timeout" || a.rfind("--timeout=", 0) == 0) {
      std::string value;
      if (a == "--timeout") {
        if (i + 1 >= argc) usage_error("--timeout needs a number of seconds");
        value = argv[++i];
      } else {
        value = a.substr(10);
      }
      const auto v = positive_number(value.c_str());
      if (!v) usage_error("--timeout needs a number of seconds > 0, not '" + value + "'");
      o.timeout = *v;
      have_timeout = true;
    } else if (!a.empty() && a[0] == '-') {
      usage_error("unknown option '" + a + "'");
    } else {
      break;
    }
  }
  if (o.ranks == 0) usage_error("give the number of ranks with -n N");
  if (i >= argc) usage_error("no program to run");
  for (; i < argc; ++i) o.program.push_back(argv[i]);
  o.program.push_back(nullptr);
  if (!have_timeout) {
    const char* env = std::getenv("DYNASOAR_DISTRIBUTED_TIMEOUT");
    const auto v = positive_number(env);
    o.timeout = (v ? *v : 120.0) + kReportSeconds;
  }
  return o;
}

// A fresh directory of this user's for the rendezvous file.
std::string make_run_directory() {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  std::string pattern = base + "/dynasoar-launch-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr) {
    std::fprintf(stderr, "dynasoar_launch: cannot make a directory %s: %s\n", pattern.c_str(),
                 std::strerror(errno));
    std::exit(1);
  }
  return buffer.data();
}

// The abort file (DYNASOAR_RENDEZVOUS.abort): its first line tells the
// ranks why the run stops. The first writer wins (link fails where it exists).
void write_abort_file(const std::string& path, const std::string& why) {
  const std::string part = path + ".part" + std::to_string(::getpid());
  {
    std::ofstream out(part, std::ios::trunc);
    if (!out) return;
    out << why << '\n';
  }
  (void)::link(part.c_str(), path.c_str());
  (void)std::remove(part.c_str());
}

struct Child {
  pid_t pid = -1;
  bool running = false;
  bool failed = false;
  bool stopped = false;  // sent SIGTERM or SIGKILL by the launcher
  std::string how;       // "exited with code 3", "was killed by signal 9 (Killed)"
};

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = ::strsignal(sig);
    return "was killed by signal " + std::to_string(sig) + " (" + (name ? name : "?") + ")";
  }
  return "ended with status " + std::to_string(status);
}

void signal_all(std::vector<Child>& children, int sig) {
  for (Child& c : children)
    if (c.running) {
      // Each rank leads a process group of its own: the signal reaches
      // what it started too.
      (void)::kill(-c.pid, sig);
      (void)::kill(c.pid, sig);
    }
}

pid_t start_rank(const Options& o, int rank, const std::string& rendezvous) {
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::fprintf(stderr, "dynasoar_launch: fork failed for rank %d: %s\n", rank,
                 std::strerror(errno));
    return -1;
  }
  if (pid > 0) {
    (void)::setpgid(pid, pid);
    return pid;
  }
  // The child: a process group of its own, stopped when the launcher dies.
  (void)::setpgid(0, 0);
  (void)::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) std::_Exit(1);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) (void)::sigaction(sig, &dfl, nullptr);
  ::setenv("DYNASOAR_RANK", std::to_string(rank).c_str(), 1);
  ::setenv("DYNASOAR_RANKS", std::to_string(o.ranks).c_str(), 1);
  ::setenv("DYNASOAR_RENDEZVOUS", rendezvous.c_str(), 1);
  ::execvp(o.program[0], o.program.data());
  std::fprintf(stderr, "dynasoar_launch: rank %d: cannot run '%s': %s\n", rank, o.program[0],
               std::strerror(errno));
  std::_Exit(127);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const std::string directory = make_run_directory();
  const std::string rendezvous = directory + "/rendezvous";
  const std::string abort_file = rendezvous + ".abort";

  struct sigaction on {};
  on.sa_handler = on_signal;
  sigemptyset(&on.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) (void)::sigaction(sig, &on, nullptr);

  std::vector<Child> children(static_cast<std::size_t>(o.ranks));
  std::optional<Clock::time_point> failed_at;
  std::optional<Clock::time_point> terminated_at;
  bool killed = false;
  int running = 0;
  for (int r = 0; r < o.ranks; ++r) {
    Child& c = children[static_cast<std::size_t>(r)];
    c.pid = start_rank(o, r, rendezvous);
    if (c.pid < 0) {
      c.failed = true;
      c.how = "could not be started";
      write_abort_file(abort_file, "rank " + std::to_string(r) + " could not be started");
      if (!failed_at) failed_at = Clock::now();
      continue;
    }
    c.running = true;
    ++running;
  }

  int forwarded = 0;
  while (running > 0) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      for (std::size_t r = 0; r < children.size(); ++r) {
        Child& c = children[r];
        if (c.pid != pid || !c.running) continue;
        c.running = false;
        --running;
        const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (!ok) {
          c.failed = true;
          c.how = describe(status);
          write_abort_file(abort_file, "rank " + std::to_string(r) + " " + c.how);
          if (!failed_at) failed_at = Clock::now();
        }
      }
      continue;  // reap every child that has ended before sleeping
    }
    if (pid < 0 && errno != EINTR && errno != ECHILD) break;
    if (g_signal != 0 && g_signal != forwarded) {
      forwarded = g_signal;
      signal_all(children, forwarded);
      if (!failed_at) failed_at = Clock::now();
    }
    const auto now = Clock::now();
    if (failed_at && !terminated_at &&
        now - *failed_at > std::chrono::duration<double>(o.timeout)) {
      for (Child& c : children)
        if (c.running) c.stopped = true;
      signal_all(children, SIGTERM);
      terminated_at = now;
    }
    if (terminated_at && !killed &&
        now - *terminated_at > std::chrono::duration<double>(kKillGraceSeconds)) {
      signal_all(children, SIGKILL);
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

  std::error_code ignored;
  std::filesystem::remove_all(directory, ignored);

  bool any_failed = false;
  for (std::size_t r = 0; r < children.size(); ++r) {
    const Child& c = children[r];
    if (!c.failed) continue;
    any_failed = true;
    std::string line = "dynasoar_launch: rank " + std::to_string(r) + " " + c.how;
    if (c.stopped)
      line += " (stopped by the launcher: it had not ended " + seconds_text(o.timeout) +
              " after the first failure)";
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  if (g_signal != 0) return 128 + g_signal;
  return any_failed ? 1 : 0;
}
