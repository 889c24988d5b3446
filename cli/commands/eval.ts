// capreg eval: run every capabilities/<id>/evals.yaml through the find_capabilities ranker over the
// whole catalog; print recall@1/@3, MRR per capability and each miss. Exit 1 when an expectation
// fails (or the registry has lint errors, which make the catalog unknown), 2 on usage errors.
import { EVAL_FORMATS, formatEvalReport, type EvalFormat } from '../../compiler/evals/format.js';
import { runEvals } from '../../compiler/evals/run.js';
import { parseFlags } from '../command-table.js';
import { UsageError, type Command } from '../context.js';
import { findRegistryRoot } from '../root.js';

function pickFormat(name: string | undefined): EvalFormat {
  const chosen = name ?? 'stylish';
  if ((EVAL_FORMATS as readonly string[]).includes(chosen)) return chosen as EvalFormat;
  throw new UsageError(`unknown --format "${chosen}"; expected one of ${EVAL_FORMATS.join(', ')}`);
}

export const evalCommand: Command = async (argv, context) => {
  const { values } = parseFlags('eval', argv);
  const format = pickFormat(values.format);
  const root = findRegistryRoot(context.cwd, values.root);
  const { compileRoot } = await import('../compile-root.js');
  const { result } = await compileRoot(root, { cache: !values['no-cache'] });
  if (result.errorCount > 0) {
    context.stderr(
      `capreg eval: the registry has ${result.errorCount} lint error${result.errorCount === 1 ? '' : 's'}; run \`capreg lint\` and fix them first\n`,
    );
    return 1;
  }
  const report = runEvals(result.registry);
  context.stdout(formatEvalReport(report, format));
  if (report.capabilities.length === 0) context.stderr('capreg eval: no capabilities/<id>/evals.yaml found; nothing was evaluated\n');
  return report.total.failed > 0 ? 1 : 0;
};
