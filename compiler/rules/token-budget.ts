// token-budget: TODO(rule author) — replace this placeholder with the rule (see SPEC §3).
import type { Rule } from '../rule.js';

export const tokenBudget: Rule = {
  meta: {
    id: 'token-budget',
    description: 'TODO',
    defaultLevel: 'warn',
    defaultOptions: {},
    messages: {},
  },
  check() {},
};
