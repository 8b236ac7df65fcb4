// lplab account NAME=VALUE...: the accounting experiment, its parameters
// given as arguments.
#include "lplab/commands.h"
#include "lplab/experiments/runner.h"

namespace lplab::tool {

LPLAB_COMMAND(Command{"account",
                      "FLOPs, MFU and device-days: NAME=VALUE arguments (see 'lplab list accounting')",
                      {positional("params", "NAME=VALUE ...", false, true), output_option()},
                      [](const Args& a) {
                        const Output out = output_of(a);
                        RunRequest r;
                        r.experiment = "accounting";
                        r.params = parse_assignments(a.values("params"), "account");
                        run_experiment(r, out, "");
                        return 0;
                      }});

}  // namespace lplab::tool
