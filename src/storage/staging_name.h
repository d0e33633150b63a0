// Names for the temporary siblings that outputs are written under before they are published
// (StagingDir, StagedFile): "<final>.strata-tmp-<pid>-XXXXXX". The writer's pid in the name is
// what lets a later run tell an abandoned sibling — its writer killed, the machine crashed —
// from one that a live process is still writing, and remove only the first kind, so a SIGKILL
// leaves no litter past the next run that writes the same output.
#pragma once

#include <string>

namespace strata {

// The mkstemp/mkdtemp template for a temporary sibling of `final_path` owned by this process.
std::string StagingTemplate(const std::string& final_path);

// Removes the temporary siblings of `final_path` whose writer is no longer running. Best
// effort: a sibling that cannot be removed stays, and the run goes on.
void RemoveAbandonedStaging(const std::string& final_path);

}  // namespace strata
