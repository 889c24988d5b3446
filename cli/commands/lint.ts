// capreg lint: parse, validate and lint every capability; print the diagnostics.
import type { Command } from '../context.js';
import { parseFlags } from '../command-table.js';
import { exitCodeFor, parseJobs, parseMaxWarnings, pickFormatter } from '../options.js';
import { startParseWorker } from '../parse-workers.js';
import { findRegistryRoot } from '../root.js';
import { formatTimings, timingsFromEnv } from '../timing.js';

export const lintCommand: Command = async (argv, context) => {
  const { values } = parseFlags('lint', argv);
  const formatter = await pickFormatter(values.format);
  const maxWarnings = parseMaxWarnings(values['max-warnings']);
  const jobs = parseJobs(values.jobs);
  const root = findRegistryRoot(context.cwd, values.root);
  const timings = timingsFromEnv(context.env);
  if (values.watch) {
    const { describeCompile, watchRegistry } = await import('../watch.js');
    return watchRegistry(
      root,
      {
        command: 'capreg lint',
        cache: !values['no-cache'],
        jobs,
        onCompile: (compiled, watchContext, elapsedMs) => {
          watchContext.stdout(formatter(compiled.result));
          watchContext.stderr(`capreg lint: ${describeCompile(compiled, elapsedMs)}\n`);
        },
      },
      context,
    );
  }
  // The parse worker loads its modules while this thread loads the compiler.
  startParseWorker();
  const { lintRoot } = await import('../compile-root.js');
  const result = await lintRoot(root, { cache: !values['no-cache'], jobs, timings });
  context.stdout(formatter(result));
  if (maxWarnings !== undefined && result.errorCount === 0 && result.warningCount > maxWarnings) {
    context.stderr(`capreg: too many warnings (${result.warningCount}, --max-warnings ${maxWarnings})\n`);
  }
  if (timings) {
    timings.mark('output');
    context.stderr(formatTimings(timings));
  }
  return exitCodeFor(result.errorCount, result.warningCount, maxWarnings);
};
