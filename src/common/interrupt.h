// InterruptScope turns SIGINT, SIGTERM and SIGHUP (a closed terminal) into a flag that long-running
// loops poll with ThrowIfInterrupted(), so that an interrupted import unwinds normally and its
// destructors remove every temporary file. The flag is process-wide because a signal handler can
// reach nothing else; outside a scope the default signal behaviour is restored.
#pragma once

namespace strata {

class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
};

// Throws Error(kInterrupted) once SIGINT, SIGTERM or SIGHUP has arrived inside an InterruptScope.
void ThrowIfInterrupted();

}  // namespace strata
