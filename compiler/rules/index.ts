// Every rule, sorted by id. A rule is one file named after its id, with its docs in
// docs/rules/<id>.md and its table test in test/rules/<id>.test.ts (test/rules/registry.test.ts
// fails when one of the three is missing).
import type { AnyRule } from '../rule.js';
import { catalogReferences } from './catalog-references.js';
import { duplicateContent } from './duplicate-content.js';
import { evalsSchema } from './evals-schema.js';
import { foreignTools } from './foreign-tools.js';
import { frontmatterSchema } from './frontmatter-schema.js';
import { idMatchesFolder } from './id-matches-folder.js';
import { links } from './links.js';
import { markdownSyntax } from './markdown-syntax.js';
import { negativeRules } from './negative-rules.js';
import { referenceCycle } from './reference-cycle.js';
import { registryFiles } from './registry-files.js';
import { retiredTools } from './retired-tools.js';
import { stateMachine } from './state-machine.js';
import { tokenBudget } from './token-budget.js';
import { toolsTable } from './tools-table.js';
import { toolsetExists } from './toolset-exists.js';
import { toolsetsSchemaRule } from './toolsets-schema.js';
import { triggerCollision } from './trigger-collision.js';
import { unknownTools } from './unknown-tools.js';
import { whenToUse } from './when-to-use.js';

export const rules: readonly AnyRule[] = [
  catalogReferences,
  duplicateContent,
  evalsSchema,
  foreignTools,
  frontmatterSchema,
  idMatchesFolder,
  links,
  markdownSyntax,
  negativeRules,
  referenceCycle,
  registryFiles,
  retiredTools,
  stateMachine,
  tokenBudget,
  toolsTable,
  toolsetExists,
  toolsetsSchemaRule,
  triggerCollision,
  unknownTools,
  whenToUse,
];

export const rulesById: ReadonlyMap<string, AnyRule> = new Map(rules.map((rule) => [rule.meta.id, rule]));
