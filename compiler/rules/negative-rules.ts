// negative-rules: TODO(rule author) — replace this placeholder with the rule (see SPEC §3).
import type { Rule } from '../rule.js';

export const negativeRules: Rule = {
  meta: {
    id: 'negative-rules',
    description: 'TODO',
    defaultLevel: 'error',
    defaultOptions: {},
    messages: {},
  },
  check() {},
};
