// `capreg eval` output: stylish (for a terminal), json (one object) and markdown (a pull-request
// comment). Pure: a report in, the exact text out.
import { markdownCode, markdownText, plainText } from '../formatters/escape.js';
import { fitting } from '../formatters/markdown.js';
import type { EvalReport, EvalScores, RequestResult } from './run.js';

export const EVAL_FORMATS = ['stylish', 'json', 'markdown'] as const;
export type EvalFormat = (typeof EVAL_FORMATS)[number];

const ratio = (value: number): string => value.toFixed(2);

function scoreLine(scores: EvalScores): string {
  return `recall@1 ${ratio(scores.recallAt1)}  recall@3 ${ratio(scores.recallAt3)}  MRR ${ratio(scores.mrr)}`;
}

/** What went wrong with a request, in words: where the capability ranked and what came first instead. */
export function missText(result: RequestResult): string {
  const first = result.ranking[0];
  const winner = first === undefined ? 'no capability matched' : `"${first}" came first`;
  if (result.kind === 'shouldNotMatch') return `shouldNotMatch request put "${result.capabilityId}" first`;
  const where = result.rank === null ? 'not found' : `ranked ${result.rank}`;
  return `shouldMatch request ${where} (expected in the top ${result.top}); ${winner}${
    result.ranking.length > 1
      ? ` (then ${result.ranking
          .slice(1)
          .map((id) => `"${id}"`)
          .join(', ')})`
      : ''
  }`;
}

function stylish(report: EvalReport): string {
  const lines: string[] = [];
  // A reduce, not Math.max(...): 200,000 capabilities overflowed the call's arguments (RangeError).
  const width = report.capabilities.reduce((widest, capability) => Math.max(widest, plainText(capability.id).length), 10);
  for (const capability of report.capabilities) {
    const counts = `${capability.shouldMatch} + ${capability.shouldNotMatch} requests`;
    lines.push(`${plainText(capability.id).padEnd(width)}  ${scoreLine(capability)}  ${counts}${capability.failed > 0 ? `  ${capability.failed} failed` : ''}`);
  }
  const misses = report.requests.filter((result) => !result.passed);
  if (misses.length > 0) lines.push('');
  for (const miss of misses) {
    lines.push(`${plainText(miss.file)}:${miss.line}:${miss.column}  ${plainText(JSON.stringify(miss.request))}`, `  ${plainText(missText(miss))}`);
  }
  const { total } = report;
  lines.push(
    '',
    `${total.shouldMatch + total.shouldNotMatch} requests of ${report.capabilities.length} capabilities: ${scoreLine(total)}; ${total.failed === 0 ? 'every expectation met' : `${total.failed} failed`}`,
  );
  return `${lines.join('\n')}\n`;
}

/**
 * Characters the capability rows and the misses may each take, so that the summary fits a
 * pull-request comment (GitHub: 65,536 characters): 700 generated capabilities made 42,795.
 */
const LIST_BUDGET = 28_000;

function markdown(report: EvalReport): string {
  const { total } = report;
  const rows = fitting(
    report.capabilities.map(
      (c) =>
        `| ${markdownCode(c.id, { cell: true })} | ${c.shouldMatch} + ${c.shouldNotMatch} | ${ratio(c.recallAt1)} | ${ratio(c.recallAt3)} | ${ratio(c.mrr)} | ${c.failed} |`,
    ),
    LIST_BUDGET,
  );
  const lines = [
    `### capreg routing evals: ${total.failed === 0 ? '✅ passed' : `❌ ${total.failed} failed`}`,
    '',
    '| Capability | Requests | recall@1 | recall@3 | MRR | Failed |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows.shown,
    ...(rows.more > 0 ? [`| … and ${rows.more} more (\`--format json\` lists them all) | | | | | |`] : []),
    `| **all** | ${total.shouldMatch} + ${total.shouldNotMatch} | ${ratio(total.recallAt1)} | ${ratio(total.recallAt3)} | ${ratio(total.mrr)} | ${total.failed} |`,
    '',
  ];
  const misses = report.requests.filter((result) => !result.passed);
  if (misses.length > 0) {
    const shown = fitting(
      misses.map((miss) => `| ${markdownText(miss.request)} | ${markdownCode(miss.capabilityId, { cell: true })} | ${markdownText(missText(miss))} |`),
      LIST_BUDGET,
    );
    lines.push('| Request | Capability | What happened |', '| --- | --- | --- |', ...shown.shown);
    if (shown.more > 0) lines.push('', `… and ${shown.more} more (\`--format json\` lists them all).`);
    lines.push('');
  }
  return `${lines.join('\n')}`;
}

export function formatEvalReport(report: EvalReport, format: EvalFormat): string {
  if (format === 'json') return `${JSON.stringify(report)}\n`;
  return format === 'markdown' ? markdown(report) : stylish(report);
}
