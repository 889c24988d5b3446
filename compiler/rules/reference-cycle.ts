// reference-cycle: TODO(rule author) — replace this placeholder with the rule (see SPEC §3).
import type { Rule } from '../rule.js';

export const referenceCycle: Rule = {
  meta: {
    id: 'reference-cycle',
    description: 'TODO',
    defaultLevel: 'error',
    defaultOptions: {},
    messages: {},
  },
  check() {},
};
