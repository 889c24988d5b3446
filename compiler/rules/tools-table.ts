// tools-table: TODO(rule author) — replace this placeholder with the rule (see SPEC §3).
import type { Rule } from '../rule.js';

export const toolsTable: Rule = {
  meta: {
    id: 'tools-table',
    description: 'TODO',
    defaultLevel: 'error',
    defaultOptions: {},
    messages: {},
  },
  check() {},
};
