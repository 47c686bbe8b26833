// Spec output for people, plus a small stats file that scripts/test.mjs sums.
const Mocha = require('mocha');
const { writeFileSync, mkdirSync } = require('node:fs');
const { dirname } = require('node:path');

class SplitpointReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const statsFile = options.reporterOption && options.reporterOption.statsFile;
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      if (!statsFile) return;
      const s = runner.stats;
      mkdirSync(dirname(statsFile), { recursive: true });
      writeFileSync(statsFile, JSON.stringify({ passed: s.passes, failed: s.failures, pending: s.pending }));
    });
  }
}
module.exports = SplitpointReporter;
