#include "common/interrupt.h"

#include <csignal>

#include "strata/error.h"

namespace strata {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;
struct sigaction g_old_int, g_old_term, g_old_hup;

void OnSignal(int signal_number) { g_interrupted = signal_number; }

}  // namespace

InterruptScope::InterruptScope() {
  g_interrupted = 0;
  struct sigaction action = {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &g_old_int);
  sigaction(SIGTERM, &action, &g_old_term);
  sigaction(SIGHUP, &action, &g_old_hup);
}

InterruptScope::~InterruptScope() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  sigaction(SIGHUP, &g_old_hup, nullptr);
}

void ThrowIfInterrupted() {
  if (g_interrupted != 0) {
    throw Error(Error::Kind::kInterrupted, g_interrupted == SIGINT   ? "interrupted (SIGINT)"
                                           : g_interrupted == SIGHUP ? "hung up (SIGHUP)"
                                                                     : "terminated (SIGTERM)");
  }
}

}  // namespace strata
