// duplicate-content: TODO(rule author) — replace this placeholder with the rule (see SPEC §3).
import type { Rule } from '../rule.js';

export const duplicateContent: Rule = {
  meta: {
    id: 'duplicate-content',
    description: 'TODO',
    defaultLevel: 'warn',
    defaultOptions: {},
    messages: {},
  },
  check() {},
};
