// evals-schema: a capability's routing evals (capabilities/<id>/evals.yaml) parse as YAML and match
// compiler/schema/evals.schema.json: `shouldMatch` (required), `shouldNotMatch`, `top`, each request
// a non-empty string within the length limit, at most the schema's number of requests per list.
// A file that fails is left out of `capreg eval` and of the gate's routing comparison.
import { evalsSchemaProblems } from '../evals/file.js';
import { ruleDocsUrl, type LintCapability, type Rule } from '../rule.js';

export const evalsSchema: Rule = {
  meta: {
    id: 'evals-schema',
    description: 'evals.yaml files parse as YAML and match the routing evals JSON Schema.',
    defaultLevel: 'error',
    reads: 'git',
    docs: { url: ruleDocsUrl('evals-schema') },
    defaultOptions: {},
    messages: {
      yaml: '{{message}}',
      schema: '{{message}}',
    },
  },
  check({ registry, report }) {
    // Each evals file's capability by folder, looked up once (a search per file is 10^8 steps at
    // 10,000), and only when a file has a problem.
    let byFolder: Map<string, LintCapability> | undefined;
    const about = (folder: string): { capability?: LintCapability } => {
      if (byFolder === undefined) {
        byFolder = new Map();
        for (const capability of registry.capabilities) if (!byFolder.has(capability.document.folder)) byFolder.set(capability.document.folder, capability);
      }
      const capability = byFolder.get(folder);
      return capability === undefined ? {} : { capability };
    };
    for (const parsed of registry.evals) {
      for (const problem of parsed.problems)
        report({ ...about(parsed.folder), file: parsed.file, range: problem.range, messageId: 'yaml', data: { message: problem.message } });
      if (parsed.problems.length > 0) continue;
      for (const problem of registry.derived.of(parsed, 'evals-schema', undefined, () => evalsSchemaProblems(parsed))) {
        report({ ...about(parsed.folder), file: parsed.file, range: problem.range, messageId: 'schema', data: { message: problem.message } });
      }
    }
  },
};
