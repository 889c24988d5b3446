// retired-tools: TODO(rule author) — replace this placeholder with the rule (see SPEC §3).
import type { Rule } from '../rule.js';

export const retiredTools: Rule = {
  meta: {
    id: 'retired-tools',
    description: 'TODO',
    defaultLevel: 'error',
    defaultOptions: {},
    messages: {},
  },
  check() {},
};
