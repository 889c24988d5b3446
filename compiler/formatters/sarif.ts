// `--format sarif`: SARIF 2.1.0 for code-scanning dashboards. Rules carry their description and docs path.
import { rulesById } from '../rules/index.js';
import { ruleDocsPath } from '../rule.js';
import type { Formatter } from './types.js';

/** A relative path as a SARIF `uri` (a URI reference): each segment percent-encoded, `/` kept. */
function uriOf(file: string): string {
  return file.split('/').map(encodeURIComponent).join('/');
}

export const formatSarif: Formatter = (report) => {
  const usedRuleIds = [...new Set(report.diagnostics.map((d) => d.ruleId))].sort();
  const sarif = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'capreg',
            informationUri: 'https://github.com/capreg/capreg',
            rules: usedRuleIds.map((id) => ({
              id,
              shortDescription: { text: rulesById.get(id)?.meta.description ?? id },
              helpUri: `https://github.com/capreg/capreg/blob/main/${ruleDocsPath(id)}`,
            })),
          },
        },
        results: report.diagnostics.map((d) => ({
          ruleId: d.ruleId,
          ruleIndex: usedRuleIds.indexOf(d.ruleId),
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
