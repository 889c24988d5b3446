// `--format sarif`: SARIF 2.1.0 for code-scanning dashboards. Rules carry their description and docs page.
import { GATE_RULE_DESCRIPTIONS } from '../gate/compare.js';
import { rulesById } from '../rules/index.js';
import { REPOSITORY_URL, ruleDocsUrl } from '../rule.js';
import type { Formatter } from './types.js';

function describeRule(id: string): string {
  return rulesById.get(id)?.meta.description ?? GATE_RULE_DESCRIPTIONS[id] ?? id;
}

/** A relative path as a SARIF `uri` (a URI reference): each segment percent-encoded, `/` kept. */
function uriOf(file: string): string {
  return file.split('/').map(encodeURIComponent).join('/');
}

export const formatSarif: Formatter = (report) => {
  const usedRuleIds = [...new Set(report.diagnostics.map((d) => d.ruleId))].sort();
  const ruleIndex = new Map(usedRuleIds.map((id, index) => [id, index]));
  const sarif = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'capreg',
            informationUri: REPOSITORY_URL,
            rules: usedRuleIds.map((id) => ({
              id,
              shortDescription: { text: describeRule(id) },
              helpUri: rulesById.get(id)?.meta.docs.url ?? ruleDocsUrl(id),
            })),
          },
        },
        results: report.diagnostics.map((d) => ({
          ruleId: d.ruleId,
          ruleIndex: ruleIndex.get(d.ruleId),
          level: d.severity === 'error' ? 'error' : 'warning',
          message: { text: d.message },
          locations: [
            {
              physicalLocation: {
                artifactLocation: { uri: uriOf(d.file), uriBaseId: '%SRCROOT%' },
                region: { startLine: d.line, startColumn: d.column, endLine: d.endLine, endColumn: d.endColumn },
              },
            },
          ],
          ...(d.related
            ? {
                relatedLocations: [
                  {
                    id: 0,
                    message: { text: d.related.message },
                    physicalLocation: {
                      artifactLocation: { uri: uriOf(d.related.file), uriBaseId: '%SRCROOT%' },
                      region: { startLine: d.related.line, startColumn: d.related.column },
                    },
                  },
                ],
              }
            : {}),
        })),
      },
    ],
  };
  return `${JSON.stringify(sarif, null, 2)}\n`;
};
